import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeResponse, encodeRequest, type PluginResponse } from './protocol.ts';

const V1 = 'credentialprovider.kubelet.k8s.io/v1';
const V1BETA1 = 'credentialprovider.kubelet.k8s.io/v1beta1';

test("encodeRequest: the image, and in v1 token mode's token and annotations", () => {
  const cases: [string, Parameters<typeof encodeRequest>[1], object][] = [
    [V1, { image: 'r.io/a' }, { kind: 'CredentialProviderRequest', apiVersion: V1, image: 'r.io/a' }],
    [
      V1,
      { image: 'r.io/a', serviceAccountToken: 'tok', serviceAccountAnnotations: { 'example.com/role': 'x' } },
      {
        kind: 'CredentialProviderRequest',
        apiVersion: V1,
        image: 'r.io/a',
        serviceAccountToken: 'tok',
        serviceAccountAnnotations: { 'example.com/role': 'x' },
      },
    ],
    [
      V1,
      { image: 'r.io/a', serviceAccountToken: '', serviceAccountAnnotations: {} },
      { kind: 'CredentialProviderRequest', apiVersion: V1, image: 'r.io/a' },
    ],
    [V1BETA1, { image: 'r.io/a', serviceAccountToken: 'tok' }, { kind: 'CredentialProviderRequest', apiVersion: V1BETA1, image: 'r.io/a' }],
  ];
  for (const [v, req, want] of cases) assert.deepEqual(JSON.parse(encodeRequest(v, req)), want, JSON.stringify(req));
});

test("encodeRequest: upstream's bytes (Test_encodeRequest)", () => {
  assert.equal(
    encodeRequest(V1, {
      image: 'test.registry.io/foobar',
      serviceAccountToken: 'service-account-token',
      serviceAccountAnnotations: { 'domain.io/b': 'v2', 'domain.io/annotation1': 'value1' },
    }),
    '{"kind":"CredentialProviderRequest","apiVersion":"credentialprovider.kubelet.k8s.io/v1","image":"test.registry.io/foobar","serviceAccountToken":"service-account-token","serviceAccountAnnotations":{"domain.io/annotation1":"value1","domain.io/b":"v2"}}\n',
  );
  assert.equal(
    encodeRequest('credentialprovider.kubelet.k8s.io/v1alpha1', { image: 'test.registry.io/foobar' }),
    '{"kind":"CredentialProviderRequest","apiVersion":"credentialprovider.kubelet.k8s.io/v1alpha1","image":"test.registry.io/foobar"}\n',
  );
});

test('decodeResponse: apiVersion must match, strict fields, one message that never holds the output', () => {
  const ok = (o: object) => JSON.stringify({ kind: 'CredentialProviderResponse', apiVersion: V1, ...o });
  const decodeError = 'error decoding credential provider plugin response from stdout';
  const cases: { name: string; out: string; v?: string; want?: PluginResponse; error?: string | RegExp }[] = [
    {
      name: 'full',
      out: ok({ cacheKeyType: 'Registry', cacheDuration: '5m', auth: { 'r.io': { username: 'u', password: 'p' } } }),
      want: { cacheKeyType: 'Registry', cacheDurationMs: 300_000, auth: { 'r.io': { username: 'u', password: 'p' } } },
    },
    { name: 'minimal', out: ok({}), want: { cacheKeyType: '', auth: {} } },
    {
      name: 'zero duration',
      out: ok({ cacheKeyType: 'Image', cacheDuration: '0s' }),
      want: { cacheKeyType: 'Image', cacheDurationMs: 0, auth: {} },
    },
    {
      name: 'another apiVersion',
      out: ok({ apiVersion: V1BETA1 }),
      error: `apiVersion from credential plugin response did not match expected apiVersion:${V1}, actual apiVersion:${V1BETA1}`,
    },
    {
      name: 'older version asked for',
      v: V1BETA1,
      out: JSON.stringify({ kind: 'CredentialProviderResponse', apiVersion: V1BETA1 }),
      want: { cacheKeyType: '', auth: {} },
    },
    { name: 'not JSON', out: 'password=hunter2', error: /^Error: error reading GVK from response: / },
    { name: 'the wrong kind', out: ok({ kind: 'CredentialProviderRequest' }), error: decodeError },
    { name: 'an unknown field', out: ok({ cacheKeyTyp: 'Image' }), error: decodeError },
    { name: 'an unknown auth field', out: ok({ auth: { 'r.io': { username: 'u', token: 't' } } }), error: decodeError },
    { name: 'a bad duration', out: ok({ cacheDuration: 'soon' }), error: decodeError },
  ];
  for (const c of cases) {
    if (c.error) {
      assert.throws(() => decodeResponse(c.v ?? V1, c.out), c.error instanceof RegExp ? c.error : { message: c.error }, c.name);
      try {
        decodeResponse(c.v ?? V1, c.out);
      } catch (e) {
        assert.ok(!(e as Error).message.includes('hunter2'), 'no output in the message');
      }
    } else assert.deepEqual(decodeResponse(c.v ?? V1, c.out), c.want, c.name);
  }
});
