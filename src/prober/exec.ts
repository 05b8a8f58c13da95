// The exec probe: the command runs in the container through CRI ExecSync, bounded by
// timeoutSeconds (the runtime kills it then). Exit 0 is success, as upstream's pkg/probe/exec.
import { status } from '@grpc/grpc-js';
import type { RuntimeClient } from '../cri/runtime-client.ts';
import { CriError, goErrorText } from '../cri/error.ts';
import { MAX_OUTPUT_BYTES, type Outcome } from './outcome.ts';

export type ExecRunner = Pick<RuntimeClient, 'execSync'>;

export async function execProbe(cri: ExecRunner, containerId: string, cmd: string[], timeoutSeconds: number): Promise<Outcome> {
  try {
    const r = await cri.execSync({ containerId, cmd, timeout: timeoutSeconds });
    // Combined stdout and stderr, as upstream's RunInContainer returns them.
    const output = Buffer.concat([r.stdout, r.stderr]).subarray(0, MAX_OUTPUT_BYTES).toString('utf8');
    return { result: r.exitCode === 0 ? 'success' : 'failure', output };
  } catch (e) {
    // A command that outlives its timeout fails the probe (ExecProbeTimeout, GA): containerd
    // answers DeadlineExceeded ("timeout 1s exceeded: context deadline exceeded").
    if (isTimeout(e)) return { result: 'failure', output: `command ${JSON.stringify(cmd.join(' '))} timed out` };
    // As upstream's event prints the runtime's error: "rpc error: code = NotFound desc = ...".
    return { result: 'unknown', output: '', error: goErrorText(e) };
  }
}

function isTimeout(e: unknown): boolean {
  if (!(e instanceof CriError)) return false;
  return e.code === status.DEADLINE_EXCEEDED || /timeout .* exceeded/.test(e.details);
}
