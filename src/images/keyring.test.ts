import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Secret } from 'kubernetes-types/core/v1.js';
import {
  credentialHash,
  globMatch,
  lookup,
  makeKeyring,
  registryKey,
  repositoryOf,
  trackingOf,
  urlsMatch,
  type RegistryAuth,
} from './keyring.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const configJson = (auths: Record<string, unknown>, name = 's'): Secret => ({
  metadata: { name, namespace: 'ns' },
  type: 'kubernetes.io/dockerconfigjson',
  data: { '.dockerconfigjson': b64(JSON.stringify({ auths })) },
});
const dockercfg = (cfg: Record<string, unknown>, name = 'old'): Secret => ({
  metadata: { name, namespace: 'ns' },
  type: 'kubernetes.io/dockercfg',
  data: { '.dockercfg': b64(JSON.stringify(cfg)) },
});
const user = (username: string, password = 'pw') => ({ username, password });

test('repositoryOf normalises as the docker reference library does', () => {
  const cases: [string, string][] = [
    ['busybox', 'docker.io/library/busybox'],
    ['busybox:1.36', 'docker.io/library/busybox'],
    ['busybox@sha256:abc', 'docker.io/library/busybox'],
    ['google/docker-registry', 'docker.io/google/docker-registry'],
    ['docker.io/library/busybox:1.36', 'docker.io/library/busybox'],
    ['index.docker.io/foo/bar:1', 'docker.io/foo/bar'],
    ['index.docker.io/bar', 'docker.io/library/bar'],
    ['localhost/app', 'localhost/app'],
    ['localhost:5000/app:v2', 'localhost:5000/app'],
    ['172.30.255.10:5005/e2e/busybox:1.36', '172.30.255.10:5005/e2e/busybox'],
    ['registry.example.com/a/b/c:tag@sha256:abc', 'registry.example.com/a/b/c'],
    ['Registry/app', 'Registry/app'],
  ];
  for (const [image, want] of cases) assert.equal(repositoryOf(image), want, image);
});

test('registryKey: scheme dropped, /v1/ and /v2/ mean the host, a path is kept', () => {
  const cases: [string, string | undefined][] = [
    ['https://index.docker.io/v1/', 'index.docker.io'],
    ['http://quay.io/v2/', 'quay.io'],
    ['quay.io', 'quay.io'],
    ['quay.io/', 'quay.io'],
    ['https://quay.io/v1/coreos', 'quay.io/coreos'],
    ['registry.io:8080/path', 'registry.io:8080/path'],
    ['*.azurecr.io', '*.azurecr.io'],
    ['registry.io:port/x', undefined],
    ['bad host', undefined],
  ];
  for (const [loc, want] of cases) assert.equal(registryKey(loc), want, loc);
});

test('urlsMatch: host labels by glob, same port, key path a prefix (upstream TestURLsMatch)', () => {
  const cases: [string, string, boolean][] = [
    ['*.kubernetes.io', 'prefix.kubernetes.io', true],
    ['prefix.*.io', 'prefix.kubernetes.io', true],
    ['prefix.kubernetes.*', 'prefix.kubernetes.io', true],
    ['*-good.kubernetes.io', 'prefix-good.kubernetes.io', true],
    ['*.kubernetes.io/blah', 'prefix.kubernetes.io/blah', true],
    ['prefix.*.io/foo', 'prefix.kubernetes.io/foo/bar', true],
    ['*.kubernetes.io:1111/blah', 'prefix.kubernetes.io:1111/blah', true],
    ['prefix.*.io:1111/foo', 'prefix.kubernetes.io:1111/foo/bar', true],
    ['*.kubernetes.io', 'kubernetes.io', false],
    ['*.*.kubernetes.io', 'prefix.kubernetes.io', false],
    ['*.*.kubernetes.io', 'kubernetes.io', false],
    ['kubernetes.io', 'kubernetes.com', false],
    ['k*.io', 'quay.io', false],
    ['*.kubernetes.io:1234/blah', 'prefix.kubernetes.io:1111/blah', false],
    ['prefix.*.io/foo', 'prefix.kubernetes.io:1111/foo/bar', false],
    ['registry.io:5000', 'registry.io/app', false],
    ['registry.io', 'registry.io:5000/app', false],
    ['bar.example.com/pong', 'bar.example.com/pongz', true],
    ['bar.example.com/pong', 'bar.example.com/ping', false],
    ['[::1]:5000', '[::1]:5000/app', true],
  ];
  for (const [key, target, want] of cases) assert.equal(urlsMatch(key, target), want, `${key} ~ ${target}`);
});

test("globMatch follows Go's filepath.Match on a label; a bad pattern matches nothing", () => {
  const cases: [string, string, boolean][] = [
    ['*', 'anything', true],
    ['app*', 'apps', true],
    ['a?c', 'abc', true],
    ['a?c', 'ac', false],
    ['[a-c]x', 'bx', true],
    ['[^a-c]x', 'bx', false],
    ['[^a-c]x', 'dx', true],
    ['\\*', '*', true],
    ['\\*', 'a', false],
    ['[', 'a', false],
    ['[]a]', 'a', false],
    ['a\\', 'a', false],
    ['k8s', 'K8s', false],
  ];
  for (const [pattern, name, want] of cases) assert.equal(globMatch(pattern, name), want, `${pattern} ~ ${name}`);
});

test('lookup: matching credentials, most specific key first, Docker Hub fallback', () => {
  const ada = user('ada');
  const grace = user('grace');
  const rex = user('rex');
  const hub = user('hub');
  const keyring = makeKeyring([
    configJson({ 'bar.example.com/pong': grace, 'bar.example.com': ada, '*.example.com': rex }),
    dockercfg({ 'https://index.docker.io/v1/': hub, 'https://quay.io/v1/': rex }),
  ]);
  const cases: [string, RegistryAuth[]][] = [
    ['bar.example.com/app:1', [ada, rex]],
    ['bar.example.com/pong:1', [grace, ada, rex]],
    ['bar.example.com/pongz/x', [grace, ada, rex]],
    ['bar.example.com/ping', [ada, rex]],
    ['foo.example.com/app', [rex]],
    ['example.com/app', []],
    ['quay.io/coreos/etcd:v3', [rex]],
    ['busybox', [hub]],
    ['busybox:1.36', [hub]],
    ['google/docker-registry', [hub]],
    ['docker.io/library/busybox:1.36', [hub]],
    ['index.docker.io/foo/bar', [hub]],
    ['world.mesos.org/foo/bar', []],
    ['registry:5000/foo/bar', []],
  ];
  for (const [image, want] of cases) assert.deepEqual(lookup(keyring, image), want, image);
});

test('lookup: a docker.io key matches Docker Hub images directly; the same key in two secrets keeps secret order', () => {
  const one = user('one');
  const two = user('two');
  const keyring = makeKeyring([
    configJson({ 'docker.io': one }, 'a'),
    configJson({ 'https://docker.io': two }, 'b'),
    configJson({ 'index.docker.io': user('hub') }, 'c'),
  ]);
  assert.deepEqual(lookup(keyring, 'busybox'), [one, two]);
  assert.deepEqual(lookup(keyring, 'ghcr.io/x/y'), []);
});

test('lookup: host with port and glob keys (upstream TestDockerKeyringForGlob and TestKeyringMiss)', () => {
  const hits: [string, string][] = [
    ['https://hello.kubernetes.io', 'hello.kubernetes.io'],
    ['https://*.docker.io', 'prefix.docker.io'],
    ['https://prefix.*.io', 'prefix.docker.io'],
    ['https://prefix.docker.*', 'prefix.docker.io'],
    ['https://*.docker.io/path', 'prefix.docker.io/path'],
    ['https://prefix.*.io/path', 'prefix.docker.io/path/subpath'],
    ['https://*.docker.io:8888', 'prefix.docker.io:8888'],
    ['https://*.docker.io/path:1111', 'prefix.docker.io/path:1111'],
    ['https://*.docker.io/v1/', 'prefix.docker.io/path:1111'],
    ['https://*.docker.io/v2/', 'prefix.docker.io/path:1111'],
    ['prefix.docker.io:1111', 'prefix.docker.io:1111/path'],
    ['*.docker.io:1111', 'prefix.docker.io:1111/path'],
  ];
  for (const [key, target] of hits) {
    assert.deepEqual(
      lookup(makeKeyring([dockercfg({ [key]: { auth: b64('foo:bar'), email: 'foo@bar.baz' } })]), `${target}/foo/bar`),
      [{ username: 'foo', password: 'bar' }],
      `${key} ~ ${target}`,
    );
  }
  const misses: [string, string][] = [
    ['https://hello.kubernetes.io', 'world.mesos.org/foo/bar'],
    ['https://*.docker.com', 'prefix.docker.io'],
    ['https://suffix.*.io', 'prefix.docker.io'],
    ['https://prefix.docker.c*', 'prefix.docker.io'],
    ['https://prefix.*.io/path:1111', 'prefix.docker.io/path/subpath:1111'],
    ['suffix.*.io', 'prefix.docker.io'],
    ['https://index.docker.io/v1/', 'world.mesos.org/foo/bar'],
  ];
  for (const [key, target] of misses) {
    assert.deepEqual(lookup(makeKeyring([dockercfg({ [key]: { auth: b64('foo:bar') } })]), `${target}/foo/bar`), [], `${key} !~ ${target}`);
  }
});

test('entries: auth decodes to username/password and wins; tokens are kept; field names any case', () => {
  const cases: [unknown, RegistryAuth][] = [
    [
      { username: 'u', password: 'p' },
      { username: 'u', password: 'p' },
    ],
    [{ auth: b64('u:p:with:colons') }, { username: 'u', password: 'p:with:colons' }],
    [{ auth: b64('u:p').replace(/=+$/, '') }, { username: 'u', password: 'p' }],
    [
      { username: 'ignored', password: 'ignored', auth: b64('u:p') },
      { username: 'u', password: 'p' },
    ],
    [
      { Username: 'U', PASSWORD: 'P', Email: 'e@x' },
      { username: 'U', password: 'P' },
    ],
    [{ identitytoken: 'refresh' }, { identityToken: 'refresh' }],
    [{ registrytoken: 'bearer' }, { registryToken: 'bearer' }],
    [{ auth: '' }, {}],
    [{}, {}],
  ];
  for (const [entry, want] of cases)
    assert.deepEqual(lookup(makeKeyring([configJson({ 'r.io': entry })]), 'r.io/app'), [want], JSON.stringify(entry));
});

test('secrets: only the two docker types with their key count; a malformed one throws', () => {
  const opaque: Secret = {
    metadata: { name: 'o' },
    type: 'Opaque',
    data: { '.dockerconfigjson': b64(JSON.stringify({ auths: { 'r.io': user('x') } })) },
  };
  const wrongKey: Secret = {
    metadata: { name: 'w' },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockercfg': b64(JSON.stringify({ 'r.io': user('x') })) },
  };
  const noAuths: Secret = { metadata: { name: 'n' }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': b64('{}') } };
  const empty: Secret = { metadata: { name: 'e' }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': '' } };
  assert.deepEqual(makeKeyring([opaque, wrongKey, noAuths, empty]), []);
  assert.deepEqual(makeKeyring([configJson({ 'bad host': user('x'), 'r.io': user('y') })]), [{ key: 'r.io', auths: [user('y')] }]);

  const bad: [string, Secret][] = [
    [
      'not JSON',
      { metadata: { name: 'j', namespace: 'ns' }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': b64('{nope') } },
    ],
    [
      'auths not an object',
      {
        metadata: { name: 'a', namespace: 'ns' },
        type: 'kubernetes.io/dockerconfigjson',
        data: { '.dockerconfigjson': b64('{"auths": []}') },
      },
    ],
    ['auth without a colon', configJson({ 'r.io': { auth: b64('nocolon') } })],
    ['auth not base64', configJson({ 'r.io': { auth: '!!!!' } })],
    ['username not a string', configJson({ 'r.io': { username: 1 } })],
    ['entry not an object', dockercfg({ 'r.io': 'x' })],
  ];
  for (const [why, s] of bad) assert.throws(() => makeKeyring([s]), new RegExp(`secret ns/${s.metadata!.name}`), why);
});

test("tracking: each credential's source and upstream's hashAuthConfig (Go's JSON of username, password, email)", () => {
  assert.equal(credentialHash('ok', 'pw', 'e@x'), '9db62c2bd7cca337c3b4f4aa55287a7b56d1e007525e013ea4dea30f2aa52b47');
  assert.equal(credentialHash('a<b', 'p&', ''), '8f2eee2e02adc753bd6d10e311c19392568b1225df6fe637b0ea083c44380b71', 'escaped as Go does');
  assert.equal(credentialHash('', '', ''), '44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a', '{}');
  const secret: Secret = {
    metadata: { name: 's', namespace: 'ns', uid: 'u' },
    type: 'kubernetes.io/dockercfg',
    data: {
      '.dockercfg': Buffer.from(JSON.stringify({ 'r.io': { auth: Buffer.from('ok:pw').toString('base64'), email: 'e@x' } })).toString(
        'base64',
      ),
    },
  };
  const [auth] = lookup(makeKeyring([secret]), 'r.io/app');
  // The CRI gets the credential alone; its source is kept beside it.
  assert.deepEqual(auth, { username: 'ok', password: 'pw' });
  assert.deepEqual(trackingOf(auth!), {
    source: { secret: { uid: 'u', namespace: 'ns', name: 's' } },
    hash: '9db62c2bd7cca337c3b4f4aa55287a7b56d1e007525e013ea4dea30f2aa52b47',
  });
  assert.equal(trackingOf({ username: 'elsewhere' }), undefined);
});
