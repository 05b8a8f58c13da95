// hostPath (upstream's pkg/volume/hostpath): a path of the node, checked (and made) as its type
// says; nothing under the pod's directory. Serves a pod's inline hostPath volume and a hostPath
// PersistentVolume alike, as upstream's.
import type { PersistentPath, VolumePlugin } from './plugin.ts';
import { setUpHostPath } from '../host-path.ts';
import { HOST_PATH } from './names.ts';

export const hostPathPlugin: VolumePlugin<unknown> = {
  name: HOST_PATH,
  canSupport: (s) => !!(s.pv ? s.pv.spec?.hostPath : s.volume.hostPath),
  async setUp(_host, _pod, s): Promise<PersistentPath> {
    if (!s.pv) {
      setUpHostPath(s.volume.hostPath!);
      return { path: s.volume.hostPath!.path, readOnly: false };
    }
    setUpHostPath(s.pv.spec!.hostPath!);
    return { path: s.pv.spec!.hostPath!.path, readOnly: s.readOnly, block: s.pv.spec?.volumeMode === 'Block' };
  },
};
