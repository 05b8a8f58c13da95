// Where a pod start's time goes, for both kubelets alike: the histograms both export under
// upstream's names (kubelet_runtime_operations_duration_seconds by operation_type, and the
// pod start SLI), read from each kubelet's /metrics through the apiserver's node proxy before
// and after a run. The difference is the run's: calls per pod and mean time per call.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ROOT } from './lib.ts';

const execFileP = promisify(execFile);

/** A histogram's sum (seconds) and count, by its label set (`operation_type="run_podsandbox"`). */
export type Histograms = Map<string, { sum: number; count: number }>;

/** Pure: the _sum and _count series of one histogram in Prometheus' text format, by label set. */
export function histograms(text: string, metric: string): Histograms {
  const out: Histograms = new Map();
  const re = new RegExp(`^${metric}_(sum|count)(?:\\{([^}]*)\\})? (\\S+)$`, 'gm');
  for (const m of text.matchAll(re)) {
    const key = m[2] ?? '';
    const h = out.get(key) ?? { sum: 0, count: 0 };
    h[m[1] as 'sum' | 'count'] = Number(m[3]);
    out.set(key, h);
  }
  return out;
}

export interface Phase {
  /** The label set, as the metric names it. */
  what: string;
  perPod: number;
  meanMs: number;
}

/** Pure: what happened between two readings, per pod of the run, busiest first; series that did not move are left out. */
export function phases(before: Histograms, after: Histograms, pods: number): Phase[] {
  const out: Phase[] = [];
  for (const [what, a] of after) {
    const b = before.get(what) ?? { sum: 0, count: 0 };
    const count = a.count - b.count;
    if (count <= 0) continue;
    out.push({ what, perPod: count / pods, meanMs: ((a.sum - b.sum) / count) * 1000 });
  }
  return out.sort((x, y) => y.perPod * y.meanMs - x.perPod * x.meanMs);
}

/**
 * Pure: first seen -> Running in its sync, ms a pod, from kubelet_pod_start_duration_seconds's
 * change over the run (`started`) and the mean first seen -> worker started. Upstream's
 * SyncPod observes that histogram at a pod's first sync too (`!ok || existing Pending && now
 * Running`, kubelet.go), so it holds about two observations a pod; each extra one is about its
 * worker's start, which is taken off the pod's sum. kubelet-ts observes once a pod: the mean.
 */
export function seenToRunningMs(started: Phase | undefined, seenToWorkerMs: number): number {
  if (!started) return NaN;
  const extra = Math.max(0, started.perPod - 1);
  return started.perPod * started.meanMs - extra * (Number.isFinite(seenToWorkerMs) ? seenToWorkerMs : 0);
}

/** The node's kubelet's /metrics, through the apiserver (GET nodes/<node>/proxy/metrics). */
export async function nodeMetrics(node: string): Promise<string> {
  const { stdout } = await execFileP(
    `${ROOT}/_output/bin/kubectl`,
    ['--kubeconfig', `${ROOT}/_output/local/admin.kubeconfig`, 'get', '--raw', `/api/v1/nodes/${node}/proxy/metrics`],
    { maxBuffer: 64 << 20 },
  );
  return stdout;
}
