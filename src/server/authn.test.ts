import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import type { ApiClient } from '../apiserver/client.ts';
import { logger } from '../log/log.ts';
import { bearerToken, kubeletAuthenticator } from './authn.ts';

const log = logger('test');
const request = (authorization?: string) => ({ headers: { authorization }, socket: {} }) as unknown as IncomingMessage;

test('bearerToken parses the Authorization header as upstream', () => {
  const cases: [string | undefined, string | undefined][] = [
    ['Bearer abc', 'abc'],
    ['bearer abc', 'abc'],
    ['  Bearer abc  ', 'abc'],
    ['Bearer abc extra', 'abc'],
    ['Bearer  abc', undefined],
    ['Bearer', undefined],
    ['Basic dXNlcjpwdw==', undefined],
    [undefined, undefined],
  ];
  for (const [header, want] of cases) assert.equal(bearerToken(header), want, String(header));
});

function fakeApi(respond: (token: string) => unknown) {
  const calls: { path: string; body: any }[] = [];
  const api: Pick<ApiClient, 'create'> = {
    create: async <T>(path: string, body: unknown) => {
      calls.push({ path, body });
      return respond((body as { spec: { token: string } }).spec.token) as T;
    },
  };
  return { api, calls };
}

const reviews = (token: string) =>
  token === 'good'
    ? {
        status: {
          authenticated: true,
          user: {
            username: 'system:serviceaccount:ns:sa',
            uid: 'u1',
            groups: ['system:serviceaccounts'],
            extra: { 'authentication.kubernetes.io/pod-name': ['p'] },
          },
        },
      }
    : { status: { authenticated: false, error: 'invalid bearer token' } };

test('a bearer token is reviewed by the apiserver, and the answer cached for the TTL', async () => {
  let now = 0;
  const { api, calls } = fakeApi(reviews);
  const authenticate = kubeletAuthenticator({ api, log, now: () => now });
  assert.deepEqual(await authenticate(request('Bearer good')), {
    name: 'system:serviceaccount:ns:sa',
    uid: 'u1',
    groups: ['system:serviceaccounts', 'system:authenticated'],
    extra: { 'authentication.kubernetes.io/pod-name': ['p'] },
  });
  assert.deepEqual(calls[0], {
    path: '/apis/authentication.k8s.io/v1/tokenreviews',
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'good' } },
  });
  assert.equal(await authenticate(request('Bearer bad')), undefined);
  assert.equal(calls.length, 2);
  now = 119_000;
  assert.ok(await authenticate(request('Bearer good')));
  assert.equal(await authenticate(request('Bearer bad')), undefined);
  assert.equal(calls.length, 2);
  now = 121_000;
  assert.ok(await authenticate(request('Bearer good')));
  assert.equal(await authenticate(request('Bearer bad')), undefined);
  assert.equal(calls.length, 4);
});

test('concurrent requests with one token make one TokenReview', async () => {
  const { api, calls } = fakeApi(reviews);
  const authenticate = kubeletAuthenticator({ api, log });
  const users = await Promise.all([1, 2, 3].map(() => authenticate(request('Bearer good'))));
  assert.ok(users.every((u) => u?.name === 'system:serviceaccount:ns:sa'));
  assert.equal(calls.length, 1);
});

test('TokenReview errors give 401 and are not cached', async () => {
  let down = true;
  const { api, calls } = fakeApi((t) => {
    if (down) throw new Error('connection refused');
    return reviews(t);
  });
  const authenticate = kubeletAuthenticator({ api, log });
  assert.equal(await authenticate(request('Bearer good')), undefined);
  down = false;
  assert.ok(await authenticate(request('Bearer good')));
  assert.equal(calls.length, 2);
});

test('without credentials: 401 unless anonymous is enabled', async () => {
  const { api, calls } = fakeApi(reviews);
  assert.equal(await kubeletAuthenticator({ api, log })(request()), undefined);
  assert.deepEqual(await kubeletAuthenticator({ api, log, anonymous: true })(request()), {
    name: 'system:anonymous',
    groups: ['system:unauthenticated'],
  });
  assert.deepEqual(await kubeletAuthenticator({ api, log, anonymous: true })(request('Bearer bad')), {
    name: 'system:anonymous',
    groups: ['system:unauthenticated'],
  });
  // without the webhook, tokens are not even looked at
  assert.equal(await kubeletAuthenticator({ log })(request('Bearer good')), undefined);
  assert.equal(calls.length, 1);
});
