import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lstatSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fsGroupMode, rootMatches, setVolumeOwnership } from './ownership.ts';

test('fsGroup modes as upstream (rw 0660, ro 0440; dirs setgid and g+x)', () => {
  const cases: [number, boolean, boolean, number][] = [
    [0o644, false, false, 0o664],
    [0o644, false, true, 0o644],
    [0o600, false, true, 0o640],
    [0o755, true, false, 0o2775],
    [0o777, true, true, 0o2777],
    [0o400, false, true, 0o440],
  ];
  for (const [mode, dir, ro, want] of cases)
    assert.equal(fsGroupMode(mode, dir, ro).toString(8), want.toString(8), `${mode.toString(8)} ${dir} ${ro}`);
});

test('the whole tree gets the group; symlinks are not chmodded', (t) => {
  const d = mkdtempSync(join(tmpdir(), 'own-'));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  mkdirSync(join(d, 'sub'), { mode: 0o755 });
  writeFileSync(join(d, 'sub/f'), 'x', { mode: 0o600 });
  symlinkSync('sub/f', join(d, 'link'));
  setVolumeOwnership(d, 1234, true);
  for (const p of ['', 'sub', 'sub/f', 'link']) assert.equal(lstatSync(join(d, p)).gid, 1234, p);
  assert.equal((statSync(join(d, 'sub/f')).mode & 0o7777).toString(8), '640');
  assert.equal((statSync(join(d, 'sub')).mode & 0o7777).toString(8), '2755');
});

test('OnRootMismatch: a root with the group, its permissions and setgid is left be (upstream requiresPermissionChange)', () => {
  const cases: [string, { gid: number; mode: number; isDir: boolean }, boolean, boolean][] = [
    ['matching rw dir', { gid: 2000, mode: 0o42770, isDir: true }, false, true],
    ['other group', { gid: 1000, mode: 0o42770, isDir: true }, false, false],
    ['no setgid', { gid: 2000, mode: 0o40770, isDir: true }, false, false],
    ['no group write', { gid: 2000, mode: 0o42750, isDir: true }, false, false],
    ['no group write, read-only', { gid: 2000, mode: 0o42750, isDir: true }, true, true],
    ['a file', { gid: 2000, mode: 0o102770, isDir: false }, false, false],
  ];
  for (const [name, root, ro, want] of cases) assert.equal(rootMatches(root, 2000, ro), want, name);
});
