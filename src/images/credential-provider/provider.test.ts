import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServiceAccount } from 'kubernetes-types/core/v1.js';
import type { CredentialProvider, TokenAttributes } from './config.ts';
import type { ExecPlugin } from './exec.ts';
import type { PluginRequest, PluginResponse } from './protocol.ts';
import { PluginProvider, type PullingPod, type ServiceAccountAccess } from './provider.ts';

const V1 = 'credentialprovider.kubelet.k8s.io/v1';
const config = (over: Partial<CredentialProvider> = {}): CredentialProvider => ({
  name: 'p',
  matchImages: ['*.registry.io'],
  defaultCacheDurationMs: 60_000,
  apiVersion: V1,
  args: [],
  env: [],
  ...over,
});
const pod = (serviceAccountName = 'default', name = 'web'): PullingPod => ({
  namespace: 'ns',
  name,
  uid: `uid-${name}`,
  serviceAccountName,
});
const noPod = pod('', '');

/** A fake plugin: records requests, answers with respond(request). */
function fakePlugin(respond: (r: PluginRequest) => Partial<PluginResponse> = () => ({})) {
  const calls: PluginRequest[] = [];
  const exec: ExecPlugin = async (r) => {
    calls.push(r);
    return { cacheKeyType: 'Image', auth: { '*.registry.io': { username: 'u', password: `p${calls.length}` } }, ...respond(r) };
  };
  return { calls, exec };
}

test('cache: by Image, Registry or Global key, for cacheDuration or defaultCacheDuration; 0 is not cached', async () => {
  const cases: {
    name: string;
    response: Partial<PluginResponse>;
    defaultMs?: number;
    /** [image, ms after the first call] in order, and the calls the plugin got by then */
    pulls: [string, number, number][];
  }[] = [
    {
      name: 'Image: the same image from the cache, another image calls',
      response: { cacheKeyType: 'Image' },
      pulls: [
        ['a.registry.io/x', 0, 1],
        ['a.registry.io/x', 59_000, 1],
        ['a.registry.io/y', 59_000, 2],
      ],
    },
    {
      name: 'Image: expired after defaultCacheDuration',
      response: { cacheKeyType: 'Image' },
      pulls: [
        ['a.registry.io/x', 0, 1],
        ['a.registry.io/x', 60_000, 1],
        ['a.registry.io/x', 60_001, 2],
      ],
    },
    {
      name: "Registry: the registry's other images from the cache, not another registry's",
      response: { cacheKeyType: 'Registry' },
      pulls: [
        ['a.registry.io/x', 0, 1],
        ['a.registry.io/y/z', 1000, 1],
        ['b.registry.io/x', 1000, 2],
        ['b.registry.io/y', 1000, 2],
      ],
    },
    {
      name: 'Global: every matching image from the cache',
      response: { cacheKeyType: 'Global' },
      pulls: [
        ['a.registry.io/x', 0, 1],
        ['b.registry.io/y', 1000, 1],
      ],
    },
    {
      name: "the response's cacheDuration wins over the default",
      response: { cacheKeyType: 'Image', cacheDurationMs: 5000 },
      pulls: [
        ['a.registry.io/x', 0, 1],
        ['a.registry.io/x', 5000, 1],
        ['a.registry.io/x', 5001, 2],
      ],
    },
    {
      name: 'cacheDuration 0: not cached',
      response: { cacheKeyType: 'Global', cacheDurationMs: 0 },
      pulls: [
        ['a.registry.io/x', 0, 1],
        ['a.registry.io/x', 1, 2],
      ],
    },
    {
      name: 'defaultCacheDuration 0 and none in the response: not cached',
      response: { cacheKeyType: 'Global' },
      defaultMs: 0,
      pulls: [
        ['a.registry.io/x', 0, 1],
        ['a.registry.io/x', 1, 2],
      ],
    },
    {
      name: 'an image matchImages does not cover: no call, no credentials',
      response: {},
      pulls: [
        ['registry.io/x', 0, 0],
        ['a.b.registry.io/x', 0, 0],
      ],
    },
  ];
  for (const c of cases) {
    let now = 1_000_000;
    const { calls, exec } = fakePlugin(() => c.response);
    const p = new PluginProvider(config({ defaultCacheDurationMs: c.defaultMs ?? 60_000 }), exec, undefined, () => now);
    for (const [image, at, want] of c.pulls) {
      now = 1_000_000 + at;
      const got = await p.provide(image, pod());
      assert.equal(calls.length, want, `${c.name}: ${image} at ${at}`);
      assert.deepEqual(Object.keys(got.config), want ? ['*.registry.io'] : [], `${c.name}: ${image} credentials`);
    }
  }
});

test('an invalid cacheKeyType fails the provide; a plugin failure is wrapped in upstream words', async () => {
  const bad = new PluginProvider(config(), fakePlugin(() => ({ cacheKeyType: 'Pod' })).exec);
  await assert.rejects(bad.provide('a.registry.io/x', pod()), {
    message: 'credential provider plugin did not return a valid cacheKeyType: Pod',
  });
  const failing = new PluginProvider(config(), async () => {
    throw new Error('error execing credential provider plugin p for image a.registry.io/x: exit status 1: denied');
  });
  await assert.rejects(failing.provide('a.registry.io/x', pod()), {
    message:
      'failed to get credential from external registry credential provider: error execing credential provider plugin p for image a.registry.io/x: exit status 1: denied',
  });
});

test('single flight: concurrent pulls of one image run the plugin once', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let n = 0;
  const p = new PluginProvider(config({ defaultCacheDurationMs: 0 }), async () => {
    n++;
    await gate;
    return { cacheKeyType: 'Image', auth: { 'a.registry.io': { username: 'u', password: 'p' } } };
  });
  const pulls = [p.provide('a.registry.io/x', pod()), p.provide('a.registry.io/x', pod()), p.provide('a.registry.io/y', pod())];
  release();
  const got = await Promise.all(pulls);
  assert.equal(n, 2, 'x once, y once');
  for (const g of got) assert.deepEqual(g.config, { 'a.registry.io': { username: 'u', password: 'p' } });
  // Not cached (defaultCacheDuration 0): a later pull calls again.
  await p.provide('a.registry.io/x', pod());
  assert.equal(n, 3);
});

/** Service accounts of namespace ns: default (no annotations), annotated, and their tokens per pod. */
function serviceAccounts() {
  const asked: string[] = [];
  const sas: Record<string, ServiceAccount> = {
    default: { metadata: { name: 'default', namespace: 'ns', uid: 'sa-uid-1' } },
    annotated: {
      metadata: {
        name: 'annotated',
        namespace: 'ns',
        uid: 'sa-uid-2',
        annotations: { 'example.com/role': 'puller', 'example.com/extra': 'x', other: 'y' },
      },
    },
  };
  const access: ServiceAccountAccess = {
    getServiceAccount: async (_ns, name) => {
      const sa = sas[name];
      if (!sa) throw new Error(`serviceaccounts "${name}" not found`);
      return sa;
    },
    token: async (k) => {
      asked.push(`${k.namespace}/${k.serviceAccount} uid=${k.serviceAccountUID} aud=${k.audience} pod=${k.podName}/${k.podUID}`);
      return `token-of-${k.serviceAccount}-for-${k.podName}`;
    },
  };
  return { asked, access };
}
const tokenAttributes = (over: Partial<TokenAttributes> = {}): TokenAttributes => ({
  serviceAccountTokenAudience: 'registry-audience',
  cacheType: 'ServiceAccount',
  requireServiceAccount: true,
  requiredServiceAccountAnnotationKeys: [],
  optionalServiceAccountAnnotationKeys: [],
  ...over,
});

test("token mode: the pod's service account token for the audience, its annotations, the cache per service account", async () => {
  const { asked, access } = serviceAccounts();
  const { calls, exec } = fakePlugin(() => ({ cacheKeyType: 'Registry' }));
  const p = new PluginProvider(
    config({
      tokenAttributes: tokenAttributes({
        requiredServiceAccountAnnotationKeys: ['example.com/role'],
        optionalServiceAccountAnnotationKeys: ['example.com/extra', 'example.com/absent'],
      }),
    }),
    exec,
    access,
  );
  // Without the required annotation: the plugin is not called, no error.
  assert.deepEqual(await p.provide('a.registry.io/x', pod('default')), { config: {} });
  assert.equal(calls.length, 0);
  // A pod without a service account, which the provider requires: not called either.
  assert.deepEqual(await p.provide('a.registry.io/x', noPod), { config: {} });
  // The annotated one: a token bound to the pod, the required and present optional annotations.
  const got = await p.provide('a.registry.io/x', pod('annotated', 'web'));
  assert.deepEqual(calls, [
    {
      image: 'a.registry.io/x',
      serviceAccountToken: 'token-of-annotated-for-web',
      serviceAccountAnnotations: { 'example.com/role': 'puller', 'example.com/extra': 'x' },
    },
  ]);
  assert.deepEqual(asked, ['ns/annotated uid=sa-uid-2 aud=registry-audience pod=web/uid-web']);
  assert.deepEqual(got.serviceAccount, { uid: 'sa-uid-2', namespace: 'ns', name: 'annotated' });
  // cacheType ServiceAccount: another pod of that service account uses the cache.
  await p.provide('a.registry.io/y', pod('annotated', 'api'));
  assert.equal(calls.length, 1);
  // A missing service account is an error.
  await assert.rejects(p.provide('a.registry.io/x', pod('absent')), {
    message: 'failed to get service account: serviceaccounts "absent" not found',
  });
});

test('token mode: cacheType Token caches per token; an echoed token is refused unless Token; optional service account', async () => {
  const { access } = serviceAccounts();
  const byToken = fakePlugin((r) => ({
    cacheKeyType: 'Global',
    auth: { '*.registry.io': { username: 'u', password: r.serviceAccountToken ?? '' } },
  }));
  const p = new PluginProvider(config({ tokenAttributes: tokenAttributes({ cacheType: 'Token' }) }), byToken.exec, access);
  await p.provide('a.registry.io/x', pod('default', 'web'));
  await p.provide('a.registry.io/x', pod('default', 'web'));
  assert.equal(byToken.calls.length, 1, 'the same token: cached');
  await p.provide('a.registry.io/x', pod('default', 'api'));
  assert.equal(byToken.calls.length, 2, "another pod's token: called again");

  const echo = fakePlugin((r) => ({ auth: { '*.registry.io': { username: 'u', password: r.serviceAccountToken ?? '' } } }));
  const sa = new PluginProvider(config({ tokenAttributes: tokenAttributes() }), echo.exec, access);
  await assert.rejects(
    sa.provide('a.registry.io/x', pod()),
    /returned the service account token as the password which is not allowed when service account cache type is not set to 'Token'/,
  );

  // requireServiceAccount false: a pod without one still gets the plugin, without a token.
  const optional = fakePlugin();
  const o = new PluginProvider(config({ tokenAttributes: tokenAttributes({ requireServiceAccount: false }) }), optional.exec, access);
  const got = await o.provide('a.registry.io/x', noPod);
  assert.deepEqual(optional.calls, [{ image: 'a.registry.io/x' }]);
  assert.equal(got.serviceAccount, undefined);
});

test('without token attributes (or with the gate off) no token is asked for', async () => {
  const { asked, access } = serviceAccounts();
  const { calls, exec } = fakePlugin();
  await new PluginProvider(config(), exec, access).provide('a.registry.io/x', pod('annotated'));
  await new PluginProvider(config({ name: 'q', tokenAttributes: tokenAttributes() }), exec, undefined).provide(
    'a.registry.io/y',
    pod('annotated'),
  );
  assert.deepEqual(calls, [{ image: 'a.registry.io/x' }, { image: 'a.registry.io/y' }]);
  assert.deepEqual(asked, []);
});
