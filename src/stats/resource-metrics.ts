// /metrics/resource: the few series metrics-server and `kubectl top` read, under
// upstream's names: node, pod and container CPU time, memory working set and swap, with the
// sample time. Upstream builds them from the Summary (resourceMetricsCollector); so does this,
// from the shared stats cache (no runtime call of its own).
import type { Summary } from './summary-types.ts';

const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const ms = (time: string) => Date.parse(time);

type PodStats = Summary['pods'][number];
type ContainerStats = PodStats['containers'][number];
/** One series: its labels, value and timestamp (none: untimestamped). */
type Row = [labels: string, value: number, timeMs?: number];
const timed = (s: { time: string } | undefined, v: number | undefined): Row[] => (s && v !== undefined ? [['', v, ms(s.time)]] : []);
const seconds = (ns: number | undefined) => (ns === undefined ? undefined : ns / 1e9);

/** Each family, in name order as the registry gathers them, and its series of a node, pod or container. */
const FAMILIES: {
  name: string;
  type: 'counter' | 'gauge';
  help: string;
  node?: (n: Summary['node']) => Row[];
  pod?: (p: PodStats) => Row[];
  container?: (c: ContainerStats) => Row[];
}[] = [
  {
    name: 'container_cpu_usage_seconds_total',
    type: 'counter',
    help: '[STABLE] Cumulative cpu time consumed by the container in core-seconds',
    container: (c) => timed(c.cpu, seconds(c.cpu?.usageCoreNanoSeconds)),
  },
  {
    name: 'container_memory_working_set_bytes',
    type: 'gauge',
    help: '[STABLE] Current working set of the container in bytes',
    container: (c) => timed(c.memory, c.memory?.workingSetBytes),
  },
  {
    // Untimestamped, and none for a container without a start (collectContainerStartTime).
    name: 'container_start_time_seconds',
    type: 'gauge',
    help: '[STABLE] Start time of the container since unix epoch in seconds',
    container: (c) => (ms(c.startTime) > 0 ? [['', ms(c.startTime) / 1000]] : []),
  },
  {
    // The swap limit is what is available plus what is used (collectContainerSwapMetrics).
    name: 'container_swap_limit_bytes',
    type: 'gauge',
    help: '[ALPHA] Current amount of the container swap limit in bytes. Reported only on non-windows systems',
    container: (c) =>
      timed(c.swap, c.swap?.swapAvailableBytes === undefined ? undefined : c.swap.swapAvailableBytes + (c.swap.swapUsageBytes ?? 0)),
  },
  {
    name: 'container_swap_usage_bytes',
    type: 'gauge',
    help: '[ALPHA] Current amount of the container swap usage in bytes. Reported only on non-windows systems',
    container: (c) => timed(c.swap, c.swap?.swapUsageBytes),
  },
  {
    name: 'node_cpu_usage_seconds_total',
    type: 'counter',
    help: '[STABLE] Cumulative cpu time consumed by the node in core-seconds',
    node: (n) => timed(n.cpu, seconds(n.cpu?.usageCoreNanoSeconds)),
  },
  {
    name: 'node_memory_working_set_bytes',
    type: 'gauge',
    help: '[STABLE] Current working set of the node in bytes',
    node: (n) => timed(n.memory, n.memory?.workingSetBytes),
  },
  {
    name: 'node_swap_usage_bytes',
    type: 'gauge',
    help: '[ALPHA] Current swap usage of the node in bytes. Reported only on non-windows systems',
    node: (n) => timed(n.swap, n.swap?.swapUsageBytes),
  },
  {
    name: 'pod_cpu_usage_seconds_total',
    type: 'counter',
    help: '[STABLE] Cumulative cpu time consumed by the pod in core-seconds',
    pod: (p) => timed(p.cpu, seconds(p.cpu?.usageCoreNanoSeconds)),
  },
  {
    name: 'pod_memory_working_set_bytes',
    type: 'gauge',
    help: '[STABLE] Current working set of the pod in bytes',
    pod: (p) => timed(p.memory, p.memory?.workingSetBytes),
  },
  {
    name: 'pod_swap_usage_bytes',
    type: 'gauge',
    help: '[ALPHA] Current amount of the pod swap usage in bytes. Reported only on non-windows systems',
    pod: (p) => timed(p.swap, p.swap?.swapUsageBytes),
  },
];

/**
 * Pure: the exposition text; a family without series is left out, as the registry leaves it.
 * undefined summary (the runtime could not be asked): resource_scrape_error 1 alone. Upstream's
 * ALPHA scrape_error, deprecated since 1.29, is hidden there and so absent here.
 */
export function renderResourceMetrics(summary: Summary | undefined): string {
  const out: string[] = [];
  for (const f of summary ? FAMILIES : []) {
    const rows: Row[] = [
      ...(f.container
        ? summary!.pods.flatMap((p) =>
            p.containers.flatMap((c) =>
              f.container!(c).map(
                ([, v, t]): Row => [
                  `{container="${esc(c.name)}",namespace="${esc(p.podRef.namespace)}",pod="${esc(p.podRef.name)}"}`,
                  v,
                  t,
                ],
              ),
            ),
          )
        : []),
      ...(f.node ? f.node(summary!.node) : []),
      ...(f.pod
        ? summary!.pods.flatMap((p) =>
            f.pod!(p).map(([, v, t]): Row => [`{namespace="${esc(p.podRef.namespace)}",pod="${esc(p.podRef.name)}"}`, v, t]),
          )
        : []),
    ];
    if (!rows.length) continue;
    out.push(`# HELP ${f.name} ${f.help}`, `# TYPE ${f.name} ${f.type}`);
    for (const [labels, v, t] of rows) out.push(`${f.name}${labels} ${v}${t === undefined ? '' : ` ${t}`}`);
  }
  out.push(
    '# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise',
    '# TYPE resource_scrape_error gauge',
    `resource_scrape_error ${summary ? 0 : 1}`,
  );
  return out.join('\n') + '\n';
}
