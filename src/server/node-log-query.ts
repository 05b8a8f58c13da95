// The node log query (NodeLogQuery, enableSystemLogQuery): GET /logs/?query=SERVICE|FILE with
// sinceTime, untilTime, boot, tailLines and pattern, read from the journal or /var/log.
// The decisions of upstream's pkg/kubelet/kubelet_server_journal.go and its _linux.go, as
// pure functions over the parsed query: parsing (newNodeLogQuery, 400 on error), validation
// (nodeLogQuery.validate, 406), journalctl's arguments (getLoggingCmd) and which services
// the journal knows (checkForNativeLogger). Messages are field.ErrorList's, aggregated.
import { goRegexpSyntaxError } from './go-regexp.ts';
import { goQuote } from '../log/go-quote.ts';

export const MAX_TAIL_LINES = 100_000n;
const MAX_SERVICE_LENGTH = 256;
const MAX_SERVICES = 4;
// Upstream's reServiceNameUnsafeCharacters: what may reach journalctl's --unit.
const UNSAFE_SERVICE_CHARACTERS = /[^a-zA-Z\-_.:0-9@]/;

/** An RFC 3339 time as Go's time.Parse keeps it: the instant, and the offset it was written in. */
export interface GoTime {
  /** Seconds since the epoch (the instant, without the fraction). */
  unix: number;
  nanos: number;
  /** The offset from UTC it was given with, in seconds. */
  offset: number;
}

export interface NodeLogQuery {
  /** Queries without / or \: services (journal units), read with journalctl. */
  services: string[];
  /** Queries with / or \: files under /var/log. */
  files: string[];
  sinceTime?: GoTime;
  untilTime?: GoTime;
  tailLines?: bigint;
  boot?: bigint;
  /** Empty: none. */
  pattern: string;
}

/** Pure: whether any option is given (upstream: n.options != (options{})). */
export const hasOptions = (q: NodeLogQuery) =>
  q.sinceTime !== undefined || q.untilTime !== undefined || q.tailLines !== undefined || q.boot !== undefined || q.pattern !== '';

/** Pure: Go's json.Marshal of a value (it escapes <, > and & where JSON.stringify does not). */
const goJSON = (v: unknown) =>
  JSON.stringify(v).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** Pure: Go's %v of a []string. */
const goList = (l: string[]) => `[${l.join(' ')}]`;

/** Pure: strconv.Atoi, as a bigint, or its error. */
export function atoi(s: string): bigint | string {
  if (!/^[+-]?[0-9]+$/.test(s)) return `strconv.Atoi: parsing ${goQuote(s)}: invalid syntax`;
  const n = BigInt(s);
  if (n > 2n ** 63n - 1n || n < -(2n ** 63n)) return `strconv.Atoi: parsing ${goQuote(s)}: value out of range`;
  return n;
}

function daysIn(month: number, year: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

function unixOf(y: number, mo: number, d: number, h: number, mi: number, s: number): number {
  const t = new Date(0);
  // setUTCFullYear, not Date.UTC, which reads years 0-99 as 1900-1999.
  t.setUTCFullYear(y, mo - 1, d);
  t.setUTCHours(h, mi, s, 0);
  return t.getTime() / 1000;
}

/**
 * Pure: time.Parse(time.RFC3339, s). As Go's: a one-digit hour and a comma before the
 * fraction pass; a lowercase t or z, a missing offset or an out-of-range field do not.
 */
export function parseRFC3339(s: string): GoTime | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{1,2}):(\d{2}):(\d{2})(?:[.,](\d+))?(?:Z|([+-])(\d{2}):(\d{2}))$/.exec(s);
  if (!m) return undefined;
  const [y, mo, d, h, mi, sec] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || d > daysIn(mo, y) || h > 23 || mi > 59 || sec > 59) return undefined;
  const oh = Number(m[9] ?? 0);
  const om = Number(m[10] ?? 0);
  if (oh > 24 || om > 59) return undefined;
  const offset = (m[8] === '-' ? -1 : 1) * (oh * 3600 + om * 60);
  const nanos = Number((m[7] ?? '').slice(0, 9).padEnd(9, '0'));
  return { unix: unixOf(y, mo, d, h, mi, sec) - offset, nanos, offset };
}

/** The wall clock of a time in the offset it was given with. */
function wall(t: GoTime): Date {
  return new Date((t.unix + t.offset) * 1000);
}

/** Pure: Go's t.Format("2006-1-2 15:4:5"), upstream's dateLayout for --since and --until. */
export function journalDate(t: GoTime): string {
  const w = wall(t);
  return `${String(w.getUTCFullYear()).padStart(4, '0')}-${w.getUTCMonth() + 1}-${w.getUTCDate()} ${String(w.getUTCHours()).padStart(2, '0')}:${w.getUTCMinutes()}:${w.getUTCSeconds()}`;
}

/** Pure: Go's JSON form of a time (RFC3339Nano), as field errors show it. */
export function rfc3339Nano(t: GoTime): string {
  const w = wall(t);
  const p = (n: number, l = 2) => String(n).padStart(l, '0');
  const frac = t.nanos ? `.${p(t.nanos, 9).replace(/0+$/, '')}` : '';
  const a = Math.abs(t.offset);
  const zone = t.offset === 0 ? 'Z' : `${t.offset < 0 ? '-' : '+'}${p(Math.floor(a / 3600))}:${p(Math.floor(a / 60) % 60)}`;
  return `${p(w.getUTCFullYear(), 4)}-${p(w.getUTCMonth() + 1)}-${p(w.getUTCDate())}T${p(w.getUTCHours())}:${p(w.getUTCMinutes())}:${p(w.getUTCSeconds())}${frac}${zone}`;
}

const after = (a: GoTime, b: GoTime) => a.unix > b.unix || (a.unix === b.unix && a.nanos > b.nanos);

/**
 * Pure: upstream's newNodeLogQuery. errors (field errors, answered 400) or the query; neither
 * when the request asks nothing of the query mode (no recognised parameter: the file server answers).
 */
export function parseNodeLogQuery(params: URLSearchParams): { query?: NodeLogQuery; errors: string[] } {
  const errors: string[] = [];
  const q: NodeLogQuery = { services: [], files: [], pattern: '' };
  const queries = params.getAll('query');
  for (const v of queries) {
    // A / or \ says file; foo.log without one is still tried as a service, then as /var/log/foo.log.
    if (/[/\\]/.test(v)) q.files.push(v);
    else if (v.trim() !== '') q.services.push(v);
  }
  if (params.has('query') && q.files.length === 0 && q.services.length === 0)
    errors.push(`query: Invalid value: ${goJSON(queries)}: may not be empty`);

  // Go's query.Get: the first value; empty is absent.
  const first = (k: string) => params.get(k) ?? '';
  for (const k of ['sinceTime', 'untilTime'] as const) {
    const v = first(k);
    if (!v) continue;
    const t = parseRFC3339(v);
    if (t) q[k] = t;
    else errors.push(`${k}: Invalid value: ${goQuote(v)}: invalid time format`);
  }
  for (const k of ['boot', 'tailLines'] as const) {
    const v = first(k);
    if (!v) continue;
    const n = atoi(v);
    if (typeof n === 'bigint') q[k] = n;
    else errors.push(`${k}: Invalid value: ${goQuote(v)}: ${n}`);
  }
  q.pattern = first('pattern');

  if (errors.length > 0) return { errors };
  if (q.services.length === 0 && q.files.length === 0 && !hasOptions(q)) return { errors };
  return { query: q, errors };
}

/** Pure: upstream's validateServices. */
export function validateServices(services: string[]): string[] {
  const errors: string[] = [];
  for (const s of services) {
    if (Buffer.byteLength(s) > MAX_SERVICE_LENGTH)
      errors.push(`query: Invalid value: ${goQuote(s)}: length must be less than ${MAX_SERVICE_LENGTH}`);
    else if (UNSAFE_SERVICE_CHARACTERS.test(s)) errors.push(`query: Invalid value: ${goQuote(s)}: input contains unsupported characters`);
  }
  if (services.length > MAX_SERVICES) errors.push(`query: Too many: ${services.length}: must have at most ${MAX_SERVICES} items`);
  return errors;
}

/**
 * Pure: upstream's nodeLogQuery.validate (answered 406). fileError is what statting the one
 * queried file under /var/log said (Go's os.Root Stat: "statat F: no such file or directory",
 * "statat F: path escapes from parent"), undefined when it exists.
 */
export function validateNodeLogQuery(q: NodeLogQuery, fileError?: string): string[] {
  const errors = validateServices(q.services);
  const { files, services } = q;
  if (files.length === 0 && services.length === 0) errors.push('query: Required value: cannot be empty with options');
  else if (files.length > 0 && services.length > 0)
    errors.push(`query: Invalid value: ${goQuote(`${goList(files)}, ${goList(services)}`)}: cannot specify a file and service`);
  else if (files.length > 1) errors.push(`query: Invalid value: ${goJSON(files)}: cannot specify more than one file`);
  else if (files.length === 1 && hasOptions(q)) errors.push(`query: Invalid value: ${goJSON(files)}: cannot specify file with options`);
  else if (files.length === 1 && fileError) errors.push(`query: Invalid value: ${goJSON(files)}: ${fileError}`);

  if (q.sinceTime && q.untilTime && after(q.sinceTime, q.untilTime))
    errors.push(`untilTime: Invalid value: ${goJSON(rfc3339Nano(q.untilTime))}: must be after \`sinceTime\``);
  if (q.boot !== undefined && q.boot > 0n) errors.push(`boot: Invalid value: ${q.boot}: must be less than 1`);
  if (q.tailLines !== undefined && (q.tailLines < 0n || q.tailLines > MAX_TAIL_LINES))
    errors.push(`tailLines: Invalid value: ${q.tailLines}: must be between 0 and ${MAX_TAIL_LINES}, inclusive`);
  const patternError = goRegexpSyntaxError(q.pattern);
  if (patternError) errors.push(`pattern: Invalid value: ${goQuote(q.pattern)}: ${patternError}`);
  return errors;
}

/** Pure: errs.ToAggregate().Error(): one message as is, several deduplicated in brackets. */
export function aggregate(errors: string[]): string {
  const unique = [...new Set(errors)];
  return unique.length === 1 ? unique[0]! : `[${unique.join(', ')}]`;
}

/** Pure: upstream's getLoggingCmd (Linux): journalctl's arguments for these services. */
export function journalctlArgs(q: NodeLogQuery, services: string[]): string[] {
  const args = ['--utc', '--no-pager', '--output=short-precise'];
  if (q.sinceTime) args.push(`--since=${journalDate(q.sinceTime)}`);
  if (q.untilTime) args.push(`--until=${journalDate(q.untilTime)}`);
  if (q.tailLines !== undefined) args.push('--pager-end', `--lines=${q.tailLines}`);
  for (const s of services) if (s) args.push(`--unit=${s}`);
  if (q.pattern) args.push(`--grep=${q.pattern}`);
  if (q.boot !== undefined) args.push('--boot', `${q.boot}`);
  return args;
}

/**
 * Pure: upstream's splitNativeVsFileLoggers over checkForNativeLogger: a service is in the
 * journal when `journalctl --field _SYSTEMD_UNIT` (undefined: it failed) lists SERVICE.service;
 * the others are looked for as files.
 */
export function splitLoggers(services: string[], units: string | undefined): { journal: string[]; files: string[] } {
  const journal = services.filter((s) => units?.includes(`${s}.service`));
  return { journal, files: services.filter((s) => !journal.includes(s)) };
}

/** Pure: upstream's heuristicsCopyFileLogs: where a service's log may be, first found wins. */
export const serviceLogFiles = (service: string) => [service, `${service}.log`, `${service}/${service}.log`];

/** Pure: what upstream writes when services are not in the journal and options were given. */
export const optionsForFilesMessage = (services: string[]) =>
  `\noptions present and query resolved to log files for ${goList(services)}\ntry without specifying options\n`;
