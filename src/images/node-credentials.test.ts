import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lookup } from './keyring.ts';
import { dockerConfigPaths, NodeKeyring, readNodeKeyring } from './node-credentials.ts';

test("dockerConfigPaths: upstream's search order, config.json first, then .dockercfg", () => {
  assert.deepEqual(
    dockerConfigPaths('/var/lib/kubelet', '/work', '/root').map((p) => `${p.kind} ${p.path}`),
    [
      'config.json /var/lib/kubelet/config.json',
      'config.json /work/config.json',
      'config.json /root/.docker/config.json',
      'config.json /.docker/config.json',
      '.dockercfg /var/lib/kubelet/.dockercfg',
      '.dockercfg /work/.dockercfg',
      '.dockercfg /root/.dockercfg',
      '.dockercfg /.dockercfg',
    ],
  );
  // A relative root dir is the working dir's; no home dir reads as the working dir's too.
  assert.deepEqual(
    dockerConfigPaths('kubelet', '/work', '').map((p) => p.path),
    [
      '/work/kubelet/config.json',
      '/work/config.json',
      '/work/.docker/config.json',
      '/.docker/config.json',
      '/work/kubelet/.dockercfg',
      '/work/.dockercfg',
      '/work/.dockercfg',
      '/.dockercfg',
    ],
  );
});

const b64 = (s: string) => Buffer.from(s).toString('base64');
const configJson = (host: string, user: string) => JSON.stringify({ auths: { [host]: { auth: b64(`${user}:pw`) } } });
const dockercfg = (host: string, user: string) => JSON.stringify({ [host]: { username: user, password: 'pw' } });

test('readNodeKeyring: the first valid file wins; missing or malformed ones are skipped', () => {
  const paths = dockerConfigPaths('/root-dir', '/cwd', '/home');
  const cases: { name: string; files: Record<string, string>; path?: string; user?: string }[] = [
    { name: 'none', files: {} },
    {
      name: "the root dir's config.json before the home's",
      files: { '/root-dir/config.json': configJson('r.io', 'root'), '/home/.docker/config.json': configJson('r.io', 'home') },
      path: '/root-dir/config.json',
      user: 'root',
    },
    {
      name: 'a malformed config.json is skipped',
      files: { '/root-dir/config.json': '{not json', '/cwd/config.json': configJson('r.io', 'cwd') },
      path: '/cwd/config.json',
      user: 'cwd',
    },
    {
      name: 'a bad auth field makes the file invalid',
      files: {
        '/root-dir/config.json': JSON.stringify({ auths: { 'r.io': { auth: '!!' } } }),
        '/.docker/config.json': configJson('r.io', 'slash'),
      },
      path: '/.docker/config.json',
      user: 'slash',
    },
    {
      name: 'any config.json before any .dockercfg',
      files: { '/root-dir/.dockercfg': dockercfg('r.io', 'old'), '/.docker/config.json': configJson('r.io', 'new') },
      path: '/.docker/config.json',
      user: 'new',
    },
    {
      name: '.dockercfg when no config.json',
      files: { '/home/.dockercfg': dockercfg('r.io', 'old') },
      path: '/home/.dockercfg',
      user: 'old',
    },
    {
      name: 'a config.json without auths counts (and is empty)',
      files: { '/cwd/config.json': '{}', '/home/.dockercfg': dockercfg('r.io', 'old') },
      path: '/cwd/config.json',
    },
  ];
  for (const c of cases) {
    const read = (p: string) => {
      if (p in c.files) return c.files[p]!;
      throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
    };
    const got = readNodeKeyring(paths, read);
    assert.equal(got.path, c.path, c.name);
    assert.deepEqual(
      lookup(got.keyring, 'r.io/app').map((a) => a.username),
      c.user ? [c.user] : [],
      c.name,
    );
  }
});

test('NodeKeyring: read once, again after 5 minutes', () => {
  let now = 0;
  let reads = 0;
  let user = 'first';
  const keyring = new NodeKeyring({
    rootDir: '/root-dir',
    cwd: '/cwd',
    home: '/home',
    now: () => now,
    read: (p) => {
      if (p !== '/root-dir/config.json') throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
      reads++;
      return configJson('r.io', user);
    },
  });
  assert.equal(lookup(keyring.get(), 'r.io/x')[0]?.username, 'first');
  user = 'second';
  now = 299_999;
  assert.equal(lookup(keyring.get(), 'r.io/x')[0]?.username, 'first');
  now = 300_000;
  assert.equal(lookup(keyring.get(), 'r.io/x')[0]?.username, 'second');
  assert.equal(reads, 2);
});
