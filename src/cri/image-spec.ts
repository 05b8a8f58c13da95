/**
 * The name a container's image was given, from its listed CRI config (ListContainers'
 * ImageSpec): the pod's name for it (userSpecifiedImage), else the image field unless it is
 * the bare ID the kubelet created the container from. A runtime that keeps no
 * userSpecifiedImage (containerd 1.6) leaves '' for an ID: the caller falls back to the
 * status's first tag, as upstream's convertToKubeContainerStatus shows always.
 */
export function listedImage(spec: { image?: string; userSpecifiedImage?: string } | null | undefined): string {
  if (spec?.userSpecifiedImage) return spec.userSpecifiedImage;
  return spec?.image && !spec.image.startsWith('sha256:') ? spec.image : '';
}
