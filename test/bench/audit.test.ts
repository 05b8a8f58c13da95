import { test } from 'node:test';
import assert from 'node:assert/strict';
import { requestsBy, total } from './audit.ts';

let id = 0;
const line = (
  user: string,
  verb: string,
  at: string,
  resource?: string,
  subresource?: string,
  stage = 'ResponseComplete',
  auditID = String(++id),
) =>
  JSON.stringify({
    auditID,
    stage,
    user: { username: user },
    verb,
    requestReceivedTimestamp: at,
    objectRef: resource ? { resource, subresource } : undefined,
  });

test('requestsBy: one user, in the window, by verb and resource, a watch once', () => {
  const me = 'system:node:a';
  const lines = [
    line(me, 'patch', '2026-11-26T10:00:00.500Z', 'pods', 'status'),
    line(me, 'patch', '2026-11-26T10:00:01.000Z', 'pods', 'status'),
    line(me, 'update', '2026-11-26T10:00:02.000Z', 'leases'),
    // A watch is logged when its response starts and again when it ends.
    line(me, 'watch', '2026-11-26T10:00:02.500Z', 'pods', undefined, 'ResponseStarted', 'w1'),
    line(me, 'watch', '2026-11-26T10:00:02.500Z', 'pods', undefined, 'ResponseComplete', 'w1'),
    line('system:node:ab', 'update', '2026-11-26T10:00:02.000Z', 'leases'),
    line(me, 'get', '2026-11-26T09:59:59.999Z', 'nodes'),
    line(me, 'get', '2026-11-26T10:00:03.000Z', 'nodes'),
  ];
  const got = requestsBy(lines, me, Date.parse('2026-11-26T10:00:00Z'), Date.parse('2026-11-26T10:00:03Z'));
  assert.deepEqual(
    [...got],
    [
      ['patch pods/status', 2],
      ['update leases', 1],
      ['watch pods', 1],
    ],
  );
  assert.equal(total(got), 4);
});

test('requestsBy with prefix: every node of one kind (hollow nodes)', () => {
  const lines = [
    line('system:node:hollow-ts-0', 'update', '2026-12-03T10:00:10Z', 'leases'),
    line('system:node:hollow-ts-1', 'watch', '2026-12-03T10:00:20Z', 'pods', undefined, 'ResponseStarted', 'w2'),
    line('system:node:hollow-ts-1', 'watch', '2026-12-03T10:00:20Z', 'pods', undefined, 'ResponseComplete', 'w2'),
    line('system:node:hollow-km-0', 'update', '2026-12-03T10:00:30Z', 'leases'),
    line('system:node:hollow-ts-0', 'patch', '2026-12-03T10:00:40Z', 'nodes', 'status'),
    line('system:node:hollow-ts-0', 'update', '2026-12-03T10:02:00Z', 'leases'),
  ];
  const from = Date.parse('2026-12-03T10:00:00Z');
  assert.deepEqual(
    requestsBy(lines, 'system:node:hollow-ts-', from, from + 60_000, true),
    new Map([
      ['update leases', 1],
      ['watch pods', 1],
      ['patch nodes/status', 1],
    ]),
  );
});
