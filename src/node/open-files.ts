// maxOpenFiles: the kubelet process's RLIMIT_NOFILE, soft and hard, as upstream's RunKubelet sets
// it before starting the kubelet (pkg/util/rlimit SetNumFiles). Node.js has no setrlimit, so it
// is set from outside on this process with util-linux's prlimit(1) (prlimit(2) on our pid); the
// limit is per process and read at each open, so it holds from then on. Raising the hard limit
// takes CAP_SYS_RESOURCE: without it (or without prlimit) the kubelet says so and runs on, as
// upstream logs "Failed to set rlimit on max file handles" and runs on.
import { spawnSync } from 'node:child_process';

/** Pure: prlimit's arguments that set this process's open-files limit, both soft and hard, to n. */
export function prlimitArgs(pid: number, n: number): string[] {
  return ['--pid', String(pid), `--nofile=${n}:${n}`];
}

export type Run = (cmd: string, args: string[]) => { status: number | null; stderr: string; error?: Error };

const run: Run = (cmd, args) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return { status: r.status, stderr: r.stderr ?? '', ...(r.error ? { error: r.error } : {}) };
};

/** Sets the limit; the error when it could not, in a line for the log. */
export function setOpenFilesLimit(n: number, pid = process.pid, exec: Run = run): string | undefined {
  const r = exec('prlimit', prlimitArgs(pid, n));
  if (r.error) return `prlimit: ${r.error.message}`;
  return r.status === 0 ? undefined : r.stderr.trim() || `prlimit exited with ${r.status}`;
}
