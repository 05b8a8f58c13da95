// /metrics/resource: the few series metrics-server and `kubectl top` read, under
// upstream's names: node, pod and container CPU time and memory working set, with the
// sample time. Built from CRI ListContainerStats and the root cgroup, cached briefly
// because ListContainerStats costs ~50 ms here and scrapers come every 15 s.
import { readFileSync } from 'node:fs';
import type { RuntimeClient } from '../cri/runtime-client.ts';
import { labels as criLabels } from '../runtime/types.ts';

export interface Sample { cpuSeconds: number; memoryWorkingSetBytes: number; timestampMs: number }
export interface ContainerSample extends Sample { container: string; pod: string; namespace: string }

const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/** Pure: the exposition text, pods summed from their containers. */
export function renderResourceMetrics(node: Sample | undefined, containers: ContainerSample[]): string {
  const out: string[] = [];
  const series = (name: string, type: string, help: string, rows: [string, number, number][]) => {
    out.push(`# HELP ${name} [STABLE] ${help}`, `# TYPE ${name} ${type}`);
    for (const [lbl, v, ts] of rows) out.push(`${name}${lbl} ${v} ${ts}`);
  };
  const c = (s: ContainerSample) => `{container="${esc(s.container)}",namespace="${esc(s.namespace)}",pod="${esc(s.pod)}"}`;
  const pods = new Map<string, ContainerSample>();
  for (const s of containers) {
    const k = `${s.namespace}/${s.pod}`, p = pods.get(k);
    pods.set(k, p ? { ...p, cpuSeconds: p.cpuSeconds + s.cpuSeconds, memoryWorkingSetBytes: p.memoryWorkingSetBytes + s.memoryWorkingSetBytes, timestampMs: Math.max(p.timestampMs, s.timestampMs) } : s);
  }
  const p = (s: ContainerSample) => `{namespace="${esc(s.namespace)}",pod="${esc(s.pod)}"}`;
  series('container_cpu_usage_seconds_total', 'counter', 'Cumulative cpu time consumed by the container in core-seconds', containers.map((s) => [c(s), s.cpuSeconds, s.timestampMs]));
  series('container_memory_working_set_bytes', 'gauge', 'Current working set of the container in bytes', containers.map((s) => [c(s), s.memoryWorkingSetBytes, s.timestampMs]));
  series('node_cpu_usage_seconds_total', 'counter', 'Cumulative cpu time consumed by the node in core-seconds', node ? [['', node.cpuSeconds, node.timestampMs]] : []);
  series('node_memory_working_set_bytes', 'gauge', 'Current working set of the node in bytes', node ? [['', node.memoryWorkingSetBytes, node.timestampMs]] : []);
  series('pod_cpu_usage_seconds_total', 'counter', 'Cumulative cpu time consumed by the pod in core-seconds', [...pods.values()].map((s) => [p(s), s.cpuSeconds, s.timestampMs]));
  series('pod_memory_working_set_bytes', 'gauge', 'Current working set of the pod in bytes', [...pods.values()].map((s) => [p(s), s.memoryWorkingSetBytes, s.timestampMs]));
  out.push('# HELP scrape_error [ALPHA] 1 if there was an error while getting container metrics, 0 otherwise', '# TYPE scrape_error gauge', `scrape_error ${node ? 0 : 1}`);
  return out.join('\n') + '\n';
}

/** Pure: working set as cadvisor computes it, usage minus inactive file pages. */
export function workingSet(usageBytes: number, memoryStat: string): number {
  const inactive = Number(/^total_inactive_file (\d+)$/m.exec(memoryStat)?.[1] ?? /^inactive_file (\d+)$/m.exec(memoryStat)?.[1] ?? 0);
  return Math.max(0, usageBytes - inactive);
}

/** The node as the root cgroup sees it (cgroup v1 here; v2 files as a fallback). */
export function readNodeSample(root = '/sys/fs/cgroup'): Sample {
  const read = (p: string) => readFileSync(`${root}/${p}`, 'utf8');
  try {
    return {
      cpuSeconds: Number(read('cpuacct/cpuacct.usage')) / 1e9,
      memoryWorkingSetBytes: workingSet(Number(read('memory/memory.usage_in_bytes')), read('memory/memory.stat')),
      timestampMs: Date.now(),
    };
  } catch {
    const cpu = Number(/^usage_usec (\d+)$/m.exec(read('cpu.stat'))?.[1] ?? 0) / 1e6;
    const meminfo = readFileSync('/proc/meminfo', 'utf8');
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(meminfo)?.[1] ?? 0) * 1024;
    return { cpuSeconds: cpu, memoryWorkingSetBytes: kb('MemTotal') - kb('MemAvailable'), timestampMs: Date.now() };
  }
}

/** Samples cached for maxAgeMs; concurrent scrapes share one refresh. */
export function resourceMetricsSource(cri: RuntimeClient, maxAgeMs = 5000): () => Promise<string> {
  let cached: { at: number; text: string } | undefined;
  let inflight: Promise<string> | undefined;
  const refresh = async () => {
    let node: Sample | undefined;
    const containers: ContainerSample[] = [];
    try {
      node = readNodeSample();
      const { stats } = await cri.listContainerStats({});
      for (const s of stats) {
        const l = s.attributes?.labels ?? {};
        if (!s.cpu?.usageCoreNanoSeconds || !s.memory?.workingSetBytes) continue;
        containers.push({
          container: l[criLabels.containerName] ?? s.attributes?.metadata?.name ?? '', pod: l[criLabels.podName] ?? '', namespace: l[criLabels.podNamespace] ?? '',
          cpuSeconds: Number(s.cpu.usageCoreNanoSeconds.value) / 1e9, memoryWorkingSetBytes: Number(s.memory.workingSetBytes.value),
          timestampMs: Math.floor(Number(BigInt(s.cpu.timestamp) / 1_000_000n)),
        });
      }
    } catch {
      node = undefined; // rendered as scrape_error 1
    }
    cached = { at: Date.now(), text: renderResourceMetrics(node, containers) };
    return cached.text;
  };
  return () => {
    if (cached && Date.now() - cached.at < maxAgeMs) return Promise.resolve(cached.text);
    inflight ??= refresh().finally(() => { inflight = undefined; });
    return inflight;
  };
}
