// What /stats/summary, /metrics/cadvisor and /metrics/resource answer, rendered once per
// sample: many scrapers and dashboards polling at once cost one rendering, not one each.
import { renderCadvisorMetrics } from './cadvisor-metrics.ts';
import type { SampleCache } from './cache.ts';
import { renderResourceMetrics } from './resource-metrics.ts';
import type { RawSample } from './sample.ts';
import { buildSummary, cpuAndMemoryOnly } from './summary.ts';
import type { Summary } from './summary-types.ts';

export interface StatsEndpoints {
  /** The Summary as JSON; rejects when the runtime could not be asked (upstream answers 500). */
  summaryJSON(onlyCpuAndMemory: boolean): Promise<string>;
  cadvisorMetrics(): Promise<string>;
  resourceMetrics(): Promise<string>;
}

export function statsEndpoints(cache: SampleCache, nodeName: string): StatsEndpoints {
  let memo: { sample: RawSample; views: Map<string, string>; summary?: Summary } | undefined;
  const view = async (key: string, render: (s: RawSample, summary: () => Summary) => string) => {
    const { cur, prev } = await cache.get();
    if (memo?.sample !== cur) memo = { sample: cur, views: new Map() };
    const m = memo;
    let v = m.views.get(key);
    if (v === undefined) {
      v = render(cur, () => (m.summary ??= buildSummary(nodeName, cur, prev)));
      m.views.set(key, v);
    }
    return v;
  };
  return {
    summaryJSON: (only) =>
      view(only ? 'summary-cpu-memory' : 'summary', (s, summary) => {
        if (s.runtimeError) throw new Error(`failed to list pod stats: ${s.runtimeError}`);
        return JSON.stringify(only ? cpuAndMemoryOnly(summary()) : summary());
      }),
    cadvisorMetrics: () => view('cadvisor', (s) => renderCadvisorMetrics(s)),
    resourceMetrics: () => view('resource', (s, summary) => renderResourceMetrics(s.runtimeError ? undefined : summary())),
  };
}
