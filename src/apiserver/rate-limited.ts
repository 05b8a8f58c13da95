// The kubelet's client-side limit on its apiserver requests (kubeAPIQPS, kubeAPIBurst), as
// client-go's rate limiter on upstream's kubeClient: a request waits for its token. Upstream
// gives heartbeats (node status, the Lease) a client without that limit and events one of their
// own (eventRecordQPS): src/kubelet wires those to the unlimited client.
import type { TokenBucket } from '../backoff/token-bucket.ts';
import { sleep } from '../backoff/backoff.ts';
import type { ApiClient } from './client.ts';

export function rateLimited(api: ApiClient, bucket: Pick<TokenBucket, 'reserve'>): ApiClient {
  // Within the burst a request goes at once: no timer turn on every call.
  const inTurn = <T>(request: () => Promise<T>) => {
    const waitMs = bucket.reserve();
    return waitMs > 0 ? sleep(waitMs).then(request) : request();
  };
  return {
    get: (p) => inTurn(() => api.get(p)),
    create: (p, b) => inTurn(() => api.create(p, b)),
    replace: (p, b) => inTurn(() => api.replace(p, b)),
    patch: (p, b, t) => inTurn(() => api.patch(p, b, t)),
    delete: (p, b) => inTurn(() => api.delete(p, b)),
    // A watch takes a token to begin, as any request; its events then stream without more.
    watch: (p, onEvent, signal) => inTurn(() => api.watch(p, onEvent, signal)),
    reload: (conn) => api.reload(conn),
    watchList: api.watchList ?? false,
  };
}
