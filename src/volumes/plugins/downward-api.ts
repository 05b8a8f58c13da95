// downwardAPI (upstream's pkg/volume/downwardapi): the pod's fields and its containers' resources
// as files on a tmpfs, rewritten while the pod runs.
import { DEFAULT_MODE, downwardAPIPayload } from '../payload.ts';
import { setUpApiData } from './api-data.ts';
import { DOWNWARD_API } from './names.ts';
import type { VolumePlugin } from './plugin.ts';
import type { PodVolumeHost } from './pod-host.ts';

export const downwardAPIPlugin: VolumePlugin<PodVolumeHost> = {
  name: DOWNWARD_API,
  canSupport: (s) => !s.pv && !!s.volume.downwardAPI,
  requiresRemount: true,
  setUp: (host, pod, { volume: v }) =>
    setUpApiData(host, pod, v, DOWNWARD_API, true, async () =>
      downwardAPIPayload(pod, v.downwardAPI!.items, v.downwardAPI!.defaultMode ?? DEFAULT_MODE, host.allocatable() ?? {}),
    ),
};
