// The process's V8 profilers through one in-process inspector session (node:inspector): the CPU
// profiler for /debug/pprof/profile, one profile at a time as Go's runtime/pprof allows, and the
// sampling heap profiler for /debug/pprof/heap, which must run before a heap profile is asked
// for. Every call is the inspector's own; nothing here walks a heap or a profile on the loop.
import type { Session } from 'node:inspector/promises';
import type { CpuProfile, HeapNode } from './convert.ts';

export interface Profiler {
  /** Starts the CPU profiler; false while another profile runs. */
  startCpu(intervalMicros: number): Promise<boolean>;
  stopCpu(): Promise<CpuProfile>;
  /** Starts heap sampling (idempotent); the live sampled allocations from then on are profiled. */
  startHeapSampling(intervalBytes: number): Promise<void>;
  /** The sampling heap profile, or undefined while sampling is off. */
  heapProfile(): Promise<HeapNode | undefined>;
}

let session: Session | undefined;
// node:inspector loaded only when a profiler is used (about 2 MB of resident memory): a kubelet
// with the endpoint off never loads it.
const connected = () => {
  if (!session) {
    session = new (process.getBuiltinModule('node:inspector/promises').Session)();
    session.connect();
  }
  return session;
};

let cpuRunning = false;
let heapSampling = false;

/** The process's profiler: one session, shared by every server in it (hollow nodes run several). */
export const inspectorProfiler: Profiler = {
  async startCpu(intervalMicros) {
    if (cpuRunning) return false;
    cpuRunning = true;
    try {
      const s = connected();
      await s.post('Profiler.enable');
      await s.post('Profiler.setSamplingInterval', { interval: intervalMicros });
      await s.post('Profiler.start');
      return true;
    } catch (e) {
      cpuRunning = false;
      throw e;
    }
  },
  async stopCpu() {
    try {
      const { profile } = await connected().post('Profiler.stop');
      return profile as CpuProfile;
    } finally {
      cpuRunning = false;
    }
  },
  async startHeapSampling(intervalBytes) {
    if (heapSampling) return;
    heapSampling = true;
    await connected().post('HeapProfiler.startSampling', { samplingInterval: intervalBytes });
  },
  async heapProfile() {
    if (!heapSampling) return undefined;
    const { profile } = await connected().post('HeapProfiler.getSamplingProfile');
    return profile.head as HeapNode;
  },
};
