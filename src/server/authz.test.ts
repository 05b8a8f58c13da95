import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiClient } from '../apiserver/client.ts';
import { forbiddenMessage, requestAttributes, webhookAuthorizer } from './authz.ts';

test('requestAttributes maps paths to node subresources as upstream (fine-grained authz on)', () => {
  const cases: [method: string, path: string, verb: string, subresources: string[]][] = [
    ['GET', '/stats/summary', 'get', ['stats']],
    ['GET', '/stats', 'get', ['stats']],
    ['GET', '/metrics', 'get', ['metrics']],
    ['GET', '/metrics/cadvisor', 'get', ['metrics']],
    ['GET', '/metricsfoo', 'get', ['proxy']],
    ['GET', '/logs/syslog', 'get', ['log']],
    ['GET', '/logs/', 'get', ['log']],
    ['GET', '/logs', 'get', ['log']],
    ['GET', '/logs/apt/history.log', 'get', ['log']],
    ['GET', '/logs/../etc/passwd', 'get', ['log']],
    ['GET', '/logsfoo', 'get', ['proxy']],
    ['GET', '/metrics/probes', 'get', ['metrics']],
    ['GET', '/runningpods', 'get', ['pods', 'proxy']],
    ['POST', '/checkpoint/ns/pod/c', 'create', ['checkpoint']],
    ['GET', '/spec/', 'get', ['proxy']],
    ['GET', '/healthz', 'get', ['healthz', 'proxy']],
    ['GET', '/healthz/syncloop', 'get', ['healthz', 'proxy']],
    ['HEAD', '/healthz', 'get', ['healthz', 'proxy']],
    ['GET', '/pods', 'get', ['pods', 'proxy']],
    ['GET', '/runningpods/', 'get', ['pods', 'proxy']],
    ['GET', '/configz', 'get', ['configz', 'proxy']],
    ['GET', '/statusz', 'get', ['statusz']],
    ['GET', '/statusz/x', 'get', ['statusz']],
    ['GET', '/flagz', 'get', ['configz']],
    ['POST', '/flagz', 'create', ['configz']],
    ['GET', '/flagzz', 'get', ['proxy']],
    ['GET', '/containerLogs/ns/pod/c', 'get', ['proxy']],
    ['POST', '/exec/ns/pod/c', 'create', ['proxy']],
    ['POST', '/attach/ns/pod/c', 'create', ['proxy']],
    ['POST', '/portForward/ns/pod', 'create', ['proxy']],
    ['POST', '/run/ns/pod/c', 'create', ['proxy']],
    ['PUT', '/anything', 'update', ['proxy']],
    ['PATCH', '/anything', 'patch', ['proxy']],
    ['DELETE', '/anything', 'delete', ['proxy']],
    ['OPTIONS', '/anything', '', ['proxy']],
  ];
  for (const [method, path, verb, subresources] of cases) {
    const attrs = requestAttributes('node-1', method, path);
    assert.deepEqual(
      attrs.map((a) => a.subresource),
      subresources,
      `${method} ${path}`,
    );
    for (const a of attrs)
      assert.deepEqual(
        { ...a, subresource: '' },
        { verb, apiGroup: '', apiVersion: 'v1', resource: 'nodes', subresource: '', name: 'node-1', path },
        `${method} ${path}`,
      );
  }
});

test('forbiddenMessage has upstream shape', () => {
  const user = { name: 'bob', groups: [] };
  assert.equal(
    forbiddenMessage(user, requestAttributes('n', 'GET', '/pods')),
    'Forbidden (user=bob, verb=get, resource=nodes, subresource(s)=[pods proxy])\n',
  );
  assert.equal(
    forbiddenMessage(user, requestAttributes('n', 'POST', '/exec/a/b/c')),
    'Forbidden (user=bob, verb=create, resource=nodes, subresource(s)=[proxy])\n',
  );
});

function fakeApi(respond: (body: { spec: { user: string } }) => unknown) {
  const calls: { path: string; body: any }[] = [];
  const api: Pick<ApiClient, 'create'> = {
    create: async <T>(path: string, body: unknown) => {
      calls.push({ path, body });
      return respond(body as { spec: { user: string } }) as T;
    },
  };
  return { api, calls };
}

test('webhookAuthorizer sends a SubjectAccessReview and caches allow 5m, deny 30s', async () => {
  let now = 0;
  const { api, calls } = fakeApi((b) => ({ status: { allowed: b.spec.user === 'alice', reason: 'because' } }));
  const authorize = webhookAuthorizer(api, { now: () => now });
  const [attrs] = requestAttributes('node-1', 'GET', '/metrics');
  const alice = { name: 'alice', uid: 'u1', groups: ['g', 'system:authenticated'], extra: { scopes: ['x'] } };
  const bob = { name: 'bob', groups: ['system:authenticated'] };

  assert.deepEqual(await authorize(alice, attrs!), { allowed: true, reason: 'because' });
  assert.equal(calls[0]!.path, '/apis/authorization.k8s.io/v1/subjectaccessreviews');
  assert.deepEqual(calls[0]!.body, {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    spec: {
      user: 'alice',
      uid: 'u1',
      groups: ['g', 'system:authenticated'],
      extra: { scopes: ['x'] },
      resourceAttributes: {
        namespace: '',
        verb: 'get',
        group: '',
        version: 'v1',
        resource: 'nodes',
        subresource: 'metrics',
        name: 'node-1',
      },
    },
  });
  assert.equal((await authorize(bob, attrs!)).allowed, false);
  assert.equal(calls.length, 2);

  now = 29_000; // both cached
  await authorize(alice, attrs!);
  await authorize(bob, attrs!);
  assert.equal(calls.length, 2);
  now = 31_000; // the denial expired
  await authorize(alice, attrs!);
  await authorize(bob, attrs!);
  assert.equal(calls.length, 3);
  now = 301_000; // so did the allowance
  await authorize(alice, attrs!);
  assert.equal(calls.length, 4);
  // other attributes are another question
  await authorize(alice, requestAttributes('node-1', 'GET', '/pods')[0]!);
  assert.equal(calls.length, 5);
});

test('webhookAuthorizer does not cache errors', async () => {
  let fail = true;
  const { api, calls } = fakeApi(() => {
    if (fail) throw new Error('apiserver down');
    return { status: { allowed: true } };
  });
  const authorize = webhookAuthorizer(api);
  const [attrs] = requestAttributes('n', 'GET', '/pods');
  await assert.rejects(authorize({ name: 'a', groups: [] }, attrs!), /apiserver down/);
  fail = false;
  assert.equal((await authorize({ name: 'a', groups: [] }, attrs!)).allowed, true);
  assert.equal(calls.length, 2);
});
