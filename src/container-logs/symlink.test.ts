import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readlinkSync, writeFileSync, existsSync, lstatSync, symlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  containerIDOfLink,
  createLogSymlink,
  danglingLinksToRemove,
  legacyLogSymlink,
  listLegacyLinks,
  removeLogSymlink,
} from './symlink.ts';

test('legacyLogSymlink: upstream name, cut to 255 bytes before the suffix', () => {
  const cases: [string, string, string, string, string][] = [
    ['web', 'default', 'nginx', 'abc123', '/var/log/containers/web_default_nginx-abc123.log'],
    ['a_b', 'kube-system', 'c', 'id', '/var/log/containers/a_b_kube-system_c-id.log'],
  ];
  for (const [pod, ns, c, id, want] of cases) assert.equal(legacyLogSymlink(pod, ns, c, id), want);
  const long = legacyLogSymlink('p'.repeat(253), 'ns', 'c', 'f'.repeat(64), '/d');
  assert.equal(long.length, '/d/'.length + 255);
  assert.ok(long.endsWith('pp.log'));
});

test('createLogSymlink links an existing log, skips a missing one, tolerates a repeat; removeLogSymlink is idempotent', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'symlink-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const log = join(dir, '0.log'),
    link = join(dir, 'containers', 'p_ns_c-id.log');
  createLogSymlink(log, link);
  assert.equal(existsSync(link), false);
  writeFileSync(log, 'x');
  createLogSymlink(log, link);
  createLogSymlink(log, link);
  assert.equal(readlinkSync(link), log);
  removeLogSymlink(link);
  removeLogSymlink(link);
  assert.throws(() => lstatSync(link));
});

test('containerIDOfLink and danglingLinksToRemove', () => {
  const id = 'a'.repeat(64);
  assert.equal(containerIDOfLink(`/var/log/containers/p_ns_c-${id}.log`), id);
  assert.equal(containerIDOfLink('/var/log/containers/my-pod_ns_my-c-abc123.log'), 'abc123');
  assert.equal(containerIDOfLink('/var/log/containers/p_ns_c-abc.log'), undefined);
  assert.equal(containerIDOfLink('/var/log/containers/p_ns_c-abcdef.txt'), undefined);
  const links = [
    { path: '/d/p_ns_c-running1.log', dangling: true },
    { path: '/d/p_ns_c-exited1.log', dangling: true },
    { path: '/d/p_ns_c-healthy.log', dangling: false },
    { path: '/d/garbage.log', dangling: true },
  ];
  assert.deepEqual(danglingLinksToRemove(links, new Set(['running1'])), ['/d/p_ns_c-exited1.log', '/d/garbage.log']);
});

test('listLegacyLinks tells dangling links apart', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'links-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'target'), 'x');
  createLogSymlink(join(dir, 'target'), join(dir, 'ok-abcdef.log'));
  symlinkSync(join(dir, 'gone'), join(dir, 'dead-abcdef.log'));
  writeFileSync(join(dir, 'notes.txt'), '');
  assert.deepEqual(
    listLegacyLinks(dir).sort((a, b) => a.path.localeCompare(b.path)),
    [
      { path: join(dir, 'dead-abcdef.log'), dangling: true },
      { path: join(dir, 'ok-abcdef.log'), dangling: false },
    ],
  );
  assert.deepEqual(listLegacyLinks(join(dir, 'missing')), []);
});
