import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseExposition, parseValue } from './exposition.ts';

test('parseValue: Go floats and the exposition spellings of infinity and NaN', () => {
  const cases: [string, number][] = [
    ['0', 0],
    ['150.863', 150.863],
    ['1.5e+09', 1.5e9],
    ['+Inf', Number.POSITIVE_INFINITY],
    ['-Inf', Number.NEGATIVE_INFINITY],
  ];
  for (const [s, v] of cases) assert.equal(parseValue(s), v, s);
  assert.ok(Number.isNaN(parseValue('NaN')));
  assert.throws(() => parseValue('x'));
  assert.throws(() => parseValue(''));
});

test('parseExposition: names, labels with escapes, types of histogram parts, timestamps ignored', () => {
  const text = [
    '# HELP kubelet_certificate_manager_server_ttl_seconds help',
    '# TYPE kubelet_certificate_manager_server_ttl_seconds gauge',
    'kubelet_certificate_manager_server_ttl_seconds +Inf',
    '# TYPE container_cpu_cfs_periods_total counter',
    'container_cpu_cfs_periods_total{container="busy",id="/kubepods/x",namespace="ns",pod="p"} 1200 1796295911107',
    '# TYPE kubelet_pleg_relist_duration_seconds histogram',
    'kubelet_pleg_relist_duration_seconds_bucket{le="0.005"} 3',
    'kubelet_pleg_relist_duration_seconds_sum 0.1',
    'kubelet_pleg_relist_duration_seconds_count 4',
    'weird{a="q\\"uote",b="back\\\\slash",c="new\\nline",} 1',
    'untyped_one 2',
  ].join('\n');
  assert.deepEqual(parseExposition(text), [
    { name: 'kubelet_certificate_manager_server_ttl_seconds', labels: {}, value: Number.POSITIVE_INFINITY, type: 'gauge' },
    {
      name: 'container_cpu_cfs_periods_total',
      labels: { container: 'busy', id: '/kubepods/x', namespace: 'ns', pod: 'p' },
      value: 1200,
      type: 'counter',
    },
    { name: 'kubelet_pleg_relist_duration_seconds_bucket', labels: { le: '0.005' }, value: 3, type: 'histogram' },
    { name: 'kubelet_pleg_relist_duration_seconds_sum', labels: {}, value: 0.1, type: 'histogram' },
    { name: 'kubelet_pleg_relist_duration_seconds_count', labels: {}, value: 4, type: 'histogram' },
    { name: 'weird', labels: { a: 'q"uote', b: 'back\\slash', c: 'new\nline' }, value: 1, type: 'untyped' },
    { name: 'untyped_one', labels: {}, value: 2, type: 'untyped' },
  ]);
});

test('parseExposition: refuses what expfmt refuses', () => {
  for (const bad of ['novalue', 'm{a="x} 1', 'm{a=x} 1', 'm notanumber']) assert.throws(() => parseExposition(bad), bad);
});
