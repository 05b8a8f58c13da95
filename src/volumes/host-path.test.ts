import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setUpHostPath } from './host-path.ts';

test('hostPath type checks, with upstream messages', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hp-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'f');
  writeFileSync(file, '');
  setUpHostPath({ path: join(dir, 'new/sub'), type: 'DirectoryOrCreate' });
  assert.ok(statSync(join(dir, 'new/sub')).isDirectory());
  assert.equal((statSync(join(dir, 'new/sub')).mode & 0o777).toString(8), '755');
  setUpHostPath({ path: join(dir, 'made'), type: 'FileOrCreate' });
  assert.ok(statSync(join(dir, 'made')).isFile());
  for (const ok of [
    { path: dir, type: 'Directory' },
    { path: file, type: 'File' },
    { path: '/dev/null', type: 'CharDevice' },
    { path: join(dir, 'missing') },
    { path: dir, type: 'DirectoryOrCreate' },
  ]) {
    assert.doesNotThrow(() => setUpHostPath(ok), JSON.stringify(ok));
  }
  const bad: [{ path: string; type?: string }, string][] = [
    [{ path: file, type: 'Directory' }, `hostPath type check failed: ${file} is not a directory`],
    [{ path: file, type: 'DirectoryOrCreate' }, `hostPath type check failed: ${file} is not a directory`],
    [{ path: dir, type: 'File' }, `hostPath type check failed: ${dir} is not a file`],
    [{ path: join(dir, 'missing'), type: 'Directory' }, `hostPath type check failed: ${join(dir, 'missing')} is not a directory`],
    [{ path: file, type: 'Socket' }, `hostPath type check failed: ${file} is not a socket file`],
    [{ path: file, type: 'CharDevice' }, `hostPath type check failed: ${file} is not a character device`],
    [{ path: file, type: 'BlockDevice' }, `hostPath type check failed: ${file} is not a block device`],
    [{ path: file, type: 'Bogus' }, 'Bogus is an invalid volume type'],
    [{ path: '/a/../etc', type: 'Directory' }, "invalid HostPath `/a/../etc`: must not contain '..'"],
    [{ path: join(dir, 'no/such/f'), type: 'FileOrCreate' }, `open ${join(dir, 'no/such/f')}: no such file or directory`],
  ];
  for (const [src, message] of bad) assert.throws(() => setUpHostPath(src), { message }, JSON.stringify(src));
});
