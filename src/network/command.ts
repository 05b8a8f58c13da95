// A host command (ip, ebtables, iptables) run without blocking the event loop: every pod's
// work, watch and CRI answer would wait behind a spawnSync.
import { execFile } from 'node:child_process';

export interface Ran {
  /** The exit status; null when the command could not run (error says why: ENOENT...). */
  status: number | null;
  stdout: string;
  stderr: string;
  error?: Error;
}

/** A command's exit status and output; never rejects. */
export function runCommand(cmd: string, args: string[]): Promise<Ran> {
  return new Promise((resolve) =>
    execFile(cmd, args, { encoding: 'utf8' }, (err, stdout, stderr) => {
      const code = (err as { code?: unknown } | null)?.code;
      if (err && typeof code !== 'number') resolve({ status: null, stdout, stderr, error: err });
      else resolve({ status: err ? (code as number) : 0, stdout, stderr });
    }),
  );
}
