// /metrics/resource: the few series metrics-server and `kubectl top` read, under
// upstream's names: node, pod and container CPU time, memory working set and swap, with the
// sample time. Upstream builds them from the Summary (resourceMetricsCollector); so does this,
// from the shared stats cache (no runtime call of its own).
import type { Summary } from './summary-types.ts';

const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const ms = (time: string) => Date.parse(time);

type PodStats = Summary['pods'][number];
/** Whose series a family has, and what each of them is. */
interface Stats {
  node: Summary['node'];
  pod: PodStats;
  container: PodStats['containers'][number];
}
type Scope = keyof Stats;
/** One series' value and timestamp (none: untimestamped); undefined: no series. */
type Sample = [value: number, timeMs?: number] | undefined;
const timed = (s: { time: string } | undefined, v: number | undefined): Sample => (s && v !== undefined ? [v, ms(s.time)] : undefined);
const seconds = (ns: number | undefined) => (ns === undefined ? undefined : ns / 1e9);

/**
 * Each family, in name order as the registry gathers them: whose it is (the node's, each pod's or
 * each container's) and its value of one (none: no series for it).
 */
type Family<S extends Scope> = { name: string; type: 'counter' | 'gauge'; help: string; scope: S; value: (x: Stats[S]) => Sample };
const family = <S extends Scope>(f: Family<S>) => f as unknown as Family<Scope>;
const FAMILIES: Family<Scope>[] = [
  family({
    name: 'container_cpu_usage_seconds_total',
    type: 'counter',
    help: '[STABLE] Cumulative cpu time consumed by the container in core-seconds',
    scope: 'container',
    value: (c) => timed(c.cpu, seconds(c.cpu?.usageCoreNanoSeconds)),
  }),
  family({
    name: 'container_memory_working_set_bytes',
    type: 'gauge',
    help: '[STABLE] Current working set of the container in bytes',
    scope: 'container',
    value: (c) => timed(c.memory, c.memory?.workingSetBytes),
  }),
  family({
    // Untimestamped, and none for a container without a start (collectContainerStartTime).
    name: 'container_start_time_seconds',
    type: 'gauge',
    help: '[STABLE] Start time of the container since unix epoch in seconds',
    scope: 'container',
    value: (c) => (ms(c.startTime) > 0 ? [ms(c.startTime) / 1000] : undefined),
  }),
  family({
    // The swap limit is what is available plus what is used (collectContainerSwapMetrics).
    name: 'container_swap_limit_bytes',
    type: 'gauge',
    help: '[ALPHA] Current amount of the container swap limit in bytes. Reported only on non-windows systems',
    scope: 'container',
    value: (c) =>
      timed(c.swap, c.swap?.swapAvailableBytes === undefined ? undefined : c.swap.swapAvailableBytes + (c.swap.swapUsageBytes ?? 0)),
  }),
  family({
    name: 'container_swap_usage_bytes',
    type: 'gauge',
    help: '[ALPHA] Current amount of the container swap usage in bytes. Reported only on non-windows systems',
    scope: 'container',
    value: (c) => timed(c.swap, c.swap?.swapUsageBytes),
  }),
  family({
    name: 'node_cpu_usage_seconds_total',
    type: 'counter',
    help: '[STABLE] Cumulative cpu time consumed by the node in core-seconds',
    scope: 'node',
    value: (n) => timed(n.cpu, seconds(n.cpu?.usageCoreNanoSeconds)),
  }),
  family({
    name: 'node_memory_working_set_bytes',
    type: 'gauge',
    help: '[STABLE] Current working set of the node in bytes',
    scope: 'node',
    value: (n) => timed(n.memory, n.memory?.workingSetBytes),
  }),
  family({
    name: 'node_swap_usage_bytes',
    type: 'gauge',
    help: '[ALPHA] Current swap usage of the node in bytes. Reported only on non-windows systems',
    scope: 'node',
    value: (n) => timed(n.swap, n.swap?.swapUsageBytes),
  }),
  family({
    name: 'pod_cpu_usage_seconds_total',
    type: 'counter',
    help: '[STABLE] Cumulative cpu time consumed by the pod in core-seconds',
    scope: 'pod',
    value: (p) => timed(p.cpu, seconds(p.cpu?.usageCoreNanoSeconds)),
  }),
  family({
    name: 'pod_memory_working_set_bytes',
    type: 'gauge',
    help: '[STABLE] Current working set of the pod in bytes',
    scope: 'pod',
    value: (p) => timed(p.memory, p.memory?.workingSetBytes),
  }),
  family({
    name: 'pod_swap_usage_bytes',
    type: 'gauge',
    help: '[ALPHA] Current amount of the pod swap usage in bytes. Reported only on non-windows systems',
    scope: 'pod',
    value: (p) => timed(p.swap, p.swap?.swapUsageBytes),
  }),
];

/**
 * Pure: the exposition text; a family without series is left out, as the registry leaves it.
 * undefined summary (the runtime could not be asked): resource_scrape_error 1 alone. Upstream's
 * ALPHA scrape_error, deprecated since 1.29, is hidden there and so absent here.
 */
export function renderResourceMetrics(summary: Summary | undefined): string {
  const out: string[] = [];
  // The node, each pod and each container, with their series' labels.
  const pods = summary?.pods ?? [];
  const subjects: { [S in Scope]: [labels: string, stats: Stats[S]][] } = {
    node: summary ? [['', summary.node]] : [],
    pod: pods.map((p) => [`{namespace="${esc(p.podRef.namespace)}",pod="${esc(p.podRef.name)}"}`, p]),
    container: pods.flatMap((p) =>
      p.containers.map((c): [string, Stats['container']] => [
        `{container="${esc(c.name)}",namespace="${esc(p.podRef.namespace)}",pod="${esc(p.podRef.name)}"}`,
        c,
      ]),
    ),
  };
  for (const f of FAMILIES) {
    const rows = subjects[f.scope].flatMap(([labels, x]) => {
      const v = f.value(x);
      return v ? [`${f.name}${labels} ${v[0]}${v[1] === undefined ? '' : ` ${v[1]}`}`] : [];
    });
    if (rows.length) out.push(`# HELP ${f.name} ${f.help}`, `# TYPE ${f.name} ${f.type}`, ...rows);
  }
  out.push(
    '# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise',
    '# TYPE resource_scrape_error gauge',
    `resource_scrape_error ${summary ? 0 : 1}`,
  );
  return out.join('\n') + '\n';
}
