import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node } from 'kubernetes-types/core/v1.js';
import { CurrentNode, nodeChanges } from './current-node.ts';

const node = (uid: string, podCIDR?: string, memory = '1Gi'): Node => ({
  metadata: { name: 'n1', uid },
  spec: podCIDR ? { podCIDR } : {},
  status: { allocatable: { memory } },
});

test('nodeChanges: a new UID or podCIDR, nothing else', () => {
  const rows: [string, Node | undefined, Node, ReturnType<typeof nodeChanges>][] = [
    ['first sight', undefined, node('u1', '10.244.1.0/24'), { uid: 'u1', podCIDR: '10.244.1.0/24' }],
    ['status only', node('u1', '10.244.1.0/24'), node('u1', '10.244.1.0/24', '2Gi'), {}],
    ['podCIDR assigned later', node('u1'), node('u1', '10.244.1.0/24'), { podCIDR: '10.244.1.0/24' }],
    ['re-registered', node('u1', '10.244.1.0/24'), node('u2', '10.244.2.0/24'), { uid: 'u2', podCIDR: '10.244.2.0/24' }],
    ['podCIDR never taken away', node('u1', '10.244.1.0/24'), node('u1'), {}],
  ];
  for (const [name, prev, next, want] of rows) assert.deepEqual(nodeChanges(prev, next), want, name);
});

test('CurrentNode: readers see the newest Node; listeners hear each new UID and podCIDR once', () => {
  const n = new CurrentNode('n1');
  const heard: string[] = [];
  n.onNewUID((uid) => heard.push(`uid ${uid}`));
  n.onNewPodCIDR((cidr) => heard.push(`cidr ${cidr}`));
  assert.equal(n.owner(), undefined, 'not registered yet');
  n.set(node('u1'));
  n.set(node('u1', '10.244.1.0/24', '2Gi'));
  n.set(node('u1', '10.244.1.0/24', '3Gi'));
  assert.deepEqual(heard, ['uid u1', 'cidr 10.244.1.0/24']);
  assert.deepEqual(n.owner(), { name: 'n1', uid: 'u1' });
  assert.deepEqual(n.allocatable(), { memory: '3Gi' });
});
