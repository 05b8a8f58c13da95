// Go's time.Duration text form ("10s", "1m30s", "300ms"), as KubeletConfiguration writes durations.
const units: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Milliseconds, or undefined when the text is not a Go duration. */
export function parseDuration(text: string): number | undefined {
  if (text === '0') return 0;
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0,
    m: RegExpExecArray | null,
    pos = 0;
  const neg = text.startsWith('-');
  re.lastIndex = pos = neg || text.startsWith('+') ? 1 : 0;
  while ((m = re.exec(text))) {
    total += Number(m[1]) * units[m[2]!]!;
    pos = re.lastIndex;
  }
  if (pos !== text.length || pos === 0 || (pos === 1 && text.length === 1)) return undefined;
  return neg ? -total : total;
}

/** Pure: Go's time.Duration String() of a whole or fractional number of milliseconds ("1m0s", "1.5s", "300ms"). */
export function goDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 0) return `-${goDuration(-ms)}`;
  const trim = (n: number) => String(Number(n.toFixed(9)));
  if (ms < 1) return ms * 1000 < 1 ? `${trim(ms * 1e6)}ns` : `${trim(ms * 1000)}µs`;
  if (ms < 1000) return `${trim(ms)}ms`;
  const h = Math.floor(ms / 3_600_000),
    m = Math.floor((ms % 3_600_000) / 60_000),
    s = trim((ms % 60_000) / 1000);
  return h ? `${h}h${m}m${s}s` : m ? `${m}m${s}s` : `${s}s`;
}

/** Go's time.Duration.String rounded to whole seconds ("10s", "1m20s", "5m0s", "1h0m0s"), as upstream's messages print back-offs. */
export function formatDuration(ms: number): string {
  return goDuration(Math.round(ms / 1000) * 1000);
}
