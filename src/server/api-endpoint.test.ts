import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiEndpoint } from './api-endpoint.ts';
import { readOnlyEndpoint } from './read-only.ts';

test('apiEndpoint: address:port unless enableServer is false; the read-only port does not depend on it', () => {
  const cases: [
    enableServer: boolean,
    readOnlyPort: number,
    api: ReturnType<typeof apiEndpoint>,
    readOnly: ReturnType<typeof readOnlyEndpoint>,
  ][] = [
    [true, 0, { address: '0.0.0.0', port: 10250 }, undefined],
    [false, 0, undefined, undefined],
    [false, 10255, undefined, { address: '0.0.0.0', port: 10255 }],
    [true, 10255, { address: '0.0.0.0', port: 10250 }, { address: '0.0.0.0', port: 10255 }],
  ];
  for (const [enableServer, readOnlyPort, api, readOnly] of cases) {
    const c = { address: '0.0.0.0', port: 10250, enableServer, readOnlyPort };
    assert.deepEqual(apiEndpoint(c), api, `enableServer ${enableServer}`);
    assert.deepEqual(readOnlyEndpoint(c), readOnly, `readOnlyPort ${readOnlyPort}`);
  }
});
