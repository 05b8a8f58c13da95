// The CRI container log format (upstream kuberuntime/logs): one record per line,
// `TIMESTAMP STREAM TAG CONTENT`, e.g. `2026-11-22T12:00:57.276476673Z stdout F text`.
// The tag is `F` for a full line or `P` for a partial one that the next record continues;
// runtimes split long lines (containerd at 16 KiB) into P records.
export type LogStream = 'stdout' | 'stderr';

export interface LogMessage {
  /** The timestamp as written, RFC3339Nano. */
  timestamp: string;
  /** The same instant in nanoseconds since the epoch, for sinceSeconds/sinceTime. */
  timeNs: bigint;
  stream: LogStream;
  partial: boolean;
  /** The text, ending with "\n" for a full record (as read), without it for a partial one. */
  content: Buffer;
}

const SPACE = 0x20,
  NL = 0x0a;
const RFC3339 = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/i;

/** Nanoseconds since the epoch of an RFC3339 time with up to 9 fractional digits, or undefined. */
export function parseRFC3339Ns(s: string): bigint | undefined {
  const m = RFC3339.exec(s);
  if (!m) return undefined;
  const ms = Date.parse(`${m[1]}${m[3]!.toUpperCase()}`);
  if (Number.isNaN(ms)) return undefined;
  return BigInt(ms) * 1_000_000n + BigInt((m[2] ?? '').padEnd(9, '0'));
}

/**
 * Upstream's output format for `timestamps=true` ("2006-01-02T15:04:05.000000000Z07:00"):
 * always nine fractional digits, the record's own offset, "Z" for UTC.
 */
export function formatTimestamp(ts: string): string {
  const m = RFC3339.exec(ts);
  if (!m) return ts;
  const zone = m[3] === '+00:00' || m[3] === '-00:00' ? 'Z' : m[3]!.toUpperCase();
  return `${m[1]}.${(m[2] ?? '').padEnd(9, '0')}${zone}`;
}

/** Parses one record (with or without its trailing newline); undefined when malformed. */
export function parseCRILog(line: Buffer): LogMessage | undefined {
  const a = line.indexOf(SPACE);
  if (a < 0) return undefined;
  const b = line.indexOf(SPACE, a + 1);
  if (b < 0) return undefined;
  const c = line.indexOf(SPACE, b + 1);
  if (c < 0) return undefined;
  const timestamp = line.toString('latin1', 0, a);
  const timeNs = parseRFC3339Ns(timestamp);
  const stream = line.toString('latin1', a + 1, b);
  if (timeNs === undefined || (stream !== 'stdout' && stream !== 'stderr')) return undefined;
  // Tags may carry more after ':' (runtimeapi.LogTagDelimiter); only the first matters.
  const partial = line.toString('latin1', b + 1, c).split(':')[0] === 'P';
  let end = line.length;
  if (partial && line[end - 1] === NL) end--;
  return { timestamp, timeNs, stream, partial, content: line.subarray(c + 1, end) };
}

/** Whether a record, of which the first bytes are given, is a full line: tailLines counts these. */
export function isFullRecord(head: Buffer): boolean {
  const a = head.indexOf(SPACE);
  const b = a < 0 ? -1 : head.indexOf(SPACE, a + 1);
  const c = b < 0 ? -1 : head.indexOf(SPACE, b + 1);
  return c >= 0 && head.toString('latin1', b + 1, c).split(':')[0] !== 'P';
}
