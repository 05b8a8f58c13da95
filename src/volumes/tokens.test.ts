import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TokenRequest } from 'kubernetes-types/authentication/v1.js';
import { ApiError } from '../apiserver/client.ts';
import { TokenManager, requiresRefresh } from './tokens.ts';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const issued = (ttl: number, at = T0, token = 't'): TokenRequest => ({
  spec: { audiences: [], expirationSeconds: ttl },
  status: { token, expirationTimestamp: new Date(at + ttl * 1000).toISOString() },
});

test('a token is renewed once 80% of its life has passed, or after 24 h', () => {
  const cases: [TokenRequest, number, number, boolean][] = [
    [issued(3600), 0, 0, false],
    [issued(3600), 2879_000, 0, false],
    [issued(3600), 2881_000, 0, true],
    [issued(3600), 2871_000, 10_000, true], // the jitter brings it forward
    [issued(7 * 86400), 86399_000, 0, false],
    [issued(7 * 86400), 86401_000, 0, true],
    [{ spec: { audiences: [] } }, 0, 0, true],
  ];
  for (const [tr, after, jitter, want] of cases)
    assert.equal(requiresRefresh(tr, T0 + after, jitter), want, `${tr.spec.expirationSeconds} +${after}`);
});

test('the manager requests a bound token, caches it, and renews it', async () => {
  let now = T0;
  const reqs: [string, string, TokenRequest][] = [];
  const m = new TokenManager(
    async (ns, sa, req) => {
      reqs.push([ns, sa, req]);
      return issued(req.spec.expirationSeconds!, now, `tok${reqs.length}`);
    },
    () => now,
  );
  const key = { namespace: 'ns', serviceAccount: 'default', expirationSeconds: 3607, podName: 'p', podUID: 'u' };
  assert.equal(await m.token(key), 'tok1');
  assert.equal(await m.token(key), 'tok1');
  assert.deepEqual(reqs[0]![2].spec, {
    audiences: [],
    expirationSeconds: 3607,
    boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'u' },
  });
  await m.token({ ...key, audience: 'vault' });
  assert.deepEqual(reqs[1]![2].spec.audiences, ['vault']);
  now += 3000_000;
  assert.equal(await m.token(key), 'tok3');
  m.forget('u');
  assert.equal(await m.token(key), 'tok4');
});

test('a failed renewal keeps serving the token while it is valid', async () => {
  let now = T0,
    fail = false;
  const m = new TokenManager(
    async (_ns, _sa, req) => {
      if (fail) throw new Error('down');
      return issued(req.spec.expirationSeconds!, now);
    },
    () => now,
  );
  const key = { namespace: 'ns', serviceAccount: 'sa', expirationSeconds: 600, podName: 'p', podUID: 'u' };
  await m.token(key);
  fail = true;
  now += 590_000;
  assert.equal(await m.token(key), 't');
  now += 20_000;
  await assert.rejects(m.token(key), { message: 'down' });
});

const NO_RELATIONSHIP =
  'POST /api/v1/namespaces/ns/serviceaccounts/default/token: 403 serviceaccounts "default" is forbidden: User "system:node:vm" cannot create resource "serviceaccounts/token" in API group "" in the namespace "ns": no relationship found between node \'vm\' and this object';

test('a token refused while the apiserver has not caught up with the pod is asked again after 0.1, 0.2 and 0.4 s (up to 1.5x), then the refusal stands', async () => {
  let refusals = 2;
  const waits: number[] = [];
  const m = new TokenManager(
    async (_ns, _sa, req) => {
      if (refusals-- > 0) throw new ApiError(403, 'Forbidden', NO_RELATIONSHIP);
      return issued(req.spec.expirationSeconds!);
    },
    () => T0,
    async (ms) => void waits.push(ms),
  );
  const key = { namespace: 'ns', serviceAccount: 'default', expirationSeconds: 3607, podName: 'p', podUID: 'u' };
  assert.equal(await m.token(key), 't');
  assert.equal(waits.length, 2);
  assert.ok(waits[0]! >= 100 && waits[0]! < 150 && waits[1]! >= 200 && waits[1]! < 300, `${waits}`);

  refusals = 10;
  waits.length = 0;
  await assert.rejects(m.token({ ...key, podUID: 'u2' }), { message: NO_RELATIONSHIP });
  assert.equal(waits.length, 3, 'three retries, four requests');
  assert.equal(refusals, 6);

  // Any other refusal is the answer at once.
  const other = new TokenManager(
    async () => {
      throw new ApiError(403, 'Forbidden', 'forbidden');
    },
    () => T0,
    async (ms) => void waits.push(ms),
  );
  waits.length = 0;
  await assert.rejects(other.token(key), { message: 'forbidden' });
  assert.deepEqual(waits, []);
});
