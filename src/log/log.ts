// klog-style structured lines, so operators can grep kubelet-ts logs as they grep the
// upstream kubelet's: `I1122 13:31:05.123456 1234 component] "Message" key="value"`; or, with
// logging.format json (--logging-format=json), one JSON object a line as component-base's
// JSON logger writes them: {"ts":<ms since the epoch>,"caller":...,"msg":...,"v":<level>,...}.
export type Fields = Record<string, unknown>;

let verbosity = 0;
export function setVerbosity(v: number): void {
  verbosity = v;
}

let json = false;
export function setLogFormat(format: 'text' | 'json'): void {
  json = format === 'json';
}

function quote(v: unknown): string {
  if (v instanceof Error) return JSON.stringify(v.message);
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean' || v === null || v === undefined) return String(v);
  return JSON.stringify(v);
}

/** Pure: a JSON line as component-base's zap encoder: ts in milliseconds, the message, v for info, err for errors. */
export function jsonLine(
  severity: 'I' | 'W' | 'E',
  component: string,
  msg: string,
  fields: Fields | undefined,
  level: number,
  nowMs: number,
): string {
  const entry: Record<string, unknown> = { ts: nowMs, caller: component, msg };
  if (severity !== 'E') entry.v = level;
  for (const [k, v] of Object.entries(fields ?? {})) if (v !== undefined) entry[k] = v instanceof Error ? v.message : v;
  return JSON.stringify(entry, (_k, v) => (typeof v === 'bigint' ? String(v) : v));
}

function write(severity: 'I' | 'W' | 'E', component: string, msg: string, fields?: Fields, level = 0): void {
  if (json) {
    (severity === 'I' ? process.stdout : process.stderr).write(
      `${jsonLine(severity, component, msg, fields, level, performance.timeOrigin + performance.now())}\n`,
    );
    return;
  }
  const d = new Date();
  const p2 = (n: number) => String(n).padStart(2, '0');
  const stamp = `${p2(d.getMonth() + 1)}${p2(d.getDate())} ${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, '0')}000`;
  let line = `${severity}${stamp} ${process.pid} ${component}] ${JSON.stringify(msg)}`;
  for (const [k, v] of Object.entries(fields ?? {})) if (v !== undefined) line += ` ${k}=${quote(v)}`;
  (severity === 'I' ? process.stdout : process.stderr).write(line + '\n');
}

export interface Logger {
  info(msg: string, fields?: Fields): void;
  /** Detail shown only at --v >= level, as klog's V(level). */
  v(level: number, msg: string, fields?: Fields): void;
  warn(msg: string, fields?: Fields): void;
  error(msg: string, fields?: Fields): void;
}

export function logger(component: string): Logger {
  return {
    info: (m, f) => write('I', component, m, f),
    v: (level, m, f) => {
      if (verbosity >= level) write('I', component, m, f, level);
    },
    warn: (m, f) => write('W', component, m, f),
    error: (m, f) => write('E', component, m, f),
  };
}
