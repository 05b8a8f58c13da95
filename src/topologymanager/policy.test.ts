import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NUMAMask, type ProviderHints } from './bitmask.ts';
import { merge, policyOptions } from './policy.ts';
import { MERGE_CASES, type Provider } from './testdata/merge-cases.ts';

export const providerHints = (p: Provider): ProviderHints =>
  p === null
    ? undefined
    : Object.fromEntries(
        Object.entries(p).map(([r, hs]) => [
          r,
          hs === null ? undefined : hs.map(([n, preferred]) => ({ affinity: n ? NUMAMask.of(...n) : undefined, preferred })),
        ]),
      );

test('merge: the cases upstream answers the same (hack/topologymanager-check.sh)', () => {
  for (const c of MERGE_CASES) {
    const distances = new Map((c.distances ?? []).map((d, i) => [i, d]));
    const opts = { ...policyOptions({}), preferClosestNUMA: !!c.preferClosest };
    const { hint, admit } = merge(c.policy, { nodes: c.nodes, distances }, opts, c.providers.map(providerHints));
    assert.deepEqual({ nodes: hint.affinity?.list() ?? null, preferred: hint.preferred, admit }, c.want, c.name);
  }
});

test('policyOptions: upstream texts', () => {
  assert.deepEqual(policyOptions({ 'prefer-closest-numa-nodes': 'true', 'max-allowable-numa-nodes': '12' }), {
    preferClosestNUMA: true,
    maxAllowableNUMANodes: 12,
  });
  assert.throws(
    () => policyOptions({ 'max-allowable-numa-nodes': '4' }),
    /^Error: the minimum value of "max-allowable-numa-nodes" should not be less than 8$/,
  );
  assert.throws(() => policyOptions({ foo: 'x' }), /^Error: unknown Topology Manager Policy option: "foo"$/);
  assert.throws(() => policyOptions({ 'prefer-closest-numa-nodes': 'yes' }), /bad value for option "prefer-closest-numa-nodes"/);
});
