import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiserverRequests, delta, differingRates, figuresTable, perNodeMinute, rateRows, restClientRequests } from './hollow-figures.ts';
import { total } from './audit.ts';

test('apiserverRequests: summed by verb and resource[/subresource]', () => {
  const text = [
    '# HELP apiserver_request_total ...',
    'apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="nodes",scope="resource",subresource="status",verb="PATCH",version="v1"} 12',
    'apiserver_request_total{code="409",component="apiserver",dry_run="",group="",resource="nodes",scope="resource",subresource="status",verb="PATCH",version="v1"} 3',
    'apiserver_request_total{code="200",component="apiserver",dry_run="",group="coordination.k8s.io",resource="leases",scope="resource",subresource="",verb="PUT",version="v1"} 40',
    'apiserver_request_duration_seconds_bucket{le="1"} 5',
  ].join('\n');
  assert.deepEqual(
    apiserverRequests(text),
    new Map([
      ['PATCH nodes/status', 15],
      ['PUT leases', 40],
    ]),
  );
});

test('restClientRequests: summed by method and code, over hosts', () => {
  const text = [
    'rest_client_requests_total{code="200",host="10.0.0.1:6443",method="GET"} 7',
    'rest_client_requests_total{code="200",host="10.0.0.2:6443",method="GET"} 2',
    'rest_client_requests_total{code="201",host="10.0.0.1:6443",method="POST"} 1',
    'rest_client_request_duration_seconds_count{host="10.0.0.1:6443",verb="GET"} 9',
  ].join('\n');
  assert.deepEqual(
    restClientRequests(text),
    new Map([
      ['GET 200', 9],
      ['POST 201', 1],
    ]),
  );
});

test('delta, total, perNodeMinute, rateRows', () => {
  const rows: [string, unknown, unknown][] = [
    [
      'delta leaves unmoved keys out',
      delta(
        new Map([
          ['a', 1],
          ['b', 2],
        ]),
        new Map([
          ['a', 1],
          ['b', 5],
          ['c', 1],
        ]),
      ),
      new Map([
        ['b', 3],
        ['c', 1],
      ]),
    ],
    [
      'total',
      total(
        new Map([
          ['a', 2],
          ['b', 3],
        ]),
      ),
      5,
    ],
    ['per node per minute', perNodeMinute(120, 10, 120_000), 6],
    ['no nodes', perNodeMinute(5, 0, 60_000), 0],
    [
      'rows largest first',
      rateRows(
        new Map([
          ['GET pods', 20],
          ['PUT leases', 60],
        ]),
        10,
        60_000,
      ),
      [
        ['PUT leases', 6],
        ['GET pods', 2],
      ],
    ],
  ];
  for (const [name, got, want] of rows) assert.deepEqual(got, want, name);
});

test('figuresTable', () => {
  const t = figuresTable([
    {
      kind: 'kubelet-ts',
      nodes: 10,
      rssPerNodeMB: 12.34,
      cpuIdle: 0.01,
      cpuChurn: 0.2,
      apiserverCpu: { idle: 0.0125, churn: 0.5 },
      idle: { nodes: 7, all: 9 },
      churn: { nodes: 20, all: 40 },
      churnRequestsPerPod: 9.44,
      podsPerNode: 5,
      allRunningSeconds: 4.26,
      apiserverRssMB: { before: 300.4, idle: 350.6, churn: 420, perNode: 5.02 },
      watchEvents: { idle: 12.34, churn: 80 },
    },
  ]);
  assert.match(
    t,
    /\| kubelet-ts \| 10 \| 12\.3 \| 0\.010 \| 0\.200 \| 0\.013 \/ 0\.500 \| 7\.00 \/ 9\.00 \| 20\.00 \/ 40\.00 \| 9\.4 \| 5, 4\.3 \| 300 \/ 351 \/ 420 \(5\.02\) \| 12\.3 \/ 80\.0 \|$/,
  );
  assert.equal(t.split('\n')[0]!.split('|').length, t.split('\n')[2]!.split('|').length, 'as many columns as the header');
});

test('differingRates: a minute each, only what differs, the largest difference first', () => {
  const a = new Map([
    ['PUT leases', 12],
    ['GET pods', 4],
    ['WATCH configmaps', 3],
  ]);
  const b = new Map([
    ['PUT leases', 6],
    ['GET pods', 1],
    ['PATCH pods/status', 1],
  ]);
  // a over 2 minutes, b over 1.
  assert.deepEqual(differingRates(a, 120_000, b, 60_000), [
    ['WATCH configmaps', 1.5, 0],
    ['GET pods', 2, 1],
    ['PATCH pods/status', 0, 1],
  ]);
  assert.deepEqual(differingRates(a, 120_000, b, 60_000, 1.5), [['WATCH configmaps', 1.5, 0]]);
});
