// Times in the apiserver's wire forms: metav1.Time (RFC 3339, whole seconds) and
// metav1.MicroTime (microseconds), as Go's marshalling writes them.

/** metav1.Time: RFC 3339 truncated to the second ('2026-11-24T20:41:42Z'). */
export const rfc3339 = (t: Date | number = new Date()) => new Date(Math.floor(+t / 1000) * 1000).toISOString().replace('.000Z', 'Z');

/** metav1.MicroTime: six fractional digits (JavaScript has milliseconds; the rest are zeros). */
export const microTime = (t: Date | number = new Date()) => new Date(t).toISOString().replace(/Z$/, '000Z');

/**
 * Go's time.Now().Format(time.RFC3339Nano) in the host's zone (kubetypes.Timestamp.GetString):
 * trailing zeros of the fraction dropped, 'Z' in UTC, else the offset ('+01:00').
 */
export function rfc3339NanoLocal(t: Date = new Date(), off = -t.getTimezoneOffset()): string {
  const local = new Date(+t + off * 60_000).toISOString().replace(/\.?0*Z$/, '');
  if (!off) return `${local}Z`;
  const a = Math.abs(off);
  return `${local}${off < 0 ? '-' : '+'}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`;
}
