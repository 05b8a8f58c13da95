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
  /** The machine it was measured on (test/proc.ts machineName); none in a file from before 2026-12-07. */
  machine?: string;
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

/**
 * Why a kept floor cannot be compared with this run, or undefined when it can: it must come from
 * this machine (the sessions' VMs change while _output stays: an Intel floor once stood beside an
 * AMD run), measured within maxHours of now (ms since the epoch), as an older one is another
 * state of the machine.
 */
export function floorUnusable(doc: FloorDoc, now: number, maxHours: number, machine: string): string | undefined {
  if (doc.machine !== machine) return `it was measured on ${doc.machine ?? 'a machine it does not name'}, this run is on ${machine}`;
  const at = Date.parse(doc.date);
  return Number.isFinite(at) && now - at <= maxHours * 3_600_000 ? undefined : `it is older than ${maxHours} h (${doc.date})`;
}

/** A kubelet's figure over the floor's, e.g. "1.07x"; "-" when either is missing. */
export function ratio(kubeletMs: number, floorMs: number | undefined): string {
  return floorMs && Number.isFinite(kubeletMs) && floorMs > 0 ? `${(kubeletMs / floorMs).toFixed(2)}x` : '-';
}
