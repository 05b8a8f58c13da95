// How one KubeletConfiguration field is read from the --config document and written back in
// /configz: upstream's strict decoding (a wrong type is an error naming the field path) and the
// v1beta1 JSON form its /configz marshals (durations as Go's time.Duration String()).
import { goDuration, parseDuration } from '../apiserver/duration.ts';

export class ConfigError extends Error {}

export interface Codec<T> {
  /** The value at path converted, or a ConfigError naming the path; dflt fills what a nested section leaves out. */
  decode(path: string, v: unknown, dflt: T): T;
  /** The v1beta1 JSON form, as upstream's /configz writes it. */
  encode(v: T): unknown;
  /** metav1.Duration: zero is "unset" (SetDefaults_KubeletConfiguration's `== zeroDuration` checks). */
  zeroIsUnset?: boolean;
}

const bad = (path: string, want: string, v: unknown) => new ConfigError(`${path}: expected ${want}, got ${JSON.stringify(v)}`);
const isMapping = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** A codec that checks the value's shape and keeps it as it is. */
function plain<T>(want: string, ok: (v: unknown) => boolean): Codec<T> {
  return {
    decode(path, v) {
      if (!ok(v)) throw bad(path, want, v);
      return v as T;
    },
    encode: (v) => v,
  };
}

const isStrings = (v: unknown) => Array.isArray(v) && v.every((s) => typeof s === 'string');
export const str = plain<string>('a string', (v) => typeof v === 'string');
export const int = plain<number>('an integer', Number.isInteger);
export const num = plain<number>('a number', (v) => typeof v === 'number');
export const bool = plain<boolean>('true or false', (v) => typeof v === 'boolean');
export const strings = plain<string[]>('a list of strings', isStrings);
export const stringMap = plain<Record<string, string>>(
  'a map of strings',
  (v) => isMapping(v) && Object.values(v).every((s) => typeof s === 'string'),
);
export const stringsMap = plain<Record<string, string[]>>(
  'a map of string lists',
  (v) => isMapping(v) && Object.values(v).every(isStrings),
);
export const boolMap = plain<Record<string, boolean>>(
  'a map of true/false',
  (v) => isMapping(v) && Object.values(v).every((b) => typeof b === 'boolean'),
);
export const list = plain<unknown[]>('a list', Array.isArray);
export const ints = plain<number[]>('a list of integers', (v) => Array.isArray(v) && v.every(Number.isInteger));

/** metav1.Duration: Go's text form in, milliseconds out; written back as Go prints it ("1m0s"). */
export const duration: Codec<number> = {
  decode(path, v) {
    const ms = typeof v === 'string' ? parseDuration(v) : undefined;
    if (ms === undefined || ms < 0) throw bad(path, 'a duration such as "10s" or "1m0s"', v);
    return ms;
  },
  encode: goDuration,
  zeroIsUnset: true,
};

/** metav1.Duration where upstream gives a negative a meaning (volumeStatsAggPeriod: negative turns it off); zero is still unset. */
export const signedDuration: Codec<number> = {
  decode(path, v) {
    const ms = typeof v === 'string' ? parseDuration(v) : undefined;
    if (ms === undefined) throw bad(path, 'a duration such as "10s" or "1m0s"', v);
    return ms;
  },
  encode: goDuration,
  zeroIsUnset: true,
};

type Schema = { [k: string]: Codec<unknown> | Schema };
/** Flattens a nested section into "a.b" keys, decoding each leaf and refusing unknown keys (strict decoding). */
export function nested(path: string, v: unknown, schema: Schema): Record<string, unknown> {
  if (!isMapping(v)) throw bad(path, 'a mapping', v);
  const out: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(v)) {
    const sub = schema[k];
    if (!sub) throw new ConfigError(`${path}: unknown field "${k}"`);
    if (typeof sub.decode === 'function') out[k] = (sub as Codec<unknown>).decode(`${path}.${k}`, val, undefined);
    else for (const [kk, vv] of Object.entries(nested(`${path}.${k}`, val, sub as Schema))) out[`${k}.${kk}`] = vv;
  }
  return out;
}

/** Go's omitempty on a map of scalars: the empty ones left out. */
export const omitEmptyStrings = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== ''));
