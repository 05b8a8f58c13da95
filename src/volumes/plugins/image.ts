// image volumes (upstream's pkg/volume/image): nothing on the host; the image is pulled with the
// containers' and mounted by the runtime (src/images/image-volumes.ts).
import { imageVolumeSource } from '../../images/image-volumes.ts';
import { IMAGE } from './names.ts';
import type { VolumePlugin } from './plugin.ts';

export const imagePlugin: VolumePlugin<unknown> = {
  name: IMAGE,
  canSupport: (s) => !s.pv && !!imageVolumeSource(s.volume),
  setUp: async () => ({ path: '', readOnly: true, image: true }),
};
