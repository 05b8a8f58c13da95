import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import { podSteps } from './steps.ts';
import type { Admission } from './admission.ts';

const node: Node = {
  metadata: { name: 'n', labels: {} },
  status: { allocatable: { cpu: '2', memory: '4Gi', pods: '110' } },
};
const pod: Pod = { metadata: { name: 'p', namespace: 'ns', uid: 'p' }, spec: { containers: [{ name: 'c' }] } };
const shutdown: Admission = {
  admit: false,
  reason: 'NodeShutdown',
  message: 'Pod was rejected: Pod was rejected as the node is shutting down.',
};
const pressure: Admission = { admit: false, reason: 'Evicted', message: 'Pod was rejected: The node had condition: [MemoryPressure]. ' };

test('admission: node pressure first, the node shutdown manager last, as upstream orders its handlers', () => {
  const cases: [string, Node | undefined, Admission | undefined, Admission | undefined, string][] = [
    ['nothing in the way', node, undefined, { admit: true }, 'admit'],
    ['shutting down', node, undefined, shutdown, 'NodeShutdown'],
    ['shutting down, no Node yet', undefined, undefined, shutdown, 'NodeShutdown'],
    ['pressure and shutting down: pressure answers', node, pressure, shutdown, 'Evicted'],
  ];
  for (const [name, n, underPressure, shuttingDown, want] of cases) {
    const steps = podSteps({
      node: () => n,
      admitUnderPressure: underPressure && (() => underPressure),
      admitShutdown: shuttingDown && (() => shuttingDown),
    } as unknown as Parameters<typeof podSteps>[0]);
    const a = steps.admit(pod, []);
    assert.equal(a.admit ? 'admit' : a.reason, want, name);
  }
});
