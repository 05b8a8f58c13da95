import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readOnlyEndpoint } from './read-only.ts';

test('readOnlyEndpoint: nothing listens on 0 (the default), else address:readOnlyPort', () => {
  const cases: [address: string, readOnlyPort: number, want: ReturnType<typeof readOnlyEndpoint>][] = [
    ['0.0.0.0', 0, undefined],
    ['10.0.0.5', 0, undefined],
    ['0.0.0.0', 10255, { address: '0.0.0.0', port: 10255 }],
    ['::', 10255, { address: '::', port: 10255 }],
    ['127.0.0.1', 1, { address: '127.0.0.1', port: 1 }],
  ];
  for (const [address, readOnlyPort, want] of cases)
    assert.deepEqual(readOnlyEndpoint({ address, readOnlyPort }), want, `${address}:${readOnlyPort}`);
});
