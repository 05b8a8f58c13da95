import { test } from 'node:test';
import assert from 'node:assert/strict';
import { trimService } from './service-cache.ts';

test('trimService: what the link variables need, nothing of the rest', () => {
  assert.deepEqual(
    trimService({
      metadata: { name: 'db', namespace: 'shop', uid: 'u', labels: { a: 'b' }, managedFields: [{ manager: 'kubectl' }] },
      spec: {
        clusterIP: '10.96.0.9',
        clusterIPs: ['10.96.0.9'],
        selector: { app: 'db' },
        ports: [{ name: 'pg', port: 5432, protocol: 'TCP', targetPort: 5432 }],
      },
      status: { loadBalancer: {} },
    }),
    {
      metadata: { name: 'db', namespace: 'shop' },
      spec: { clusterIP: '10.96.0.9', ports: [{ name: 'pg', port: 5432, protocol: 'TCP' }] },
    },
  );
  assert.deepEqual(trimService({ metadata: { name: 'headless', namespace: 'x' }, spec: { clusterIP: 'None' } }).spec, {
    clusterIP: 'None',
    ports: [],
  });
});
