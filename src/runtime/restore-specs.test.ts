import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { containerConfig } from './pod-config.ts';
import { restoreSpecs } from './restore-specs.ts';

test('restoreSpecs reads back what CreateContainer wrote: names, grace periods, the preStop hook and ports', () => {
  const pod: Pod = {
    metadata: { name: 'web', namespace: 'shop', uid: 'u1', deletionGracePeriodSeconds: 9 },
    spec: {
      terminationGracePeriodSeconds: 45,
      containers: [
        {
          name: 'main',
          image: 'busybox:1.36',
          ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
          lifecycle: { preStop: { httpGet: { path: '/quit', port: 'http' } } },
        },
      ],
    },
  };
  const c = containerConfig(pod, pod.spec!.containers[0]!, 0);
  assert.deepEqual(restoreSpecs(c.labels!, c.annotations!), {
    pod: {
      metadata: { name: 'web', namespace: 'shop', uid: 'u1', deletionGracePeriodSeconds: 9 },
      spec: { containers: [], terminationGracePeriodSeconds: 45 },
    },
    container: {
      name: 'main',
      lifecycle: { preStop: { httpGet: { path: '/quit', port: 'http' } } },
      ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
    },
  });
  // Unreadable annotations (another writer's) are left out, as upstream logs and goes on.
  const bare = restoreSpecs(c.labels!, { 'io.kubernetes.container.preStopHandler': '{', 'io.kubernetes.pod.terminationGracePeriod': 'x' });
  assert.deepEqual(bare.container, { name: 'main' });
  assert.equal(bare.pod.spec!.terminationGracePeriodSeconds, undefined);
});
