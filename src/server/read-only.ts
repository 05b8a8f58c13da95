// The read-only port. Upstream's startKubelet (cmd/kubelet/app/server.go) runs
// ListenAndServeKubeletReadOnlyServer (pkg/kubelet/server/server.go) when
// KubeletConfiguration.readOnlyPort > 0: plain HTTP on address:readOnlyPort, with neither
// authentication nor authorization, serving only the default handlers (server.ts
// readOnlyKubeletServer). 0, the default, serves nothing.
import type { KubeletConfig } from '../config/kubelet-config.ts';

/** Pure: where the read-only server listens, or undefined when it is not served. */
export function readOnlyEndpoint(c: Pick<KubeletConfig, 'address' | 'readOnlyPort'>): { address: string; port: number } | undefined {
  return c.readOnlyPort > 0 ? { address: c.address, port: c.readOnlyPort } : undefined;
}
