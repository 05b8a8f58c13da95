// Issue #17's targets for kubelet-ts, judged against the upstream kubelet of the same run, so
// that a run says which it met and, where it missed one, by how much. Pure.

/** One kubelet's figures from a side-by-side run (test/bench/side-by-side.ts). */
export interface Figures {
  startP99Ms: number;
  exitP99Ms: number;
  rssBeforeMB: number;
  rssSteadyMB: number;
  rssPeakMB: number;
  cpuPerMinuteSteady: number;
  requestsPerPod: number;
  /** Not measured for a variant restarted within the run. */
  idleRequestsPerMinute?: number;
}

export interface Verdict {
  target: string;
  met: boolean;
  /** The two figures and how far from the target, e.g. "0.93x (33343 against 36002 ms), missed by 4541 ms". */
  detail: string;
}

/** The exit -> status p99 the issue asks for at 100 pods, whatever upstream's. */
export const EXIT_P99_LIMIT_MS = 250;

/** Ours at most factor x theirs (unit names the figures in the detail); undefined when either was not measured. */
export function atMost(
  target: string,
  ours: number | undefined,
  theirs: number | undefined,
  factor: number,
  unit: string,
  digits = 0,
): Verdict | undefined {
  if (ours === undefined || theirs === undefined || !Number.isFinite(ours) || !Number.isFinite(theirs) || theirs <= 0) return undefined;
  const limit = factor * theirs,
    met = ours <= limit;
  const f = (x: number) => x.toFixed(digits);
  return {
    target,
    met,
    detail: `${(ours / theirs).toFixed(2)}x (${f(ours)} against ${f(theirs)} ${unit})${met ? '' : `, missed by ${f(ours - limit)} ${unit}`}`,
  };
}

export function verdicts(ts: Figures, up: Figures, pods: number): Verdict[] {
  const out: Verdict[] = [];
  const relative = (...a: Parameters<typeof atMost>) => {
    const v = atMost(...a);
    if (v) out.push(v);
  };
  relative(`pod start p99 at ${pods} pods at most 0.8x upstream's`, ts.startP99Ms, up.startP99Ms, 0.8, 'ms');
  // The issue asks it of 100 pods: at fewer it is not judged.
  if (pods >= 100) {
    const exitMet = ts.exitP99Ms < EXIT_P99_LIMIT_MS;
    out.push({
      target: `exit -> status p99 at ${pods} pods under ${EXIT_P99_LIMIT_MS} ms`,
      met: exitMet,
      detail: `${ts.exitP99Ms.toFixed(0)} ms (upstream's ${up.exitP99Ms.toFixed(0)} ms)${exitMet ? '' : `, missed by ${(ts.exitP99Ms - EXIT_P99_LIMIT_MS).toFixed(0)} ms`}`,
    });
  }
  relative("RSS with 0 pods no higher than upstream's", ts.rssBeforeMB, up.rssBeforeMB, 1, 'MB', 1);
  relative(`RSS with ${pods} pods running no higher than upstream's`, ts.rssSteadyMB, up.rssSteadyMB, 1, 'MB', 1);
  relative(`RSS peak of the ${pods}-pod run no higher than upstream's`, ts.rssPeakMB, up.rssPeakMB, 1, 'MB', 1);
  relative(
    `CPU a minute with ${pods} pods running and probed no higher than upstream's`,
    ts.cpuPerMinuteSteady,
    up.cpuPerMinuteSteady,
    1,
    's',
    2,
  );
  relative("apiserver requests a pod no higher than upstream's", ts.requestsPerPod, up.requestsPerPod, 1, 'requests', 1);
  relative(
    "apiserver requests a minute at idle no higher than upstream's",
    ts.idleRequestsPerMinute,
    up.idleRequestsPerMinute,
    1,
    'requests',
    1,
  );
  return out;
}

/** Issue #47's target: a kubelet's pod start p99 within this factor of the runtime's floor (test/bench/floor.ts). */
export const FLOOR_FACTOR = 1.15;

/**
 * The start p99 of a kubelet against the runtime floor of the same density (the best p99 the
 * runtime alone gave, at `concurrency` pods at a time); undefined when the floor was not measured.
 */
export function floorVerdict(kubelet: string, startP99Ms: number, floor: { p99: number; concurrency: number } | undefined, pods: number) {
  const v = atMost(
    `${kubelet}: pod start p99 at ${pods} pods within ${FLOOR_FACTOR}x the runtime floor`,
    startP99Ms,
    floor?.p99,
    FLOOR_FACTOR,
    'ms',
  );
  return v && { ...v, detail: `${v.detail}; the floor's best concurrency ${floor!.concurrency}` };
}
