// When a hollow container exits on its own. The in-memory runtime runs no process, so a container
// "runs" until stopped unless its command or an annotation says it ends: enough for pods that
// complete (Jobs, init containers, `sh -c "exit 3"` in tests) and for restarts and CrashLoopBackOff.

/** A container's own end: its exit code, this long after it started. */
export interface ExitPlan {
  afterMs: number;
  exitCode: number;
}

/** Annotation (on the container or the pod's sandbox): exit after this duration ("2s", "500ms", "1m" or plain ms). */
export const EXIT_AFTER_ANNOTATION = 'hollow/exit-after';
/** Annotation: the exit code that EXIT_AFTER_ANNOTATION's exit has (default 0). */
export const EXIT_CODE_ANNOTATION = 'hollow/exit-code';

const SHELLS = new Set(['sh', '/bin/sh', 'bash', '/bin/bash', '/usr/bin/sh', '/usr/bin/bash']);
// `exit N`, `true`, `false`, optionally after `sleep S;` (or `&&`): the scripts tests use to end a container.
const SCRIPT = /^\s*(?:sleep\s+(\d+(?:\.\d+)?)\s*(?:;|&&)\s*)?(exit\s+(\d+)|true|false|exit)\s*;?\s*$/;

/** Pure: "2s", "1.5m", "300ms", "250" (ms) to ms; undefined when it is none of these. */
export function parseDurationMs(s: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(s);
  if (!m) return undefined;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 'ms') as 'ms' | 's' | 'm' | 'h'];
  return Math.round(Number(m[1]) * unit);
}

/**
 * Pure: how a container with this command line and these annotations ends on its own, or
 * undefined when it runs until stopped. The annotation wins over the command.
 */
export function exitPlan(argv: string[], annotations: Record<string, string>): ExitPlan | undefined {
  const after = annotations[EXIT_AFTER_ANNOTATION];
  if (after !== undefined) {
    const afterMs = parseDurationMs(after);
    const exitCode = Number(annotations[EXIT_CODE_ANNOTATION] ?? '0');
    if (afterMs !== undefined && Number.isInteger(exitCode)) return { afterMs, exitCode };
  }
  const [cmd, ...rest] = argv;
  if (cmd === undefined) return undefined;
  const base = cmd.slice(cmd.lastIndexOf('/') + 1);
  if (rest.length === 0 && (base === 'true' || base === 'false')) return { afterMs: 0, exitCode: base === 'true' ? 0 : 1 };
  if (!SHELLS.has(cmd) || rest[0] !== '-c' || rest[1] === undefined) return undefined;
  const m = SCRIPT.exec(rest[1]);
  if (!m) return undefined;
  const afterMs = m[1] === undefined ? 0 : Math.round(Number(m[1]) * 1000);
  const exitCode = m[2] === 'false' ? 1 : m[3] === undefined ? 0 : Number(m[3]) & 255;
  return { afterMs, exitCode };
}
