// Kubernetes resource quantities ("100Mi", "500m", "1.5Gi", "2"): parsed to numbers
// (bytes, cores) and formatted in the canonical form the apiserver shows.
const suffixes: Record<string, number> = {
  '': 1,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** The value of a quantity, or undefined when it is not one. */
export function parseQuantity(q: string | number): number | undefined {
  if (typeof q === 'number') return q;
  const m = /^([+-]?\d+(?:\.\d*)?|[+-]?\.\d+)(?:([eE][+-]?\d+)|(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei))?$/.exec(q.trim());
  if (!m) return undefined;
  return Number(m[1]) * (m[2] ? Number('1' + m[2]) : suffixes[m[3] ?? '']!);
}

/** Bytes in BinarySI canonical form: the largest binary suffix that divides exactly. */
export function formatBinary(bytes: number): string {
  const n = Math.max(0, Math.floor(bytes));
  for (const s of ['Ei', 'Pi', 'Ti', 'Gi', 'Mi', 'Ki'] as const) {
    if (n >= suffixes[s]! && n % suffixes[s]! === 0) return `${n / suffixes[s]!}${s}`;
  }
  return String(n);
}

/** Cores in DecimalSI form: whole cores plainly, otherwise millicores. */
export function formatCPU(cores: number): string {
  const milli = Math.max(0, Math.round(cores * 1000));
  return milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`;
}
