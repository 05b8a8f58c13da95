import { test } from 'node:test';
import assert from 'node:assert/strict';
import { status } from '@grpc/grpc-js';
import { CriError } from '../cri/error.ts';
import { execProbe, type ExecRunner } from './exec.ts';

const runner = (r: { exitCode?: number; stdout?: string; stderr?: string; error?: CriError }, seen: unknown[] = []): ExecRunner => ({
  execSync: (async (req: unknown) => {
    seen.push(req);
    if (r.error) throw r.error;
    return { exitCode: r.exitCode ?? 0, stdout: Buffer.from(r.stdout ?? ''), stderr: Buffer.from(r.stderr ?? '') };
  }) as never,
});

test('exec: exit 0 succeeds; the command runs with the probe timeout', async () => {
  const seen: unknown[] = [];
  assert.deepEqual(await execProbe(runner({ stdout: 'ok\n' }, seen), 'c1', ['cat', '/tmp/ready'], 3), {
    result: 'success',
    output: 'ok\n',
  });
  assert.deepEqual(seen, [{ containerId: 'c1', cmd: ['cat', '/tmp/ready'], timeout: 3 }]);
});

test('exec: another exit code fails with stdout and stderr as the output', async () => {
  assert.deepEqual(
    await execProbe(
      runner({ exitCode: 1, stdout: 'a', stderr: "cat: can't open '/tmp/ready': No such file or directory\n" }),
      'c1',
      ['cat', '/tmp/ready'],
      1,
    ),
    { result: 'failure', output: "acat: can't open '/tmp/ready': No such file or directory\n" },
  );
});

test('exec: a timeout fails the probe (ExecProbeTimeout); another CRI error is an error', async () => {
  const timeout = new CriError(
    'ExecSync',
    status.DEADLINE_EXCEEDED,
    'failed to exec in container: timeout 1s exceeded: context deadline exceeded',
  );
  assert.deepEqual(await execProbe(runner({ error: timeout }), 'c1', ['sleep', '10'], 1), {
    result: 'failure',
    output: 'command "sleep 10" timed out',
  });
  const gone = new CriError('ExecSync', status.NOT_FOUND, 'container not found');
  assert.deepEqual(await execProbe(runner({ error: gone }), 'c1', ['true'], 1), {
    result: 'unknown',
    output: '',
    error: 'rpc error: code = NotFound desc = container not found',
  });
});
