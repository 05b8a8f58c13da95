// The runtime floor's decisions (issue #47 item 1; test/bench/floor.ts runs them): which
// concurrencies a burst is tried at, which one gave the runtime its best p99, and where a
// side-by-side run finds the floor of its own density. Pure.

/** One burst of the floor: n pods asked for at once (or one by one), started by `concurrency` workers. */
export interface FloorRun {
  pods: number;
  sequential: boolean;
  concurrency: number;
  /** create request -> container running, ms a pod. */
  p50: number;
  p99: number;
}

/** What floor.ts keeps in _output/bench/floor.json: every burst, and the best of each density. */
export interface FloorDoc {
  date: string;
  runtime: string;
  runs: FloorRun[];
  best: FloorRun[];
}

/** A density as make bench runs it: "30", "100", "100-sequential" (side-by-side.ts's BENCH_PODS and BENCH_SEQUENTIAL). */
export interface Density {
  pods: number;
  sequential: boolean;
}

/** FLOOR_DENSITIES, e.g. "30,100,100-sequential"; a word that is none of these is refused, naming it. */
export function densities(spec: string): Density[] {
  return spec
    .split(',')
    .map((w) => w.trim())
    .filter(Boolean)
    .map((w) => {
      const m = /^(\d+)(-sequential)?$/.exec(w);
      if (!m || Number(m[1]) < 1) throw new Error(`FLOOR_DENSITIES: "${w}" is not N or N-sequential`);
      return { pods: Number(m[1]), sequential: !!m[2] };
    });
}

/**
 * FLOOR_CONCURRENCY, e.g. "1,2,4,8,16,all", for a burst of `pods`: each at most `pods` ("all" is
 * `pods`), once each, ascending. One by one there is only one pod in flight: [1].
 */
export function concurrencies(spec: string, d: Density): number[] {
  if (d.sequential) return [1];
  const cs = spec
    .split(',')
    .map((w) => w.trim())
    .filter(Boolean)
    .map((w) => {
      if (w === 'all') return d.pods;
      if (!/^\d+$/.test(w) || Number(w) < 1) throw new Error(`FLOOR_CONCURRENCY: "${w}" is not a positive number or "all"`);
      return Math.min(Number(w), d.pods);
    });
  return [...new Set(cs)].sort((a, b) => a - b);
}

/** The burst with the lowest p99 (then p50, then fewer workers): the floor of its density. */
export function best(runs: FloorRun[]): FloorRun | undefined {
  return [...runs].sort((a, b) => a.p99 - b.p99 || a.p50 - b.p50 || a.concurrency - b.concurrency)[0];
}

/** The best of each density, in the order they ran. */
export function bestOfEach(runs: FloorRun[]): FloorRun[] {
  const keys = [...new Set(runs.map(key))];
  return keys.map((k) => best(runs.filter((r) => key(r) === k))!);
}

const key = (d: Density) => `${d.pods}${d.sequential ? '-sequential' : ''}`;

/** The floor of a side-by-side run's density, if floor.ts measured it. */
export function floorOf(doc: FloorDoc | undefined, d: Density): FloorRun | undefined {
  return doc?.best.find((r) => key(r) === key(d));
}

/** The floor if it was measured within maxHours of now (ms since the epoch): an older one is another machine's state. */
export function recent(doc: FloorDoc | undefined, now: number, maxHours: number): FloorDoc | undefined {
  const at = doc ? Date.parse(doc.date) : Number.NaN;
  return Number.isFinite(at) && now - at <= maxHours * 3_600_000 ? doc : undefined;
}

/** A kubelet's figure over the floor's, e.g. "1.07x"; "-" when either is missing. */
export function ratio(kubeletMs: number, floorMs: number | undefined): string {
  return floorMs && Number.isFinite(kubeletMs) && floorMs > 0 ? `${(kubeletMs / floorMs).toFixed(2)}x` : '-';
}
