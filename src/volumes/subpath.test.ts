import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, closeSync, existsSync, fstatSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bindSubPath, cleanSubPaths, prepareSubPath, safeOpen, SubPathError, subPathTarget } from './subpath.ts';

function volume(t: { after(fn: () => void): void }, mode: number): string {
  const root = mkdtempSync(join(tmpdir(), 'sp-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const vol = join(root, 'vol');
  mkdirSync(vol);
  chmodSync(vol, mode);
  return vol;
}

test('subPath: made when missing, refused when a symlink leads out of the volume', (t) => {
  const vol = volume(t, 0o755);
  assert.equal(prepareSubPath(vol, 'x/y'), join(vol, 'x/y'));
  assert.ok(statSync(join(vol, 'x/y')).isDirectory());
  symlinkSync('/etc', join(vol, 'evil'));
  assert.throws(() => prepareSubPath(vol, 'evil'), /not within volume path/);
  assert.throws(() => prepareSubPath(vol, 'evil/new'), /not within volume path/);
  symlinkSync('x', join(vol, 'fine'));
  assert.equal(prepareSubPath(vol, 'fine/y'), join(vol, 'x/y'));
});

test("subPath: each directory made gets the volume's mode whatever the umask, as upstream's doSafeMakeDir", (t) => {
  // [volume mode, what the e2e shows]: an fsGroup emptyDir on tmpfs is 3777 (tmpfs' sticky 1777 plus
  // the fsGroup setgid): "dgtrwxrwxrwx"; on disk 2777; a plain 0755 volume stays 0755.
  const rows: [number, string][] = [
    [0o3777, '3777'],
    [0o2777, '2777'],
    [0o777, '777'],
    [0o755, '755'],
  ];
  const umask = process.umask(0o022);
  t.after(() => process.umask(umask));
  for (const [mode, want] of rows) {
    const vol = volume(t, mode);
    prepareSubPath(vol, 'test-sub/deeper');
    for (const dir of ['test-sub', 'test-sub/deeper'])
      assert.equal((statSync(join(vol, dir)).mode & 0o7777).toString(8), want, `${mode.toString(8)}: ${dir}`);
  }
});

test('subPath: an existing directory keeps its mode', (t) => {
  const vol = volume(t, 0o777);
  mkdirSync(join(vol, 'there'), { mode: 0o700 });
  chmodSync(join(vol, 'there'), 0o700);
  assert.equal(prepareSubPath(vol, 'there'), join(vol, 'there'));
  assert.equal((statSync(join(vol, 'there')).mode & 0o7777).toString(8), '700');
});

test('subPath errors say which step failed, as makeMounts tells SafeMakeDir from PrepareSafeSubpath', (t) => {
  const vol = volume(t, 0o755);
  // [subPath, its symlink target, the step]: upstream's subpath e2e cases.
  const rows: [string, string, SubPathError['stage']][] = [
    ['to-sh', '/bin/sh', 'prepare'], // an existing file outside the volume
    ['dangling', '/bin/notanexistingpath', 'create'], // a path outside the volume that does not exist
    ['back', '../', 'prepare'], // backstepping out of the volume
  ];
  for (const [name, target, stage] of rows) {
    symlinkSync(target, join(vol, name));
    assert.throws(
      () => prepareSubPath(vol, name),
      (e: unknown) => e instanceof SubPathError && e.stage === stage,
      name,
    );
  }
});

test("safeOpen (upstream's doSafeOpen): each component without following symlinks; one swapped for a symlink is refused", (t) => {
  const vol = volume(t, 0o755);
  mkdirSync(join(vol, 'a/b'), { recursive: true });
  const fd = safeOpen(join(vol, 'a/b'), vol);
  assert.ok(fstatSync(fd).isDirectory());
  closeSync(fd);
  // What prepareSubPath resolved, then a container's swap of a/ for a symlink to /etc.
  rmSync(join(vol, 'a'), { recursive: true });
  symlinkSync('/etc', join(vol, 'a'));
  assert.throws(() => safeOpen(join(vol, 'a/b'), vol), { message: `unexpected symlink found ${join(vol, 'a')}` });
  assert.throws(() => safeOpen('/etc', vol), SubPathError);
});

test('bindSubPath: /proc/<kubelet>/fd/<fd> bind-mounted uncanonicalised at a directory or a file as the subPath is; cleanSubPaths removes them', async (t) => {
  const vol = volume(t, 0o755);
  const subPaths = join(vol, '..', 'pod', 'volume-subpaths');
  mkdirSync(join(vol, 'dir'));
  writeFileSync(join(vol, 'file'), 'x');
  const runs: string[][] = [];
  const run = async (argv: string[]) => runs.push(argv);
  const dirTarget = subPathTarget(subPaths, 'vol', 'c', 0);
  const fileTarget = subPathTarget(subPaths, 'vol', 'c', 1);
  await bindSubPath({ base: vol, path: join(vol, 'dir'), target: dirTarget }, run);
  await bindSubPath({ base: vol, path: join(vol, 'file'), target: fileTarget }, run);
  assert.equal(dirTarget, join(subPaths, 'vol/c/0'));
  assert.ok(statSync(dirTarget).isDirectory());
  assert.ok(statSync(fileTarget).isFile());
  assert.deepEqual(
    runs.map((a) => [...a.slice(0, 3), a[3]!.replace(/\d+$/, 'N'), a[4]]),
    [
      ['mount', '--no-canonicalize', '--bind', `/proc/${process.pid}/fd/N`, dirTarget],
      ['mount', '--no-canonicalize', '--bind', `/proc/${process.pid}/fd/N`, fileTarget],
    ],
  );
  await assert.rejects(
    bindSubPath({ base: vol, path: join(vol, 'dir'), target: dirTarget }, async () => Promise.reject(new Error('no'))),
    {
      message: `error mounting ${join(vol, 'dir')}: no`,
    },
  );
  await cleanSubPaths(subPaths);
  assert.ok(!existsSync(subPaths));
});
