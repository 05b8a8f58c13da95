// Cases from filepath-securejoin's join_test.go (TestSymlink, TestNoSymlink, TestNonLexical).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type JoinFs, secureJoin } from './secure-join.ts';

function withDir(fn: (dir: string) => Promise<void>) {
  return async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'securejoin-')));
    try {
      await fn(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

test(
  'without symlinks: Clean and Join, never above root',
  withDir(async (dir) => {
    const cases: [string, string][] = [
      ['somepath', 'somepath'],
      ['even/more/path', 'even/more/path'],
      ['/this/is/a/path', 'this/is/a/path'],
      ['also/a/../path/././/with/some/./.././junk', 'also/path/with/junk'],
      ['yetanother/../path/././/with/some/./.././junk../../../../../../../../../../../../etc/passwd', 'etc/passwd'],
      ['/../../../../../../../../../../../../../../../../etc/passwd', 'etc/passwd'],
      ['../../../../../../../../../../../../../../../../somedir', 'somedir'],
      ['../../../../../../../../../../../../../../../../', ''],
      ['./../../.././././../../../../../../../../../../../../../../../../etc passwd', 'etc passwd'],
      ['', ''],
      ['.', ''],
    ];
    for (const [unsafe, want] of cases) assert.equal(await secureJoin(dir, unsafe), want ? `${dir}/${want}` : dir, unsafe);
  }),
);

test(
  'symlinks resolve inside root: absolute targets start at root, .. stops there',
  withDir(async (dir) => {
    symlinkSync('somepath', join(dir, 'etc'));
    symlinkSync('../../../../../../../../../../../../../etc', join(dir, 'etclink'));
    symlinkSync('/../../../../../../../../../../../../../etc/passwd', join(dir, 'passwd'));
    mkdirSync(join(dir, 'subdir'));
    mkdirSync(join(dir, 'cousinparent/cousin'), { recursive: true });
    symlinkSync('../cousinparent/cousin', join(dir, 'subdir/link'));
    symlinkSync('/../cousinparent/cousin', join(dir, 'subdir/link2'));
    const cases: [string, string][] = [
      ['passwd', 'somepath/passwd'],
      ['etclink', 'somepath'],
      ['etc', 'somepath'],
      ['etc/test', 'somepath/test'],
      ['etc/test/..', 'somepath'],
      ['subdir/link/test', 'cousinparent/cousin/test'],
      ['subdir/link2/test', 'cousinparent/cousin/test'],
      ['subdir/../test', 'test'],
      // Not lexical: .. after a symlink leaves its target.
      ['subdir/link/../test', 'cousinparent/test'],
      ['subdir/link2/../test', 'cousinparent/test'],
    ];
    for (const [unsafe, want] of cases) assert.equal(await secureJoin(dir, unsafe), `${dir}/${want}`, unsafe);
  }),
);

test('a symlink loop, a root with .., and a failing lstat are errors with upstream texts', async () => {
  const loop: JoinFs = { kind: async () => 'symlink', readlink: async () => 'a' };
  await assert.rejects(secureJoin('/v', 'a', loop), { message: 'SecureJoin /v/a: too many levels of symbolic links' });
  await assert.rejects(secureJoin('/v/../x', 'a', loop), { message: "root path provided to SecureJoin contains '..' components" });
  const denied: JoinFs = {
    kind: async (p) => {
      throw new Error(`lstat ${p}: permission denied`);
    },
    readlink: async () => '',
  };
  await assert.rejects(secureJoin('/v', 'a/b', denied), { message: 'lstat /v//a: permission denied' });
});
