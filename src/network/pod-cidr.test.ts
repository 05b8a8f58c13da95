import { test } from 'node:test';
import assert from 'node:assert/strict';
import { podCIDRUpdater } from './pod-cidr.ts';

const quiet = { info() {}, error() {} };

test('podCIDRUpdater: each new CIDR once to the runtime; empty and unchanged ones not; a failed one again', async () => {
  const rows: { calls: string[]; fail?: string; sent: string[] }[] = [
    { calls: ['10.100.0.0/24'], sent: ['10.100.0.0/24'] },
    { calls: ['', '10.100.0.0/24', '10.100.0.0/24'], sent: ['10.100.0.0/24'] },
    { calls: ['10.100.0.0/24', '10.88.1.0/24', '10.88.1.0/24'], sent: ['10.100.0.0/24', '10.88.1.0/24'] },
    { calls: ['10.88.1.0/24', '10.88.1.0/24'], fail: '10.88.1.0/24', sent: ['10.88.1.0/24', '10.88.1.0/24'] },
  ];
  for (const row of rows) {
    const sent: string[] = [];
    let failures = row.fail ? 1 : 0;
    const update = podCIDRUpdater(
      {
        async updateRuntimeConfig(r) {
          sent.push(r.runtimeConfig.networkConfig.podCidr);
          if (failures-- > 0) throw new Error('runtime down');
        },
      },
      quiet,
    );
    for (const c of row.calls) await update(c);
    assert.deepEqual(sent, row.sent, JSON.stringify(row.calls));
  }
});
