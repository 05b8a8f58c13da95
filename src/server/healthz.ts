// Upstream's healthz handler (k8s.io/apiserver/pkg/server/healthz) with the kubelet
// server's checks: ping, log and syncloop. /healthz withholds why a check failed;
// /healthz/NAME says it.
export interface CheckResult {
  name: string;
  error?: string;
}

export interface HealthzResponse {
  status: number;
  body: string;
}

/** Pure: the /healthz answer for the check results. */
export function healthzReport(results: CheckResult[], verbose: boolean): HealthzResponse {
  const lines = results.map((r) => (r.error === undefined ? `[+]${r.name} ok\n` : `[-]${r.name} failed: reason withheld\n`)).join('');
  if (results.some((r) => r.error !== undefined)) return { status: 500, body: `${lines}healthz check failed\n` };
  return { status: 200, body: verbose ? `${lines}healthz check passed\n` : 'ok' };
}

/** Pure: the /healthz/NAME answer; undefined when there is no such check. */
export function singleCheck(results: CheckResult[], name: string): HealthzResponse | undefined {
  const r = results.find((c) => c.name === name);
  if (!r) return undefined;
  return r.error === undefined ? { status: 200, body: 'ok' } : { status: 500, body: `internal server error: ${r.error}\n` };
}

/** The kubelet server's checks; `syncLoop` is the kubelet's own health (undefined when healthy). */
export function kubeletChecks(syncLoop: () => string | undefined): CheckResult[] {
  return [{ name: 'ping' }, { name: 'log' }, { name: 'syncloop', error: syncLoop() }];
}
