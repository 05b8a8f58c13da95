import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PodStats, VolumeStats } from '../stats/summary-types.ts';
import {
  claimVolumeStats,
  containerLogSizes,
  metrics,
  registerCertificateMetrics,
  registerPodStats,
  registerVolumeManagerTotals,
  registry,
} from './metrics.ts';
import { withGoBucketBounds } from './go-float.ts';

const vol = (name: string, pvc?: string, over: Partial<VolumeStats> = {}): VolumeStats => ({
  time: '2026-11-22T12:00:00Z',
  availableBytes: 600,
  capacityBytes: 1000,
  usedBytes: 400,
  inodesFree: 90,
  inodes: 100,
  inodesUsed: 10,
  name,
  pvcRef: pvc ? { name: pvc, namespace: 'ns' } : undefined,
  ...over,
});
const figures = { capacityBytes: 1000, availableBytes: 600, usedBytes: 400, inodes: 100, inodesFree: 90, inodesUsed: 10 };

test("claimVolumeStats: upstream's volumeStatsCollector, the first volume of each claim", () => {
  const cases: [string, Pick<PodStats, 'volume'>[], unknown][] = [
    ['no volumes', [{}, { volume: [] }], []],
    [
      'only claims count',
      [{ volume: [vol('scratch'), vol('data', 'data-0')] }],
      [{ namespace: 'ns', persistentvolumeclaim: 'data-0', ...figures, abnormal: undefined }],
    ],
    [
      'a claim two pods share: once, from the first',
      [{ volume: [vol('data', 'shared', { usedBytes: 1 })] }, { volume: [vol('d', 'shared', { usedBytes: 2 })] }],
      [{ namespace: 'ns', persistentvolumeclaim: 'shared', ...figures, usedBytes: 1, abnormal: undefined }],
    ],
    [
      'the same claim name in two namespaces: two',
      [{ volume: [vol('data', 'data-0'), { ...vol('data', 'data-0'), pvcRef: { name: 'data-0', namespace: 'other' } }] }],
      [
        { namespace: 'ns', persistentvolumeclaim: 'data-0', ...figures, abnormal: undefined },
        { namespace: 'other', persistentvolumeclaim: 'data-0', ...figures, abnormal: undefined },
      ],
    ],
    [
      'health when known',
      [{ volume: [vol('data', 'data-0', { volumeHealthStats: { abnormal: true } })] }],
      [{ namespace: 'ns', persistentvolumeclaim: 'data-0', ...figures, abnormal: true }],
    ],
  ];
  for (const [name, pods, want] of cases) assert.deepEqual(claimVolumeStats(pods), want, name);
});

const podRef = (name: string) => ({ name, namespace: 'ns', uid: `uid-${name}` });
const logs = (name: string, usedBytes?: number) => ({ name, logs: usedBytes === undefined ? {} : { usedBytes } });

test("containerLogSizes: upstream's logMetricsCollector, every container whose logs' size is known", () => {
  const cases: [string, Pick<PodStats, 'podRef' | 'containers'>[], unknown][] = [
    ['no pods', [], []],
    ['a pod without containers', [{ podRef: podRef('a') } as Pick<PodStats, 'podRef' | 'containers'>], []],
    [
      'each container, labelled by its pod; those without a size left out',
      [
        { podRef: podRef('a'), containers: [logs('main', 4096), logs('sidecar')] as PodStats['containers'] },
        { podRef: podRef('b'), containers: [logs('main', 0)] as PodStats['containers'] },
      ],
      [
        { uid: 'uid-a', namespace: 'ns', pod: 'a', container: 'main', usedBytes: 4096 },
        { uid: 'uid-b', namespace: 'ns', pod: 'b', container: 'main', usedBytes: 0 },
      ],
    ],
  ];
  for (const [name, pods, want] of cases) assert.deepEqual(containerLogSizes(pods), want, name);
});

test('registerPodStats: kubelet_volume_stats_* and the log sizes under upstream names and labels, read once a scrape, rebuilt each', async () => {
  let reads = 0;
  let pods = [
    {
      podRef: podRef('a'),
      containers: [logs('main', 4096)],
      volume: [vol('data', 'data-0', { volumeHealthStats: { abnormal: false } }), vol('scratch')],
    },
    { podRef: podRef('b'), volume: [vol('logs', 'logs-0')] },
  ];
  registerPodStats(async () => {
    reads++;
    return pods;
  });
  const lines = async () => (await registry.metrics()).split('\n').filter((l) => l.startsWith('kubelet_volume_stats_'));
  assert.deepEqual(await lines(), [
    'kubelet_volume_stats_capacity_bytes{namespace="ns",persistentvolumeclaim="data-0"} 1000',
    'kubelet_volume_stats_capacity_bytes{namespace="ns",persistentvolumeclaim="logs-0"} 1000',
    'kubelet_volume_stats_available_bytes{namespace="ns",persistentvolumeclaim="data-0"} 600',
    'kubelet_volume_stats_available_bytes{namespace="ns",persistentvolumeclaim="logs-0"} 600',
    'kubelet_volume_stats_used_bytes{namespace="ns",persistentvolumeclaim="data-0"} 400',
    'kubelet_volume_stats_used_bytes{namespace="ns",persistentvolumeclaim="logs-0"} 400',
    'kubelet_volume_stats_inodes{namespace="ns",persistentvolumeclaim="data-0"} 100',
    'kubelet_volume_stats_inodes{namespace="ns",persistentvolumeclaim="logs-0"} 100',
    'kubelet_volume_stats_inodes_free{namespace="ns",persistentvolumeclaim="data-0"} 90',
    'kubelet_volume_stats_inodes_free{namespace="ns",persistentvolumeclaim="logs-0"} 90',
    'kubelet_volume_stats_inodes_used{namespace="ns",persistentvolumeclaim="data-0"} 10',
    'kubelet_volume_stats_inodes_used{namespace="ns",persistentvolumeclaim="logs-0"} 10',
    // Only where the health is known.
    'kubelet_volume_stats_health_status_abnormal{namespace="ns",persistentvolumeclaim="data-0"} 0',
  ]);
  assert.equal(reads, 1, 'one read serves the seven series');
  assert.match(
    await registry.getSingleMetricAsString('kubelet_container_log_filesystem_used_bytes'),
    /^# HELP kubelet_container_log_filesystem_used_bytes \[ALPHA\] Bytes used by the container's logs on the filesystem\.\n# TYPE kubelet_container_log_filesystem_used_bytes gauge\nkubelet_container_log_filesystem_used_bytes\{uid="uid-a",namespace="ns",pod="a",container="main"\} 4096$/,
  );
  const text = await registry.metrics();
  assert.match(
    text,
    /# HELP kubelet_volume_stats_capacity_bytes \[ALPHA\] Capacity in bytes of the volume\n# TYPE kubelet_volume_stats_capacity_bytes gauge/,
  );

  // The pod with logs-0 is gone: its series go with it.
  pods = [pods[0]!];
  assert.deepEqual(
    (await lines()).filter((l) => l.includes('logs-0')),
    [],
  );
  assert.equal(reads, 4);
});

test('certificate series: registered with their manager; TTL truncated seconds to notAfter, +Inf without one; rotation only for the serving one', async () => {
  const value = async (name: string) => (await registry.getSingleMetric(name)!.get()).values[0]!.value;
  registry.removeSingleMetric('kubelet_certificate_manager_client_ttl_seconds');
  registry.removeSingleMetric('kubelet_certificate_manager_server_ttl_seconds');
  assert.equal(registry.getSingleMetric('kubelet_certificate_manager_client_ttl_seconds'), undefined, 'no manager, no series');
  const client = registerCertificateMetrics('client');
  assert.equal(await value('kubelet_certificate_manager_client_ttl_seconds'), Number.POSITIVE_INFINITY);
  client.expiresAt(Date.now() + 3600_500);
  assert.equal(await value('kubelet_certificate_manager_client_ttl_seconds'), 3600);
  client.renewFailed();
  assert.equal(await value('kubelet_certificate_manager_client_expiration_renew_errors'), 1);
  client.rotated(100);
  assert.equal(registry.getSingleMetric('kubelet_certificate_manager_server_ttl_seconds'), undefined, 'the serving one is apart');

  const server = registerCertificateMetrics('server');
  server.expiresAt(Date.now() - 10_000);
  assert.ok((await value('kubelet_certificate_manager_server_ttl_seconds')) < 0, 'an expired one is negative');
  server.renewFailed();
  assert.equal(await value('kubelet_server_expiration_renew_errors'), 1);
  server.rotated(7200);
  const rotation = await registry.getSingleMetricAsString('kubelet_certificate_manager_server_rotation_seconds');
  assert.match(rotation, /_bucket\{le="3600"\} 0\n.*_bucket\{le="14400"\} 1\n/s);
  assert.match(rotation, /_count 1/);
});

/** The HELP and TYPE lines and the bucket bounds of one histogram, as /metrics renders them. */
const histogramShape = async (name: string) => {
  const text = withGoBucketBounds(await registry.getSingleMetricAsString(name));
  const les = [...text.matchAll(/le="([^"]+)"/g)].map((m) => m[1]);
  return { head: text.split('\n').slice(0, 2), les: [...new Set(les)] };
};

test("dra_operations_duration_seconds: ExponentialBucketsRange(0.1, 40, 15)'s bounds as Go prints them", async () => {
  metrics.draOperationsDuration.observe({ operation_name: 'PrepareResources', is_error: 'false' }, 0.2);
  // go run: prometheus.ExponentialBucketsRange(.1, 40, 15), each strconv.FormatFloat(b, 'g', -1, 64).
  const go =
    '0.1 0.1534127404634391 0.23535468936502524 0.36106407876409946 0.5539182980610752 0.849781240983936 1.303672689737678 ' +
    '1.9999999999999993 3.0682548092687805 4.7070937873005025 7.221281575281985 11.078365961221499 16.995624819678714 ' +
    '26.07345379475354 39.99999999999997 +Inf';
  assert.deepEqual((await histogramShape('dra_operations_duration_seconds')).les, go.split(' '));
});

test("rest_client_*: client-go's histograms as component-base registers them (names, help, labels, buckets)", async () => {
  metrics.restClientRequestDuration.observe({ verb: 'GET', host: 'h:6443' }, 0.01);
  metrics.restClientRequestSize.observe({ verb: 'GET', host: 'h:6443' }, 0);
  metrics.restClientResponseSize.observe({ verb: 'GET', host: 'h:6443' }, 100);
  // As Go writes them: from 1e6 up with an exponent.
  const sizes = ['64', '256', '512', '1024', '4096', '16384', '65536', '262144', '1.048576e+06', '4.194304e+06', '1.6777216e+07', '+Inf'];
  const cases: [string, string, string[]][] = [
    [
      'rest_client_request_duration_seconds',
      'Request latency in seconds. Broken down by verb, and host.',
      ['0.005', '0.025', '0.1', '0.25', '0.5', '1', '2', '4', '8', '15', '30', '60', '+Inf'],
    ],
    ['rest_client_request_size_bytes', 'Request size in bytes. Broken down by verb and host.', sizes],
    ['rest_client_response_size_bytes', 'Response size in bytes. Broken down by verb and host.', sizes],
  ];
  for (const [name, help, les] of cases) {
    assert.deepEqual(await histogramShape(name), { head: [`# HELP ${name} [ALPHA] ${help}`, `# TYPE ${name} histogram`], les }, name);
    assert.match(await registry.getSingleMetricAsString(name), new RegExp(`${name}_count\\{verb="GET",host="h:6443"\\} 1`), name);
  }
});

test("volume_manager_total_volumes: upstream's totalVolumesCollector, read at scrape and rebuilt each", async () => {
  let counts = [
    { plugin_name: 'kubernetes.io/configmap', state: 'actual_state_of_world', count: 2 },
    { plugin_name: 'kubernetes.io/csi:hostpath.csi.k8s.io', state: 'desired_state_of_world', count: 1 },
  ];
  registerVolumeManagerTotals(() => counts);
  const text = async () => registry.getSingleMetricAsString('volume_manager_total_volumes');
  assert.equal(
    await text(),
    [
      '# HELP volume_manager_total_volumes [ALPHA] Number of volumes in Volume Manager',
      '# TYPE volume_manager_total_volumes gauge',
      'volume_manager_total_volumes{plugin_name="kubernetes.io/configmap",state="actual_state_of_world"} 2',
      'volume_manager_total_volumes{plugin_name="kubernetes.io/csi:hostpath.csi.k8s.io",state="desired_state_of_world"} 1',
    ].join('\n'),
  );
  counts = [];
  assert.doesNotMatch(await text(), /plugin_name/, 'a pod gone takes its series');
  // Registered again (a second volume manager): no "already registered".
  registerVolumeManagerTotals(() => []);
});

test("storage_operation_duration_seconds and volume_operation_total_seconds: pkg/volume/util's names, help, labels and buckets", async () => {
  metrics.storageOperationDuration.observe(
    { volume_plugin: 'kubernetes.io/configmap', operation_name: 'volume_mount', status: 'success', migrated: 'false' },
    0.2,
  );
  metrics.volumeOperationTotal.observe({ plugin_name: 'kubernetes.io/configmap', operation_name: 'overall_volume_mount' }, 1);
  const les = ['0.1', '0.25', '0.5', '1', '2.5', '5', '10', '15', '25', '50', '120', '300', '600', '+Inf'];
  const cases: [string, string, RegExp][] = [
    [
      'storage_operation_duration_seconds',
      'Storage operation duration',
      /storage_operation_duration_seconds_count\{volume_plugin="kubernetes.io\/configmap",operation_name="volume_mount",status="success",migrated="false"\} 1/,
    ],
    [
      'volume_operation_total_seconds',
      'Storage operation end to end duration in seconds',
      /volume_operation_total_seconds_count\{plugin_name="kubernetes.io\/configmap",operation_name="overall_volume_mount"\} 1/,
    ],
  ];
  for (const [name, help, count] of cases) {
    assert.deepEqual(await histogramShape(name), { head: [`# HELP ${name} [ALPHA] ${help}`, `# TYPE ${name} histogram`], les }, name);
    assert.match(await registry.getSingleMetricAsString(name), count, name);
  }
});
