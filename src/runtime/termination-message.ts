// A terminated container's message, as upstream's getTerminationMessage: the end of the
// file it wrote at terminationMessagePath (at most 4096 bytes), or, with
// terminationMessagePolicy FallbackToLogsOnError and a failure, the end of its log
// (at most 80 lines and 2048 bytes).
import { openSync, readSync, closeSync, fstatSync } from 'node:fs';
import { parseCRILog } from '../container-logs/cri-log.ts';

const MAX_MESSAGE = 4096;
const MAX_LOG_LINES = 80;
const MAX_LOG_BYTES = 2048;

export interface ExitedContainer {
  exitCode: number;
  reason: string;
  /** Annotations io.kubernetes.container.terminationMessagePath / Policy. */
  path: string;
  policy: string;
  mounts: { containerPath: string; hostPath: string }[];
  logPath: string;
}

/** The last max bytes of a file, or undefined when it cannot be read. */
function readTail(path: string, max: number): Buffer | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const size = fstatSync(fd).size;
    const len = Math.min(size, max);
    const buf = Buffer.alloc(len);
    readSync(fd, buf, 0, len, size - len);
    return buf;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Pure: the text of the last lines of a CRI log, joined as they were written, at most maxBytes from the end. */
export function lastLogText(log: Buffer, maxLines = MAX_LOG_LINES, maxBytes = MAX_LOG_BYTES): string {
  const lines = log.toString('latin1').split('\n').filter(Boolean).slice(-maxLines);
  const text = Buffer.concat(lines.map((l) => parseCRILog(Buffer.from(`${l}\n`, 'latin1'))?.content ?? Buffer.alloc(0)));
  return text.subarray(Math.max(0, text.length - maxBytes)).toString('utf8');
}

export function terminationMessage(c: ExitedContainer): string {
  const fallback = c.policy === 'FallbackToLogsOnError' && c.exitCode !== 0 && c.reason !== 'ContainerCannotRun';
  const mount = c.path ? c.mounts.find((m) => m.containerPath === c.path) : undefined;
  const written = mount ? readTail(mount.hostPath, MAX_MESSAGE) : undefined;
  if (written?.length) return written.toString('utf8');
  if (!fallback || !c.logPath) return '';
  // The log's last 80 lines are within its last 80 * 16 KiB (the runtime splits longer lines).
  const log = readTail(c.logPath, MAX_LOG_LINES * 16 * 1024);
  return log ? lastLogText(log) : '';
}
