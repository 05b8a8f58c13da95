import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiPath } from './paths.ts';

test('apiserver paths', () => {
  const rows: [Parameters<typeof apiPath>, string][] = [
    [[{ resource: 'nodes' }], '/api/v1/nodes'],
    [[{ resource: 'nodes', name: 'n1' }], '/api/v1/nodes/n1'],
    [[{ resource: 'pods', namespace: 'ns', name: 'p', subresource: 'status' }], '/api/v1/namespaces/ns/pods/p/status'],
    [[{ resource: 'secrets', namespace: 'ns', name: 'a b/c' }], '/api/v1/namespaces/ns/secrets/a%20b%2Fc'],
    [
      [{ group: 'coordination.k8s.io', resource: 'leases', namespace: 'kube-node-lease', name: 'n1' }],
      '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1',
    ],
    [[{ resource: 'pods' }, { fieldSelector: 'spec.nodeName=n1' }], '/api/v1/pods?fieldSelector=spec.nodeName%3Dn1'],
    [[{ resource: 'pods' }, {}], '/api/v1/pods'],
  ];
  for (const [args, want] of rows) assert.equal(apiPath(...args), want);
});
