// Image volumes (spec.volumes[].image, the ImageVolume feature, GA in 1.36): an OCI image the
// runtime mounts read-only into the containers that name it. The kubelet pulls it as it pulls a
// container's image (the pod's pull secrets, the volume's pullPolicy, the same back-off) and
// hands the runtime the resolved image in the CRI Mount (image, image_sub_path); nothing is
// mounted on the host (upstream's image volume plugin sets up nothing).
import type { Container, Pod, Volume } from 'kubernetes-types/core/v1.js';
import type { ImageSpec } from '../cri/generated/runtime/v1/ImageSpec.ts';
import type { Waiting } from '../container/types.ts';
import type { ImageEvent, ImagePuller } from './puller.ts';

/** core/v1 ImageVolumeSource (not in kubernetes-types yet). */
export interface ImageVolumeSource {
  reference?: string;
  pullPolicy?: string;
}

export const imageVolumeSource = (v: Volume): ImageVolumeSource | undefined => (v as Volume & { image?: ImageVolumeSource }).image;

/** One image volume pulled: the image for the runtime's mount, or why not, as a container image's pull reports it. */
export type ImageVolumePull = { spec: ImageSpec; waiting?: undefined } | { spec?: undefined; waiting: Waiting };

/**
 * Upstream's getImageVolumes: every image volume of the pod made present as a container image
 * is (EnsureImageExists with the volume's reference and pullPolicy), its events on the pod; the
 * back-off is per pod and volume. A failure is kept, to fail the containers that mount it.
 */
export async function pullImageVolumes(
  pod: Pod,
  images: Pick<ImagePuller, 'ensure'>,
  emit: (e: ImageEvent) => void,
  signal?: AbortSignal,
): Promise<Map<string, ImageVolumePull>> {
  const out = new Map<string, ImageVolumePull>();
  for (const v of pod.spec?.volumes ?? []) {
    const source = imageVolumeSource(v);
    if (!source) continue;
    const key = `${pod.metadata!.uid}/volume/${v.name}`;
    const pulled = await images.ensure({ image: source.reference, imagePullPolicy: source.pullPolicy }, key, emit, pod, signal);
    out.set(v.name, pulled.waiting ? { waiting: pulled.waiting } : { spec: imageVolumeSpec(pod, pulled.imageRef, source.reference ?? '') });
  }
  return out;
}

/** The CRI image of an image volume's mount, as upstream's getImageVolumes makes it: the resolved image, the name the user gave. */
export function imageVolumeSpec(pod: Pod, imageRef: string, reference: string): ImageSpec {
  return { image: imageRef, userSpecifiedImage: reference, annotations: { ...pod.metadata?.annotations } };
}

/** What a container gets of the pod's image volumes. */
export type ContainerImageVolumes =
  | { specs: Map<string, ImageSpec>; failed?: undefined }
  /** events: the container's "Error: <reason>" Failed events, one per mount of a volume that failed. */
  | { specs?: undefined; failed: Waiting; events: string[] };

/**
 * Pure: upstream's toKubeContainerImageVolumes: the images of the image volumes the container
 * mounts, by volume name. A mount of a volume whose pull failed fails the container with that
 * pull's reason and message (the last such mount's), so that it waits in ErrImagePull or
 * ImagePullBackOff as for its own image, with an "Error: <reason>" event per such mount.
 */
export function containerImageVolumes(c: Container, pulls: ReadonlyMap<string, ImageVolumePull>): ContainerImageVolumes {
  const specs = new Map<string, ImageSpec>();
  const events: string[] = [];
  let failed: Waiting | undefined;
  for (const m of c.volumeMounts ?? []) {
    const pull = pulls.get(m.name);
    if (!pull) continue;
    if (pull.waiting) {
      events.push(`Error: ${pull.waiting.reason}`);
      failed = pull.waiting;
    } else specs.set(m.name, pull.spec);
  }
  return failed ? { failed, events } : { specs };
}
