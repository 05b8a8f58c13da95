// A fast slice of the upstream conformance tests (`make conformance` runs them all): the
// e2e.test binary of the pinned release against the cluster of kubelet-ts nodes, so that a
// regression in what they check shows in `make test`. The tests are chosen to cover the kubelet's main paths in
// about a minute: pod lifecycle, init containers, hooks, downward API env, projected
// volumes, security context, ephemeral containers and exec, an image volume pulled from the
// registry, DRA claims and device health; and what crosses nodes: Services,
// DNS, the apiserver's proxy, logs and a rolling update.
import { before, test } from 'node:test';
import { ensureCluster } from './cluster.ts';
import { SMOKE, buildConformance, runSmoke } from './smoke.ts';

before(() => {
  ensureCluster();
  buildConformance();
});

test('a slice of the upstream conformance tests passes against kubelet-ts', { timeout: 20 * 60_000 }, () =>
  runSmoke('conformance-smoke', SMOKE.local),
);
