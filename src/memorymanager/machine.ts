// The NUMA nodes' memory as cAdvisor reports it to upstream's memory and topology managers:
// /sys/devices/system/node/nodeN/meminfo (MemTotal), its hugepages pools and its distances.
// No NUMA directory (a restricted container): one node 0 with the machine's memory.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NUMAMemory } from './static-policy.ts';

export interface NUMAFacts {
  nodes: NUMAMemory[];
  /** Node -> its distances to nodes 0..n-1. */
  distances: Map<number, number[]>;
}

/** Pure: the facts of the files' texts. */
export function numaFacts(
  nodes: { id: number; meminfo: string; hugepages: { dir: string; nrHugepages: string }[]; distance: string }[],
): NUMAFacts {
  const out: NUMAFacts = { nodes: [], distances: new Map() };
  for (const n of [...nodes].sort((a, b) => a.id - b.id)) {
    const kb = Number(/MemTotal:\s+(\d+) kB/.exec(n.meminfo)?.[1] ?? 0);
    const hugepages = n.hugepages
      .map((h) => ({ pageSizeKiB: Number(/^hugepages-(\d+)kB$/.exec(h.dir)?.[1] ?? 0), numPages: Number(h.nrHugepages.trim()) }))
      .filter((h) => h.pageSizeKiB > 0)
      .sort((a, b) => a.pageSizeKiB - b.pageSizeKiB);
    out.nodes.push({ id: n.id, memoryBytes: kb * 1024, hugepages });
    out.distances.set(n.id, n.distance.trim().split(/\s+/).filter(Boolean).map(Number));
  }
  return out;
}

/** The thin reader of /sys; machineMemory (MemTotal of /proc/meminfo) when there are no NUMA nodes. */
export function readNUMAFacts(machineMemory: number, root = '/sys'): NUMAFacts {
  const dir = join(root, 'devices/system/node');
  const ids = existsSync(dir)
    ? readdirSync(dir)
        .map((d) => /^node(\d+)$/.exec(d)?.[1])
        .filter((x): x is string => x !== undefined)
        .map(Number)
    : [];
  if (ids.length === 0) return { nodes: [{ id: 0, memoryBytes: machineMemory, hugepages: [] }], distances: new Map([[0, [10]]]) };
  const read = (p: string) => {
    try {
      return readFileSync(p, 'utf8');
    } catch {
      return '';
    }
  };
  return numaFacts(
    ids.map((id) => {
      const node = join(dir, `node${id}`);
      const hp = join(node, 'hugepages');
      return {
        id,
        meminfo: read(join(node, 'meminfo')),
        hugepages: existsSync(hp) ? readdirSync(hp).map((d) => ({ dir: d, nrHugepages: read(join(hp, d, 'nr_hugepages')) })) : [],
        distance: read(join(node, 'distance')),
      };
    }),
  );
}
