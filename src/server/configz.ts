// GET /configz: the effective KubeletConfiguration (file, then flags), as upstream's
// v1beta1 document (src/config/kubelet-config.ts toV1beta1: every mapped field under its
// upstream name, durations as Go prints them ("1m0s"), empty fields left out as omitempty
// does). Upstream's document carries no kind/apiVersion; this one does, so that
// `.kubeletconfig` can be saved and used as a --config file as is.
import { type KubeletConfig, toV1beta1 } from '../config/kubelet-config.ts';

/** Pure: the /configz body. */
export function configzDocument(c: KubeletConfig): { kubeletconfig: Record<string, unknown> } {
  return { kubeletconfig: { kind: 'KubeletConfiguration', apiVersion: 'kubelet.config.k8s.io/v1beta1', ...toV1beta1(c) } };
}
