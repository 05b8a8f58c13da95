// klog-style structured lines, so operators can grep kubelet-ts logs as they grep the
// upstream kubelet's: `I1122 13:31:05.123456 1234 component] "Message" key="value"`.
export type Fields = Record<string, unknown>;

let verbosity = 0;
export function setVerbosity(v: number): void {
  verbosity = v;
}

function quote(v: unknown): string {
  if (v instanceof Error) return JSON.stringify(v.message);
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean' || v === null || v === undefined) return String(v);
  return JSON.stringify(v);
}

function write(severity: 'I' | 'W' | 'E', component: string, msg: string, fields?: Fields): void {
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
      if (verbosity >= level) write('I', component, m, f);
    },
    warn: (m, f) => write('W', component, m, f),
    error: (m, f) => write('E', component, m, f),
  };
}
