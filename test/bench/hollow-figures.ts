// The figures of a hollow-node run (test/bench/hollow.ts runs it): the apiserver's request counter
// by verb and resource, the nodes' own requests from the audit log, both per node per minute, the
// apiserver's memory and watch events, and a table of them. Pure.

import type { RequestCounts } from './audit.ts';

/** Pure: a counter of a /metrics text summed by the key its labels give. */
export function counterBy(metricsText: string, metric: string, key: (labels: Record<string, string>) => string): RequestCounts {
  const out: RequestCounts = new Map();
  for (const line of metricsText.split('\n')) {
    if (!line.startsWith(`${metric}{`)) continue;
    const close = line.lastIndexOf('}');
    const labels = Object.fromEntries([...line.slice(metric.length + 1, close).matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
    const k = key(labels);
    out.set(k, (out.get(k) ?? 0) + Number(line.slice(close + 1).trim()));
  }
  return out;
}

/** Pure: apiserver_request_total of a /metrics text, summed over codes and everything but verb, resource and subresource. */
export const apiserverRequests = (metricsText: string): RequestCounts =>
  counterBy(metricsText, 'apiserver_request_total', (l) => `${l.verb} ${l.resource}${l.subresource ? `/${l.subresource}` : ''}`);

/** Pure: a kubelet's rest_client_requests_total (client-go's, and kubelet-ts's) by "METHOD code". */
export const restClientRequests = (metricsText: string): RequestCounts =>
  counterBy(metricsText, 'rest_client_requests_total', (l) => `${l.method} ${l.code}`);

/** Pure: after - before, keys that did not move left out. */
export function delta(before: RequestCounts, after: RequestCounts): RequestCounts {
  const out: RequestCounts = new Map();
  for (const [k, v] of after) {
    const d = v - (before.get(k) ?? 0);
    if (d > 0) out.set(k, d);
  }
  return out;
}

/** Pure: a count per node per minute over a window. */
export const perNodeMinute = (count: number, nodes: number, ms: number): number =>
  nodes > 0 && ms > 0 ? count / nodes / (ms / 60_000) : 0;

/** Pure: the rows "VERB resource | per node per minute", largest first, rounded to 2 decimals. */
export function rateRows(c: RequestCounts, nodes: number, ms: number): [string, number][] {
  return [...c.entries()]
    .map(([k, v]): [string, number] => [k, Math.round(perNodeMinute(v, nodes, ms) * 100) / 100])
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
}

/**
 * Pure: two sets' counts a minute side by side, the keys whose rates differ by at least `minDiff`
 * a minute, the largest difference first (bench-cluster: what one kind of node asks more of).
 */
export function differingRates(a: RequestCounts, aMs: number, b: RequestCounts, bMs: number, minDiff = 0.1): [string, number, number][] {
  const rate = (c: RequestCounts, ms: number, k: string) => Math.round(((c.get(k) ?? 0) * 60_000 * 100) / ms) / 100;
  return [...new Set([...a.keys(), ...b.keys()])]
    .map((k): [string, number, number] => [k, rate(a, aMs, k), rate(b, bMs, k)])
    .filter(([, x, y]) => Math.abs(x - y) >= minDiff)
    .sort((p, q) => Math.abs(q[1] - q[2]) - Math.abs(p[1] - p[2]) || (p[0] < q[0] ? -1 : 1));
}

/** One kind's figures at one node count. */
export interface KindFigures {
  kind: 'kubelet-ts' | 'kubelet-ts-json' | 'kubemark';
  nodes: number;
  /** Resident memory of all its processes / nodes, MB. */
  rssPerNodeMB: number;
  /** CPU seconds of its processes per node per minute, idle and over the churn. */
  cpuIdle: number;
  cpuChurn: number;
  /** The apiserver's CPU seconds per node per minute in the same windows (the driver's polls included, alike for every kind). */
  apiserverCpu: { idle: number; churn: number };
  /**
   * The apiserver's resident memory (MB; each kind has a control plane of its own): before the
   * nodes start, at the idle window's end, after the churn; and per node, (idle - before) / nodes.
   */
  apiserverRssMB: { before: number; idle: number; churn: number; perNode: number };
  /** Watch events the apiserver sent (apiserver_watch_events_total, to every watcher) per node per minute. */
  watchEvents: { idle: number; churn: number };
  /** The nodes' own requests (audit log), and every client's (apiserver_request_total), per node per minute. */
  idle: { nodes: number; all: number };
  churn: { nodes: number; all: number };
  /** The nodes' own requests over the churn per pod (windows differ in length between kinds: this does not). */
  churnRequestsPerPod: number;
  /** Pods per node in the churn, and seconds from the Deployment's creation to all of them running. */
  podsPerNode: number;
  allRunningSeconds: number;
}

const f = (x: number, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '-');

/** Pure: the markdown table of a run, one row per kind and node count. */
export function figuresTable(rows: KindFigures[]): string {
  const head = [
    '| kind | nodes | RSS per node (MB) | CPU s/node/min idle | CPU s/node/min churn | apiserver CPU s/node/min idle / churn | requests/node/min idle (nodes' +
      "' own / all clients) | requests/node/min churn (own / all) | nodes' requests per pod churned | churn: pods/node, s to all Running |" +
      ' apiserver RSS MB before / idle / after churn (per node) | watch events/node/min idle / churn |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  return [
    ...head,
    ...rows.map(
      (r) =>
        `| ${r.kind} | ${r.nodes} | ${f(r.rssPerNodeMB, 1)} | ${f(r.cpuIdle, 3)} | ${f(r.cpuChurn, 3)} | ${f(r.apiserverCpu.idle, 3)} / ${f(r.apiserverCpu.churn, 3)} | ${f(r.idle.nodes)} / ${f(r.idle.all)} | ${f(r.churn.nodes)} / ${f(r.churn.all)} | ${f(r.churnRequestsPerPod, 1)} | ${r.podsPerNode}, ${f(r.allRunningSeconds, 1)} | ${f(r.apiserverRssMB.before, 0)} / ${f(r.apiserverRssMB.idle, 0)} / ${f(r.apiserverRssMB.churn, 0)} (${f(r.apiserverRssMB.perNode)}) | ${f(r.watchEvents.idle, 1)} / ${f(r.watchEvents.churn, 1)} |`,
    ),
  ].join('\n');
}
