// The kubelet's client-side limit on its apiserver requests (kubeAPIQPS, kubeAPIBurst), as
// client-go's rate limiter on upstream's kubeClient: a request waits for its token. Upstream
// gives heartbeats (node status, the Lease) a client without that limit and events one of their
// own (eventRecordQPS): src/kubelet wires those to the unlimited client.
import type { TokenBucket } from '../backoff/token-bucket.ts';
import { sleep } from '../backoff/backoff.ts';
import type { ApiClient } from './client.ts';

/** How long a request waited for its token, by its HTTP verb (client-go's rest_client_rate_limiter_duration_seconds). */
export type ThrottleObserver = (verb: string, seconds: number) => void;

export function rateLimited(api: ApiClient, bucket: Pick<TokenBucket, 'reserve'>, observe?: ThrottleObserver): ApiClient {
  // Within the burst a request goes at once: no timer turn on every call. Every request's wait
  // is observed, none too, as client-go's tryThrottle does.
  const inTurn = <T>(verb: string, request: () => Promise<T>) => {
    const waitMs = bucket.reserve();
    observe?.(verb, Math.max(0, waitMs) / 1000);
    return waitMs > 0 ? sleep(waitMs).then(request) : request();
  };
  return {
    get: (p) => inTurn('GET', () => api.get(p)),
    create: (p, b) => inTurn('POST', () => api.create(p, b)),
    replace: (p, b) => inTurn('PUT', () => api.replace(p, b)),
    patch: (p, b, t) => inTurn('PATCH', () => api.patch(p, b, t)),
    delete: (p, b) => inTurn('DELETE', () => api.delete(p, b)),
    // A watch takes a token to begin, as any request; its events then stream without more.
    watch: (p, onEvent, signal) => inTurn('GET', () => api.watch(p, onEvent, signal)),
    reload: (conn) => api.reload(conn),
    watchList: api.watchList ?? false,
  };
}
