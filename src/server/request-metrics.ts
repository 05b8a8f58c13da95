// Labels of kubelet_http_requests_total, _duration_seconds and _inflight_requests, as upstream's
// Server.ServeHTTP computes them (pkg/kubelet/server/server.go): the path's root (two segments
// under /metrics) when that server registered it (addMetricsBucketMatcher), "other" for paths
// and methods it does not serve, so that a scanner cannot blow up the series; server_type
// "readonly" on the read-only port (the server without auth), "readwrite" on :10250.
export interface RequestLabels {
  method: string;
  path: string;
  server_type: string;
  long_running: string;
}

export type ServerType = 'readwrite' | 'readonly';

const READWRITE_BUCKETS = new Set([
  'flagz',
  'statusz',
  'healthz',
  'pods',
  'stats',
  'metrics',
  'metrics/cadvisor',
  'metrics/probes',
  'metrics/resource',
  'run',
  'exec',
  'attach',
  'portForward',
  'containerLogs',
  'configz',
  'runningpods',
  'checkpoint',
  'pprof',
  'logs',
  'debug',
]);
// The read-only server: InstallAuthNotRequiredHandlers and InstallDebuggingDisabledHandlers only,
// so none of the paths only the authenticated server registers.
const READWRITE_ONLY = ['flagz', 'statusz', 'configz', 'checkpoint', 'debug'];
const READONLY_BUCKETS = new Set([...READWRITE_BUCKETS].filter((b) => !READWRITE_ONLY.includes(b)));
const METHOD_BUCKETS = new Set(['OPTIONS', 'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'TRACE', 'CONNECT']);
// Upstream spells it "portforward", so /portForward/ requests count as not long-running there; kept for equal series.
const LONG_RUNNING = new Set(['exec', 'attach', 'portforward', 'debug']);

/** Pure. */
export function requestLabels(method: string, url: string, serverType: ServerType = 'readwrite'): RequestLabels {
  const parts = url.split('?', 1)[0]!.replace(/^\//, '').split('/', 3);
  const root = parts[0] === 'metrics' && parts.length > 1 ? `metrics/${parts[1]}` : parts[0]!;
  const path = (serverType === 'readonly' ? READONLY_BUCKETS : READWRITE_BUCKETS).has(root) ? root : 'other';
  return {
    method: METHOD_BUCKETS.has(method) ? method : 'other',
    path,
    server_type: serverType,
    long_running: String(LONG_RUNNING.has(path)),
  };
}
