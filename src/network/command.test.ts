import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runCommand } from './command.ts';

test('runCommand: the exit status and output, null with the error when the command cannot run', async () => {
  assert.deepEqual(await runCommand('sh', ['-c', 'echo out; echo err >&2']), { status: 0, stdout: 'out\n', stderr: 'err\n' });
  assert.deepEqual(await runCommand('sh', ['-c', 'exit 3']), { status: 3, stdout: '', stderr: '' });
  const missing = await runCommand('no-such-command-kts', []);
  assert.equal(missing.status, null);
  assert.match(missing.error?.message ?? '', /ENOENT/);
});
