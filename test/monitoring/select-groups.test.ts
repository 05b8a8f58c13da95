import assert from 'node:assert/strict';
import { test } from 'node:test';
import { selectGroups } from './select-groups.ts';

const rule = (name: string, groups: string[]) => ({
  apiVersion: 'monitoring.coreos.com/v1',
  kind: 'PrometheusRule',
  metadata: { name },
  spec: { groups: groups.map((g) => ({ name: g, rules: [{ alert: `${g}-alert`, expr: 'vector(1)' }] })) },
});

test('selectGroups: keeps the named and prefixed groups of PrometheusRule objects only', () => {
  const docs = [
    { kind: 'ConfigMap', data: { groups: 'kubelet.rules' } },
    null,
    rule('a', ['kubelet.rules', 'etcd']),
    rule('b', ['k8s.rules.container_cpu_limits', 'k8s.rules.pod_owner']),
    rule('c', ['kubernetes-storage']),
  ];
  const got = selectGroups(docs, ['kubelet.rules', 'kubernetes-storage'], ['k8s.rules.container_']);
  assert.deepEqual(
    got.groups.map((g) => g.name),
    ['kubelet.rules', 'k8s.rules.container_cpu_limits', 'kubernetes-storage'],
  );
  assert.deepEqual(got.groups[0].rules, [{ alert: 'kubelet.rules-alert', expr: 'vector(1)' }]);
});

test('selectGroups: refuses what would not be the chart rendered with its defaults', () => {
  const cases: [string, unknown[], RegExp][] = [
    ['a named group missing', [rule('a', ['kubelet.rules'])], /no rule group kubernetes-storage/],
    ['no group of a prefix', [rule('a', ['kubelet.rules', 'kubernetes-storage'])], /no rule group k8s\.rules\.container_\*/],
    ['a group twice', [rule('a', ['kubelet.rules']), rule('b', ['kubelet.rules'])], /kubelet\.rules appears twice/],
  ];
  for (const [what, docs, err] of cases)
    assert.throws(() => selectGroups(docs, ['kubelet.rules', 'kubernetes-storage'], ['k8s.rules.container_']), err, what);
});
