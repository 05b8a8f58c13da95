import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CommandFailed, CommandHelper, parseReply, requestLine, shellQuote } from './command.ts';

test('arguments are quoted for sh, quotes included', () => {
  const cases: [string, string][] = [
    ['/var/lib/kubelet/pods/u/volumes', `'/var/lib/kubelet/pods/u/volumes'`],
    ['a b', `'a b'`],
    [`it's`, `'it'\\''s'`],
    ['$(reboot)`x`', `'$(reboot)\`x\`'`],
    ['', `''`],
  ];
  for (const [arg, want] of cases) assert.equal(shellQuote(arg), want, arg);
});

test('a request is one line; an argument with a newline is refused', () => {
  assert.equal(requestLine(7, ['umount', '-l', '/a b']), `7 'umount' '-l' '/a b'\n`);
  assert.throws(() => requestLine(1, ['mount', '/a\nb']), /contains a newline/);
});

test('replies: id, exit code, output', () => {
  assert.deepEqual(parseReply('3 0 '), { id: 3, code: 0, output: '' });
  assert.deepEqual(parseReply('12 32 mount: /x: permission denied. '), { id: 12, code: 32, output: 'mount: /x: permission denied.' });
  assert.equal(parseReply('garbage'), undefined);
});

test('the helper runs commands concurrently, with their exit codes and output', async () => {
  const h = new CommandHelper();
  const slow = h.run(['sh', '-c', 'sleep 0.5; echo slow']);
  const t0 = performance.now();
  assert.equal(await h.run(['echo', `it's $HOME`]), `it's $HOME`);
  assert.ok(performance.now() - t0 < 400, 'a quick command does not wait for a slow one');
  await assert.rejects(h.run(['sh', '-c', 'echo a; echo b >&2; exit 3']), (e: unknown) => {
    assert.ok(e instanceof CommandFailed);
    assert.equal(e.code, 3);
    assert.equal(e.output, 'a b');
    return true;
  });
  assert.equal(await slow, 'slow');
  const many = await Promise.all(Array.from({ length: 50 }, (_, i) => h.run(['echo', String(i)])));
  assert.deepEqual(
    many,
    Array.from({ length: 50 }, (_, i) => String(i)),
  );
});

test('commands in flight fail when the helper dies, and the next command starts a new one', async () => {
  const h = new CommandHelper();
  // eval runs in the helper's subshell, where $$ is the helper's pid.
  const killed = h.run(['eval', 'kill -9 $$; sleep 5']);
  await assert.rejects(killed, /the command helper \(sh\) exited \(SIGKILL\)/);
  assert.equal(await h.run(['echo', 'again']), 'again');
});
