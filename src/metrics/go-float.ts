// Numbers as Go's Prometheus client writes them (expfmt's writeFloat: strconv.FormatFloat(f, 'g',
// -1, 64)). Both print the shortest digits that read back as the same double, but Go switches to
// an exponent from 1e6 up and below 1e-4 ("1.048576e+06", "1e-05") where JavaScript writes
// "1048576" and "0.00001". A sample's value reads back the same either way; a bucket's le is a
// label, and a dashboard or recording rule that names it, or sums buckets across kubelets,
// sees two series. So the bucket bounds are written as upstream's.

/** Pure: strconv.FormatFloat(x, 'g', -1, 64). */
export function goFloat(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? '+Inf' : '-Inf';
  if (x === 0) return '0';
  const [mantissa, e] = x.toExponential().split('e') as [string, string];
  const exp = Number(e);
  if (exp >= -4 && exp < 6) return String(x);
  return `${mantissa}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
}

// A bound JavaScript writes otherwise than Go: seven or more integer digits, or below 1e-4.
const JS_ONLY_BOUND = /le="(-?\d{7,}(?:\.\d+)?|-?0\.0000\d+|-?[\d.]+e[-+]\d+)"/g;

/** Pure: an exposition text with its histograms' le bounds as Go writes them. */
export const withGoBucketBounds = (text: string): string => text.replace(JS_ONLY_BOUND, (_, v: string) => `le="${goFloat(Number(v))}"`);
