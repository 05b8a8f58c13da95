import { test } from 'node:test';
import assert from 'node:assert/strict';
import { requestsBy, total } from './audit.ts';

const line = (user: string, verb: string, at: string, resource?: string, subresource?: string) =>
  JSON.stringify({
    user: { username: user },
    verb,
    requestReceivedTimestamp: at,
    objectRef: resource ? { resource, subresource } : undefined,
  });

test('requestsBy: one user, in the window, by verb and resource', () => {
  const me = 'system:node:a';
  const lines = [
    line(me, 'patch', '2026-11-26T10:00:00.500Z', 'pods', 'status'),
    line(me, 'patch', '2026-11-26T10:00:01.000Z', 'pods', 'status'),
    line(me, 'update', '2026-11-26T10:00:02.000Z', 'leases'),
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
    ],
  );
  assert.equal(total(got), 3);
});
