// secret (upstream's pkg/volume/secret): the Secret's keys as files on a tmpfs, rewritten while
// the pod runs.
import { DEFAULT_MODE } from '../payload.ts';
import { secretFiles, setUpApiData } from './api-data.ts';
import { SECRET } from './names.ts';
import type { VolumePlugin } from './plugin.ts';
import type { PodVolumeHost } from './pod-host.ts';

export const secretPlugin: VolumePlugin<PodVolumeHost> = {
  name: SECRET,
  canSupport: (s) => !s.pv && !!s.volume.secret,
  requiresRemount: true,
  setUp: (host, pod, { volume: v }) => {
    const s = v.secret!;
    return setUpApiData(host, pod, v, SECRET, true, () =>
      secretFiles(host, pod, { name: s.secretName!, items: s.items, optional: s.optional }, s.defaultMode ?? DEFAULT_MODE),
    );
  },
};
