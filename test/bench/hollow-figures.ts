// The figures of a hollow-node run (test/bench/hollow.ts runs it): the apiserver's request counter
// by verb and resource, the nodes' own requests from the audit log, both per node per minute, the
// apiserver's memory and watch events, and a table of them. Pure.

import type { RequestCounts } from './audit.ts';

/** Pure: apiserver_request_total of a /metrics text, summed over codes and everything but verb, resource and subresource. */
export function apiserverRequests(metricsText: string): RequestCounts {
  const out: RequestCounts = new Map();
  for (const line of metricsText.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const close = line.lastIndexOf('}');
    const labels = Object.fromEntries([...line.slice(24, close).matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    const key = `${labels.verb} ${labels.resource}${labels.subresource ? `/${labels.subresource}` : ''}`;
    out.set(key, (out.get(key) ?? 0) + Number(line.slice(close + 1).trim()));
  }
  return out;
}

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
