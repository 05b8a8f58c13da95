// The memory manager's policies (upstream's memorymanager policy_none.go and policy_static.go,
// container scope: PodLevelResourceManagers is off). Static gives each container of a Guaranteed
// pod its memory and hugepages on a group of NUMA nodes, chosen with the topology manager's hint;
// nodes allocated together stay a group (their cells) until their last assignment goes. Pure
// functions over MemoryState; the manager (manager.ts) does the I/O.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { formatQuantity } from '../eviction/format.ts';
import { isSidecar, initAndAppContainers } from '../podutil/podutil.ts';
import { isPodLevelResourcesSet } from '../resources/pod-resources.ts';
import { qosClass } from '../resources/qos.ts';
import { parseQuantity } from '../resources/quantity.ts';
import { everyMask, NUMAMask, type ProviderHints, type TopologyHint } from '../topologymanager/bitmask.ts';
import { blocksOf, type Block, cloneMachine, deleteBlocks, type MachineState, type MemoryState, setBlocks } from './state.ts';

/** A NUMA node as cAdvisor reports it: its memory and its hugepages pools. */
export interface NUMAMemory {
  id: number;
  memoryBytes: number;
  hugepages: { pageSizeKiB: number; numPages: number }[];
}

/** reservedMemory converted: NUMA node -> memory type -> bytes. */
export type SystemReserved = Map<number, Record<string, number>>;

export interface MemoryPolicy {
  readonly name: 'None' | 'Static';
  /** validateState: an empty state gets the node's default; a state not matching its assignments is refused. */
  start(s: MemoryState): void;
  /** Allocate; throws with upstream's text. affinity: the topology manager's hint for the container. */
  allocate(s: MemoryState, pod: Pod, c: Container, affinity: TopologyHint): void;
  removeContainer(s: MemoryState, podUID: string, name: string): void;
  /** GetTopologyHints (container scope) and GetPodTopologyHints (pod scope). */
  hints(s: MemoryState, pod: Pod, c: Container): ProviderHints;
  podHints(s: MemoryState, pod: Pod): ProviderHints;
  /** GetAllocatableMemory. */
  allocatable(s: MemoryState): Block[];
}

export const nonePolicy = (): MemoryPolicy => ({
  name: 'None',
  start: () => {},
  allocate: () => {},
  removeContainer: () => {},
  hints: () => undefined,
  podHints: () => undefined,
  allocatable: () => [],
});

const isMemoryType = (name: string) => name === 'memory' || name.startsWith('hugepages-');

/** HugePageResourceName of a page size: "hugepages-2Mi", "hugepages-1Gi". */
export const hugepagesName = (pageSizeKiB: number) => `hugepages-${formatQuantity(pageSizeKiB * 1024, 'BinarySI')}`;

/** getContainerRequestedResources: the container's memory and hugepages requests, in bytes. */
export function containerRequests(c: Container): Map<string, number> {
  const out = new Map<string, number>();
  for (const [name, q] of Object.entries(c.resources?.requests ?? {})) {
    if (!isMemoryType(name)) continue;
    const v = parseQuantity(q);
    if (v === undefined) throw new Error('[memorymanager] failed to represent quantity as int64');
    out.set(name, Math.ceil(v));
  }
  return out;
}

/**
 * getPodRequestedResources: per type, the larger of the long-running containers' sum (app
 * containers and sidecars) and the largest init container's need (with the sidecars started before it).
 */
export function podRequests(pod: Pod): Map<string, number> {
  const byInit = new Map<string, number>();
  const bySidecars = new Map<string, number>();
  for (const c of pod.spec?.initContainers ?? []) {
    for (const [t, q] of containerRequests(c)) {
      if (!byInit.has(t)) byInit.set(t, 0);
      if (isSidecar(c)) bySidecars.set(t, (bySidecars.get(t) ?? 0) + q);
      else if ((bySidecars.get(t) ?? 0) + q > byInit.get(t)!) byInit.set(t, (bySidecars.get(t) ?? 0) + q);
    }
  }
  const byApps = new Map<string, number>();
  for (const c of pod.spec?.containers ?? []) for (const [t, q] of containerRequests(c)) byApps.set(t, (byApps.get(t) ?? 0) + q);
  const out = new Map<string, number>();
  for (const [t, q] of byApps) out.set(t, Math.max(q + (bySidecars.get(t) ?? 0), byInit.get(t) ?? 0));
  return out;
}

const sameGroup = (a: number[], b: number[]) => {
  const x = [...a].sort((m, n) => m - n);
  const y = [...b].sort((m, n) => m - n);
  return x.length === y.length && x.every((v, i) => v === y[i]);
};

/** findBestHint: a preferred hint over a not preferred one, then the narrower. */
function bestHint(hints: TopologyHint[]): TopologyHint {
  let best: TopologyHint = { preferred: false };
  for (const h of hints) {
    if (!best.affinity) best = h;
    else if (h.preferred && !best.preferred) best = h;
    else if (h.preferred === best.preferred && h.affinity!.isNarrowerThan(best.affinity)) best = h;
  }
  return best;
}

/** isAffinityViolatingNUMAAllocations: a group may only be reused whole, and a node allocated alone never joins a group. */
function violatesGroups(m: MachineState, mask: NUMAMask): boolean {
  const bits = mask.list();
  if (bits.length === 1) return false;
  for (const id of bits) {
    const n = m.get(id)!;
    if (n.numberOfAssignments === 0) continue;
    if (n.cells.length === 1 || !sameGroup(n.cells, bits)) return true;
  }
  return false;
}

function satisfies(m: MachineState, mask: NUMAMask, req: Map<string, number>): boolean {
  for (const [t, size] of req) {
    let free = 0;
    for (const id of mask.list()) free += m.get(id)?.memoryMap[t]?.free ?? 0;
    if (free < size) return false;
  }
  return true;
}

/** isHintInGroup: every node of hint is in group. */
const inGroup = (hint: number[], group: number[]) => hint.every((h) => group.includes(h));

/** updateMachineState: size taken from the nodes' free in order; every node counts the assignment and joins the group. */
function take(m: MachineState, bits: number[], type: string, size: number): void {
  let left = size;
  for (const id of bits) {
    const n = m.get(id)!;
    n.numberOfAssignments++;
    n.cells = [...bits];
    if (left === 0) continue;
    const t = n.memoryMap[type]!;
    if (t.free <= 0) continue;
    if (t.free >= left) {
      t.reserved += left;
      t.free -= left;
      left = 0;
      continue;
    }
    left -= t.free;
    t.reserved += t.free;
    t.free = 0;
  }
}

export interface StaticPolicyConfig {
  nodes: NUMAMemory[];
  systemReserved: SystemReserved;
}

/** NewPolicyStatic: refuses a config reserving no memory. */
export function staticPolicy(cfg: StaticPolicyConfig): MemoryPolicy {
  let total = 0;
  for (const r of cfg.systemReserved.values()) total += r.memory ?? 0;
  if (total <= 0) throw new Error('[memorymanager] you should specify the system reserved memory');
  // initContainersReusableMemory: pod -> group -> type -> bytes an earlier init container holds and a later container may reuse.
  const reusable = new Map<string, Map<string, Map<string, number>>>();
  const reserved = (id: number, t: string) => cfg.systemReserved.get(id)?.[t] ?? 0;

  /** getDefaultMachineState: per node, each hugepages pool and the memory less hugepages and the reservation. */
  const defaultMachine = (): MachineState => {
    const m: MachineState = new Map();
    for (const node of cfg.nodes) {
      const memoryMap: Record<string, { total: number; systemReserved: number; allocatable: number; reserved: number; free: number }> = {};
      let inHugepages = 0;
      for (const hp of node.hugepages) {
        const name = hugepagesName(hp.pageSizeKiB);
        const totalSize = hp.numPages * hp.pageSizeKiB * 1024;
        const sr = reserved(node.id, name);
        memoryMap[name] = { total: totalSize, systemReserved: sr, allocatable: totalSize - sr, reserved: 0, free: totalSize - sr };
        inHugepages += totalSize;
      }
      const sr = reserved(node.id, 'memory');
      const allocatable = node.memoryBytes - sr - inHugepages;
      memoryMap.memory = { total: node.memoryBytes, systemReserved: sr, allocatable, reserved: 0, free: allocatable };
      m.set(node.id, { numberOfAssignments: 0, memoryMap, cells: [node.id] });
    }
    return m;
  };

  const reusableFor = (podUID: string, mask: NUMAMask, t: string) => reusable.get(podUID)?.get(mask.toString())?.get(t) ?? 0;

  /** calculateHints: every group of nodes able to hold the request; the narrowest are preferred. */
  const calculateHints = (m: MachineState, podUID: string, req: Map<string, number>): Record<string, TopologyHint[]> => {
    const ids = [...m.keys()].sort((a, b) => a - b);
    let minSize = ids.length;
    const found: NUMAMask[] = [];
    everyMask(ids, (mask) => {
      const bits = mask.list();
      const single = bits.length === 1;
      for (const [t, size] of req) {
        let allocatable = 0;
        for (const id of bits) allocatable += m.get(id)!.memoryMap[t]?.allocatable ?? 0;
        if (allocatable < size) return;
      }
      minSize = Math.min(minSize, bits.length);
      // A node already allocated in a group cannot be a single-node hint.
      if (single && m.get(bits[0]!)!.cells.length > 1) return;
      for (const id of bits) {
        const n = m.get(id)!;
        if (!single && n.numberOfAssignments > 0 && (n.cells.length === 1 || !sameGroup(n.cells, bits))) return;
      }
      for (const [t, size] of req) {
        let free = 0;
        for (const id of bits) free += m.get(id)!.memoryMap[t]?.free ?? 0;
        if (free + reusableFor(podUID, mask, t) < size) return;
      }
      found.push(mask);
    });
    const hints: Record<string, TopologyHint[]> = {};
    if (found.length === 0) return hints;
    for (const t of req.keys()) hints[t] = found.map((mask) => ({ affinity: mask, preferred: mask.count() === minSize }));
    return hints;
  };

  /** regenerateHints: a container already allocated gets its own blocks back as preferred hints. */
  const regenerate = (blocks: Block[], req: Map<string, number>): ProviderHints => {
    if (blocks.length !== req.size) return undefined;
    const hints: Record<string, TopologyHint[]> = {};
    for (const t of req.keys()) hints[t] = [];
    for (const b of blocks) {
      if (!req.has(b.type) || b.size !== req.get(b.type)) return undefined;
      hints[b.type]!.push({ affinity: NUMAMask.of(...b.numaAffinity), preferred: true });
    }
    return hints;
  };

  const guaranteedPlain = (pod: Pod) => qosClass(pod) === 'Guaranteed' && !isPodLevelResourcesSet(pod);

  const isRegularInit = (pod: Pod, name: string) => {
    const c = (pod.spec?.initContainers ?? []).find((i) => i.name === name);
    return c !== undefined && !isSidecar(c);
  };

  /** updatePodReusableMemory: an init container's blocks become reusable; a later container's blocks use them up. */
  const updateReusable = (pod: Pod, c: Container, blocks: Block[]) => {
    const uid = pod.metadata!.uid!;
    for (const other of reusable.keys()) if (other !== uid) reusable.delete(other);
    if (isRegularInit(pod, c.name)) {
      let byGroup = reusable.get(uid);
      if (!byGroup) reusable.set(uid, (byGroup = new Map()));
      for (const b of blocks) {
        const key = NUMAMask.of(...b.numaAffinity).toString();
        let byType = byGroup.get(key);
        if (!byType) byGroup.set(key, (byType = new Map()));
        if (b.size > (byType.get(b.type) ?? 0)) byType.set(b.type, b.size);
      }
      return;
    }
    for (const b of blocks) {
      const key = NUMAMask.of(...b.numaAffinity).toString();
      const have = reusable.get(uid)?.get(key)?.get(b.type) ?? 0;
      if (have !== 0)
        reusable
          .get(uid)!
          .get(key)!
          .set(b.type, b.size >= have ? 0 : have - b.size);
    }
  };

  /** updateInitContainersMemoryBlocks: a later container's blocks shrink the earlier init containers' ones it reuses. */
  const shrinkInitBlocks = (s: MemoryState, pod: Pod, c: Container, blocks: Block[]) => {
    const uid = pod.metadata!.uid!;
    for (const cb of blocks) {
      let size = cb.size;
      for (const init of pod.spec?.initContainers ?? []) {
        if (init.name === c.name || size === 0) break;
        if (isSidecar(init)) continue;
        const ib = blocksOf(s, uid, init.name);
        if (!ib || ib.length === 0) continue;
        const copy = ib.map((b) => ({ ...b }));
        for (const b of copy) {
          if (b.size === 0 || b.type !== cb.type || !NUMAMask.of(...b.numaAffinity).isEqual(NUMAMask.of(...cb.numaAffinity))) continue;
          if (b.size > size) {
            b.size -= size;
            size = 0;
          } else {
            size -= b.size;
            b.size = 0;
          }
        }
        setBlocks(s, uid, init.name, copy);
      }
    }
  };

  return {
    name: 'Static',
    start(s) {
      if (s.machine.size === 0) {
        if (s.assignments.size !== 0) throw new Error('[memorymanager] machine state can not be empty when it has memory assignments');
        s.machine = defaultMachine();
        return;
      }
      // validateState: the default state with every assignment taken again must be the state restored.
      const want = defaultMachine();
      for (const [pod, cs] of s.assignments)
        for (const [name, blocks] of cs)
          for (const b of blocks) {
            for (const id of b.numaAffinity) {
              if (!want.has(id))
                throw new Error(
                  `[memorymanager] (pod: ${pod}, container: ${name}) the memory assignment uses the NUMA that does not exist`,
                );
              if (!want.get(id)!.memoryMap[b.type])
                throw new Error(
                  `[memorymanager] (pod: ${pod}, container: ${name}) the memory assignment uses memory resource that does not exist`,
                );
            }
            take(want, b.numaAffinity, b.type, b.size);
          }
      if (!machinesEqual(s.machine, want)) throw new Error('[memorymanager] the expected machine state is different from the real one');
    },

    allocate(s, pod, c, affinity) {
      if (!guaranteedPlain(pod)) return;
      const uid = pod.metadata!.uid!;
      const existing = blocksOf(s, uid, c.name);
      if (existing) {
        updateReusable(pod, c, existing);
        return;
      }
      const req = containerRequests(c);
      const m = cloneMachine(s.machine);
      let best = affinity;
      if (!best.affinity) {
        const hints = calculateHints(m, uid, req);
        if (Object.keys(hints).length < 1)
          throw new Error('[memorymanager] failed to get the default NUMA affinity, no NUMA nodes with enough memory is available');
        const dflt = bestHint(hints.memory ?? []);
        if (!dflt.preferred && best.preferred) throw new Error('[memorymanager] failed to find the default preferred hint');
        best = dflt;
      }
      if (!satisfies(m, best.affinity!, req)) {
        // extendTopologyManagerHint: the best group holding the hint's nodes.
        const hints = calculateHints(m, uid, req);
        const within = (hints.memory ?? []).filter((h) => inGroup(best.affinity!.list(), h.affinity!.list()));
        if (within.length < 1) throw new Error('[memorymanager] failed to find NUMA nodes to extend the current topology hint');
        const ext = bestHint(within);
        if (!ext.preferred && best.preferred) throw new Error('[memorymanager] failed to find the extended preferred hint');
        best = ext;
      }
      if (violatesGroups(m, best.affinity!)) throw new Error('[memorymanager] preferred hint violates NUMA node allocation');
      const bits = best.affinity!.list();
      const blocks: Block[] = [];
      for (const [t, size] of req) {
        blocks.push({ numaAffinity: bits, type: t, size });
        const reuse = reusableFor(uid, best.affinity!, t);
        take(m, bits, t, reuse >= size ? 0 : size - reuse);
      }
      updateReusable(pod, c, blocks);
      s.machine = m;
      setBlocks(s, uid, c.name, blocks);
      shrinkInitBlocks(s, pod, c, blocks);
    },

    removeContainer(s, podUID, name) {
      const blocks = blocksOf(s, podUID, name);
      if (!blocks) return;
      deleteBlocks(s, podUID, name);
      // releaseMemory: back to the nodes' free in order; a node with no assignment left is its own group again.
      for (const b of blocks) {
        let left = b.size;
        for (const id of b.numaAffinity) {
          const n = s.machine.get(id)!;
          n.numberOfAssignments--;
          if (n.numberOfAssignments === 0) n.cells = [id];
          if (left === 0) continue;
          const t = n.memoryMap[b.type]!;
          if (t.reserved === 0) continue;
          if (t.reserved < left) {
            left -= t.reserved;
            t.free += t.reserved;
            t.reserved = 0;
            continue;
          }
          t.free += left;
          t.reserved -= left;
          left = 0;
        }
      }
    },

    hints(s, pod, c) {
      if (qosClass(pod) !== 'Guaranteed' || isPodLevelResourcesSet(pod)) return undefined;
      const req = containerRequests(c);
      const blocks = blocksOf(s, pod.metadata!.uid!, c.name);
      if (blocks) return regenerate(blocks, req);
      return calculateHints(s.machine, pod.metadata!.uid!, req);
    },

    podHints(s, pod) {
      if (qosClass(pod) !== 'Guaranteed' || isPodLevelResourcesSet(pod)) return undefined;
      const req = podRequests(pod);
      if (req.size === 0) return undefined;
      for (const c of initAndAppContainers(pod)) {
        const blocks = blocksOf(s, pod.metadata!.uid!, c.name);
        if (blocks) return regenerate(blocks, req);
      }
      return calculateHints(s.machine, pod.metadata!.uid!, req);
    },

    allocatable(s) {
      const out: Block[] = [];
      for (const [id, n] of s.machine)
        for (const [t, table] of Object.entries(n.memoryMap))
          if (table.allocatable !== 0) out.push({ numaAffinity: [id], type: t, size: table.allocatable });
      return out;
    },
  };
}

/** areMachineStatesEqual: assignments, groups, totals and allocatable per node, and free and reserved summed over each group. */
function machinesEqual(a: MachineState, b: MachineState): boolean {
  if (a.size !== b.size) return false;
  for (const [id, n1] of a) {
    const n2 = b.get(id);
    if (!n2 || n1.numberOfAssignments !== n2.numberOfAssignments || !sameGroup(n1.cells, n2.cells)) return false;
    const types = Object.keys(n1.memoryMap);
    if (types.length !== Object.keys(n2.memoryMap).length) return false;
    for (const t of types) {
      const m1 = n1.memoryMap[t]!;
      const m2 = n2.memoryMap[t];
      if (!m2 || m1.total !== m2.total || m1.systemReserved !== m2.systemReserved || m1.allocatable !== m2.allocatable) return false;
      let f1 = 0,
        r1 = 0,
        f2 = 0,
        r2 = 0;
      for (const c of n1.cells) {
        f1 += a.get(c)?.memoryMap[t]?.free ?? 0;
        r1 += a.get(c)?.memoryMap[t]?.reserved ?? 0;
        f2 += b.get(c)?.memoryMap[t]?.free ?? 0;
        r2 += b.get(c)?.memoryMap[t]?.reserved ?? 0;
      }
      if (f1 !== f2 || r1 !== r2) return false;
    }
  }
  return true;
}

/** The NUMA nodes of a container's blocks (GetMemoryNUMANodes), for cpuset.mems; undefined when it has none. */
export function memoryNodes(s: MemoryState, podUID: string, name: string): number[] | undefined {
  const blocks = blocksOf(s, podUID, name);
  if (!blocks || blocks.length === 0) return undefined;
  return [...new Set(blocks.flatMap((b) => b.numaAffinity))].sort((a, b) => a - b);
}
