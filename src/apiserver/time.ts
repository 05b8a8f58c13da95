// Times in the apiserver's wire forms: metav1.Time (RFC 3339, whole seconds) and
// metav1.MicroTime (microseconds), as Go's marshalling writes them.

/** metav1.Time: RFC 3339 truncated to the second ('2026-11-24T20:41:42Z'). */
export const rfc3339 = (t: Date | number = new Date()) => new Date(Math.floor(+t / 1000) * 1000).toISOString().replace('.000Z', 'Z');

/** metav1.MicroTime: six fractional digits (JavaScript has milliseconds; the rest are zeros). */
export const microTime = (t: Date | number = new Date()) => new Date(t).toISOString().replace(/Z$/, '000Z');
