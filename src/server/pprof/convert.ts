// V8's profiles (the inspector's Profiler.Profile and HeapProfiler.SamplingHeapProfile) as
// pprof's (encode.ts), pure: each stack leaf first, V8's 0-based lines made 1-based, the
// synthetic root left out. The sample types are named as Go's runtime/pprof names its own.
import type { Frame, Profile } from './encode.ts';

export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

/** Profiler.Profile: a tree of nodes, the samples (node ids) and the microseconds before each. */
export interface CpuProfile {
  nodes: { id: number; callFrame: CallFrame; children?: number[] }[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

/** HeapProfiler.SamplingHeapProfile: a tree whose nodes hold the live sampled bytes they allocated. */
export interface HeapNode {
  callFrame: CallFrame;
  selfSize: number;
  children: HeapNode[];
}

// V8's pseudo-functions. (idle) is time the thread waited, not CPU: Go's CPU profile has none.
const ROOT = '(root)';
const IDLE = '(idle)';

function frameOf(c: CallFrame): Frame {
  return {
    name: c.functionName || '(anonymous)',
    file: c.url,
    line: c.lineNumber >= 0 ? c.lineNumber + 1 : 0,
    column: c.columnNumber >= 0 ? c.columnNumber + 1 : 0,
  };
}

/**
 * The CPU profile as Go's: samples/count and cpu/nanoseconds, one sample per stack (the time a
 * sample stands for is the delta to the next one, the last its own); idle samples left out.
 * V8's times are on a monotonic clock: the profile's time is the wall clock's at its start.
 */
export function cpuProfileToPprof(p: CpuProfile, intervalNanos: number, wallStartNanos: number): Profile {
  const parent = new Map<number, number>();
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stackOf = (id: number): Frame[] => {
    const stack: Frame[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const n = byId.get(at);
      if (n && n.callFrame.functionName !== ROOT) stack.push(frameOf(n.callFrame));
    }
    return stack;
  };
  const samples = p.samples ?? [];
  const deltas = p.timeDeltas ?? [];
  const totals = new Map<number, { count: number; nanos: number }>();
  for (let i = 0; i < samples.length; i++) {
    const id = samples[i]!;
    if (byId.get(id)?.callFrame.functionName === IDLE) continue;
    const us = i + 1 < deltas.length ? deltas[i + 1]! : intervalNanos / 1000;
    const t = totals.get(id) ?? { count: 0, nanos: 0 };
    t.count++;
    t.nanos += Math.max(0, us) * 1000;
    totals.set(id, t);
  }
  return {
    sampleTypes: [
      ['samples', 'count'],
      ['cpu', 'nanoseconds'],
    ],
    samples: [...totals].map(([id, t]) => ({ stack: stackOf(id), values: [t.count, t.nanos] })),
    timeNanos: wallStartNanos,
    durationNanos: (p.endTime - p.startTime) * 1000,
    periodType: ['cpu', 'nanoseconds'],
    period: intervalNanos,
  };
}

/**
 * The sampling heap profile as Go's heap profile's inuse_space/bytes: the live bytes each stack
 * allocated, as V8 estimates them from its samples. (V8 gives each sample's bytes already scaled
 * up by its sampling rate, not how many objects it stands for: no inuse_objects here.)
 */
export function heapProfileToPprof(head: HeapNode, samplingIntervalBytes: number, nowNanos: number): Profile {
  const samples: Profile['samples'] = [];
  const walk = (n: HeapNode, above: Frame[]) => {
    const stack = n.callFrame.functionName === ROOT ? above : [frameOf(n.callFrame), ...above];
    if (n.selfSize > 0) samples.push({ stack, values: [n.selfSize] });
    for (const c of n.children) walk(c, stack);
  };
  walk(head, []);
  return {
    sampleTypes: [['inuse_space', 'bytes']],
    samples,
    timeNanos: nowNanos,
    periodType: ['space', 'bytes'],
    period: samplingIntervalBytes,
  };
}
