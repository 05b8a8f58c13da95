// /metrics/resource: the few series metrics-server and `kubectl top` read, under
// upstream's names: node, pod and container CPU time and memory working set, with the
// sample time. Upstream builds them from the Summary's CPU and memory part; so does this,
// from the shared stats cache (no runtime call of its own).
import type { Summary } from './summary-types.ts';

const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const ms = (time: string) => Date.parse(time);

/** Pure: the exposition text; undefined summary (the runtime could not be asked): scrape_error 1. */
export function renderResourceMetrics(summary: Summary | undefined): string {
  const out: string[] = [];
  const series = (name: string, type: string, help: string, rows: [string, number, number][]) => {
    out.push(`# HELP ${name} [STABLE] ${help}`, `# TYPE ${name} ${type}`);
    for (const [lbl, v, ts] of rows) out.push(`${name}${lbl} ${v} ${ts}`);
  };
  const node = summary?.node;
  const pods = summary?.pods ?? [];
  const containers = pods.flatMap((p) =>
    p.containers.map((c) => ({
      c,
      lbl: `{container="${esc(c.name)}",namespace="${esc(p.podRef.namespace)}",pod="${esc(p.podRef.name)}"}`,
    })),
  );
  const podLbl = (p: Summary['pods'][number]) => `{namespace="${esc(p.podRef.namespace)}",pod="${esc(p.podRef.name)}"}`;
  const rows = <T>(xs: T[], pick: (x: T) => [string, { time: string } | undefined, number | undefined]): [string, number, number][] =>
    xs.flatMap((x) => {
      const [l, s, v] = pick(x);
      return s && v !== undefined ? [[l, v, ms(s.time)] as [string, number, number]] : [];
    });

  series(
    'container_cpu_usage_seconds_total',
    'counter',
    'Cumulative cpu time consumed by the container in core-seconds',
    rows(containers, ({ c, lbl }) => [
      lbl,
      c.cpu,
      c.cpu?.usageCoreNanoSeconds !== undefined ? c.cpu.usageCoreNanoSeconds / 1e9 : undefined,
    ]),
  );
  series(
    'container_memory_working_set_bytes',
    'gauge',
    'Current working set of the container in bytes',
    rows(containers, ({ c, lbl }) => [lbl, c.memory, c.memory?.workingSetBytes]),
  );
  series(
    'container_start_time_seconds',
    'gauge',
    'Start time of the container since unix epoch in seconds',
    containers.map(({ c, lbl }) => [lbl, ms(c.startTime) / 1000, ms(c.startTime)]),
  );
  series(
    'node_cpu_usage_seconds_total',
    'counter',
    'Cumulative cpu time consumed by the node in core-seconds',
    rows(node ? [node] : [], (n) => ['', n.cpu, n.cpu?.usageCoreNanoSeconds !== undefined ? n.cpu.usageCoreNanoSeconds / 1e9 : undefined]),
  );
  series(
    'node_memory_working_set_bytes',
    'gauge',
    'Current working set of the node in bytes',
    rows(node ? [node] : [], (n) => ['', n.memory, n.memory?.workingSetBytes]),
  );
  series(
    'pod_cpu_usage_seconds_total',
    'counter',
    'Cumulative cpu time consumed by the pod in core-seconds',
    rows(pods, (p) => [podLbl(p), p.cpu, p.cpu?.usageCoreNanoSeconds !== undefined ? p.cpu.usageCoreNanoSeconds / 1e9 : undefined]),
  );
  series(
    'pod_memory_working_set_bytes',
    'gauge',
    'Current working set of the pod in bytes',
    rows(pods, (p) => [podLbl(p), p.memory, p.memory?.workingSetBytes]),
  );
  out.push(
    '# HELP scrape_error [ALPHA] 1 if there was an error while getting container metrics, 0 otherwise',
    '# TYPE scrape_error gauge',
    `scrape_error ${summary ? 0 : 1}`,
  );
  return out.join('\n') + '\n';
}
