// configMap (upstream's pkg/volume/configmap): the ConfigMap's keys as files, rewritten while the
// pod runs. On disk, not a tmpfs, as upstream.
import { DEFAULT_MODE } from '../payload.ts';
import { configMapFiles, setUpApiData } from './api-data.ts';
import { CONFIG_MAP } from './names.ts';
import type { VolumePlugin } from './plugin.ts';
import type { PodVolumeHost } from './pod-host.ts';

export const configMapPlugin: VolumePlugin<PodVolumeHost> = {
  name: CONFIG_MAP,
  canSupport: (s) => !s.pv && !!s.volume.configMap,
  requiresRemount: true,
  setUp: (host, pod, { volume: v }) =>
    setUpApiData(host, pod, v, CONFIG_MAP, false, () => configMapFiles(host, pod, v.configMap!, v.configMap!.defaultMode ?? DEFAULT_MODE)),
};
