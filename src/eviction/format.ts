// resource.Quantity's String() for the figures eviction messages print: upstream builds
// them with NewQuantity(n, BinarySI) (bytes) or DecimalSI (inodes, pids), or prints the
// configured quantity in its own format, always in canonical form ("1024Mi" is "1Gi").
import { parseQuantity } from '../resources/quantity.ts';
import type { QuantityFormat } from './types.ts';

const BINARY: [string, number][] = [
  ['Ei', 2 ** 60],
  ['Pi', 2 ** 50],
  ['Ti', 2 ** 40],
  ['Gi', 2 ** 30],
  ['Mi', 2 ** 20],
  ['Ki', 2 ** 10],
];
const DECIMAL: [string, number][] = [
  ['E', 1e18],
  ['P', 1e15],
  ['T', 1e12],
  ['G', 1e9],
  ['M', 1e6],
  ['k', 1e3],
];
const SUB: [string, number][] = [
  ['m', 1e3],
  ['u', 1e6],
  ['n', 1e9],
];

function decimal(n: number): string {
  if (Number.isInteger(n)) {
    for (const [s, f] of DECIMAL) if (n >= f && n % f === 0) return `${n / f}${s}`;
    return String(n);
  }
  // Go rounds a fraction up to the nano; the milli/micro/nano forms an integer fits in.
  for (const [s, f] of SUB) {
    const scaled = n * f;
    if (Math.abs(scaled - Math.round(scaled)) < 1e-6) return `${Math.round(scaled)}${s}`;
  }
  return `${Math.ceil(n * 1e9)}n`;
}

/** Canonical text of a non-negative or negative amount in the given format. */
export function formatQuantity(n: number, format: QuantityFormat): string {
  if (n < 0) return `-${formatQuantity(-n, format)}`;
  // Go prints small or fractional binary amounts in decimal, so 1000 bytes read "1k".
  if (format === 'DecimalSI' || n < 1024 || !Number.isInteger(n)) return decimal(n);
  for (const [s, f] of BINARY) if (n % f === 0) return `${n / f}${s}`;
  return String(n);
}

/**
 * The format a quantity's text carries: binary suffixes stay binary, everything else decimal
 * (Go keeps an exponent form such as "1e3" as written; here it prints "1k").
 */
export const quantityFormat = (text: string): QuantityFormat => (/[KMGTPE]i$/.test(text.trim()) ? 'BinarySI' : 'DecimalSI');

/** A configured quantity ("100Mi", "1024Mi", "500M") as Go would print it back; undefined if not a quantity. */
export function canonicalQuantity(text: string): string | undefined {
  const n = parseQuantity(text);
  return n === undefined ? undefined : formatQuantity(n, quantityFormat(text));
}
