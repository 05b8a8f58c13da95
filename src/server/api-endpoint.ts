// Where the kubelet API (:10250, TLS) listens. Upstream's startKubelet (cmd/kubelet/app/server.go)
// serves it only when enableServer is true; the read-only port (read-only.ts), the PodResources
// socket and the local healthz do not depend on it, and the serving certificate is still kept
// (its rotation runs in Kubelet.Run whatever the server does).
import type { KubeletConfig } from '../config/kubelet-config.ts';

/** Pure: where the kubelet API listens, or undefined when enableServer is false. */
export function apiEndpoint(c: Pick<KubeletConfig, 'address' | 'port' | 'enableServer'>): { address: string; port: number } | undefined {
  return c.enableServer ? { address: c.address, port: c.port } : undefined;
}
