// The query of /containerLogs as upstream decodes it into a v1 PodLogOptions and
// validates it: a value that does not parse is a 400, one that parses but is not allowed
// a 422, both naming the parameter.
import { parseRFC3339Ns } from '../container-logs/cri-log.ts';
import type { LogOptions } from '../container-logs/writer.ts';

export type LogQuery = { options: LogOptions; previous: boolean } | { status: 400 | 422; message: string };

type Query = Record<string, unknown>;

// Repeated parameters: upstream's conversions take the first value.
const first = (v: unknown): string | undefined => (Array.isArray(v) ? first(v[0]) : typeof v === 'string' ? v : undefined);

// Upstream's Convert_Slice_string_To_bool: present means true unless "0" or "false".
const bool = (q: Query, name: string) => {
  const v = first(q[name]);
  return v !== undefined && v !== '0' && v.toLowerCase() !== 'false';
};

class Malformed extends Error {}

function int(q: Query, name: string): number | undefined {
  const v = first(q[name]);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!/^[+-]?\d+$/.test(v) || !Number.isSafeInteger(n))
    throw new Malformed(`invalid value ${JSON.stringify(v)} for query parameter ${name}: must be an integer`);
  return n;
}

/** Pure: the log options of a query, at `nowMs` for sinceSeconds. */
export function parseLogQuery(query: Query, nowMs: number): LogQuery {
  const q = { ...query };
  // The legacy `tail` parameter; "all" means no tail.
  const tail = first(q.tail);
  if (tail) q.tailLines = tail === 'all' ? undefined : tail;
  let tailLines: number | undefined, limitBytes: number | undefined, sinceSeconds: number | undefined, sinceNs: bigint | undefined;
  try {
    tailLines = int(q, 'tailLines');
    limitBytes = int(q, 'limitBytes');
    sinceSeconds = int(q, 'sinceSeconds');
    const sinceTime = first(q.sinceTime);
    if (sinceTime) {
      sinceNs = parseRFC3339Ns(sinceTime);
      if (sinceNs === undefined)
        throw new Malformed(`invalid value ${JSON.stringify(sinceTime)} for query parameter sinceTime: must be an RFC3339 time`);
    }
  } catch (e) {
    if (e instanceof Malformed) return { status: 400, message: e.message };
    throw e;
  }
  // Upstream's ValidatePodLogOptions.
  const invalid = (name: string, value: number, why: string) => ({
    status: 422 as const,
    message: `${name}: Invalid value: ${value}: ${why}`,
  });
  if (tailLines !== undefined && tailLines < 0) return invalid('tailLines', tailLines, 'must be greater than or equal to 0');
  if (limitBytes !== undefined && limitBytes < 1) return invalid('limitBytes', limitBytes, 'must be greater than 0');
  if (sinceSeconds !== undefined) {
    if (sinceNs !== undefined)
      return { status: 422, message: 'sinceSeconds: Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified' };
    if (sinceSeconds < 1) return invalid('sinceSeconds', sinceSeconds, 'must be greater than 0');
    sinceNs = (BigInt(nowMs) - BigInt(sinceSeconds) * 1000n) * 1_000_000n;
  }
  return {
    previous: bool(q, 'previous'),
    options: { follow: bool(q, 'follow'), timestamps: bool(q, 'timestamps'), tailLines, limitBytes, sinceNs },
  };
}
