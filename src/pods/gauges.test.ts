import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { podGauges } from './gauges.ts';

const pod = (name: string, o: { static?: boolean; ephemeral?: number } = {}): Pod => ({
  metadata: { name, annotations: o.static ? { 'kubernetes.io/config.source': 'file' } : {} },
  spec: { containers: [{ name: 'c' }], ephemeralContainers: Array.from({ length: o.ephemeral ?? 0 }, (_, i) => ({ name: `e${i}` })) },
});
const isStatic = (p: Pod) => p.metadata?.annotations?.['kubernetes.io/config.source'] === 'file';

test('podGauges: desired, active, mirror, working and ephemeral counts, as upstream labels them', () => {
  const g = podGauges(
    [
      { pod: pod('a', { ephemeral: 2 }), state: 'syncing', desired: true },
      { pod: pod('b'), state: 'terminating', desired: true },
      { pod: pod('c'), state: 'terminated', desired: false },
      { pod: pod('s', { static: true }), state: 'syncing', desired: true },
      { pod: pod('gone'), state: 'finished', desired: false },
    ],
    isStatic,
  );
  assert.deepEqual(g.desired, { regular: 2, static: 1 });
  assert.deepEqual(g.active, { regular: 1, static: 1 });
  assert.equal(g.mirror, 1);
  assert.equal(g.ephemeralContainers, 2);
  const working = Object.fromEntries(g.working.map((w) => [`${w.lifecycle}/${w.config}/${w.static}`, w.count]));
  assert.equal(Object.keys(working).length, 15);
  assert.deepEqual(
    Object.entries(working).filter(([, n]) => n),
    [
      ['sync/desired/', 1],
      ['sync/desired/true', 1],
      ['terminating/desired/', 1],
      ['terminated/orphan/', 1],
    ],
  );
  assert.equal(working['sync/runtime_only/unknown'], 0);
});
