import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { containerConfig, dnsConfig, podCgroup, sandboxConfig, type NodeContext } from './pod-config.ts';
import { parseResolvConf } from '../network/resolv-conf.ts';

const node: NodeContext = {
  podLogsDir: '/var/log/pods',
  clusterDomain: 'cluster.local',
  clusterDNS: ['10.96.0.10'],
  hostDNS: parseResolvConf('# host\nnameserver 10.255.255.53\nsearch corp.example\noptions edns0 ndots:1\n'),
};
const pod = (spec: Partial<NonNullable<Pod['spec']>> = {}): Pod => ({
  metadata: { name: 'web', namespace: 'shop', uid: 'u1', labels: { app: 'web' } },
  spec: { containers: [{ name: 'main', image: 'busybox:1.36', ports: [{ containerPort: 80, hostPort: 8080 }] }], ...spec },
});

test('resolv.conf of the host', () => {
  assert.deepEqual(node.hostDNS, { servers: ['10.255.255.53'], searches: ['corp.example'], options: ['edns0', 'ndots:1'] });
});

test('dnsPolicy: ClusterFirst, Default, None, host network, dnsConfig merge', () => {
  assert.deepEqual(dnsConfig(pod(), node), {
    servers: ['10.96.0.10'],
    searches: ['shop.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'corp.example'],
    options: ['ndots:5'],
  });
  assert.deepEqual(dnsConfig(pod({ dnsPolicy: 'Default' }), node), node.hostDNS);
  assert.deepEqual(dnsConfig(pod({ hostNetwork: true }), node), node.hostDNS, 'ClusterFirst with host network falls back to Default');
  assert.equal(dnsConfig(pod({ hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' }), node)!.servers![0], '10.96.0.10');
  assert.deepEqual(
    dnsConfig(
      pod({
        dnsPolicy: 'None',
        dnsConfig: { nameservers: ['1.1.1.1'], searches: ['a'], options: [{ name: 'ndots', value: '2' }, { name: 'rotate' }] },
      }),
      node,
    ),
    { servers: ['1.1.1.1'], searches: ['a'], options: ['ndots:2', 'rotate'] },
  );
  assert.deepEqual(dnsConfig(pod(), { ...node, clusterDNS: [] }), node.hostDNS, 'no clusterDNS: Default');
});

test('sandbox config: names, log dir, labels, ports, cgroup, namespaces', () => {
  const c = sandboxConfig(pod(), 2, node);
  assert.deepEqual(c.metadata, { name: 'web', namespace: 'shop', uid: 'u1', attempt: 2 });
  assert.equal(c.hostname, 'web');
  assert.equal(c.logDirectory, '/var/log/pods/shop_web_u1');
  assert.deepEqual(c.portMappings, [{ protocol: 'TCP', containerPort: 80, hostPort: 8080, hostIp: '' }]);
  // MakePortMappings: every port, a host port or not; a name given twice kept once.
  const ports = [
    { name: 'http', containerPort: 8080, protocol: 'TCP' },
    { name: 'http', containerPort: 8081 },
    { containerPort: 53, protocol: 'UDP' },
    { containerPort: 53, protocol: 'UDP' },
    { containerPort: 53, protocol: 'UDP', hostPort: 53, hostIP: '10.0.0.1' },
  ];
  assert.deepEqual(sandboxConfig(pod({ containers: [{ name: 'c', ports }] }), 0, node).portMappings, [
    { protocol: 'TCP', containerPort: 8080, hostPort: 0, hostIp: '' },
    { protocol: 'UDP', containerPort: 53, hostPort: 0, hostIp: '' },
    { protocol: 'UDP', containerPort: 53, hostPort: 53, hostIp: '10.0.0.1' },
  ]);
  assert.equal(c.labels!['io.kubernetes.pod.uid'], 'u1');
  assert.equal(c.labels!.app, 'web');
  assert.equal(c.linux!.cgroupParent, '/kubepods/besteffort/podu1');
  assert.deepEqual(c.linux!.securityContext!.namespaceOptions, { network: 'POD', pid: 'CONTAINER', ipc: 'POD' });
  assert.equal(sandboxConfig(pod({ hostNetwork: true }), 0, node).hostname, '', 'no hostname in the node network namespace');
  assert.equal(
    podCgroup({ ...pod(), spec: { containers: [{ name: 'a', resources: { limits: { cpu: '1', memory: '1Gi' } } }] } }),
    '/kubepods/podu1',
  );
});

test('container config: log path, labels, env as bytes, resources', () => {
  const p = pod();
  p.spec!.containers[0] = {
    name: 'main',
    image: 'busybox:1.36',
    command: ['sleep'],
    args: ['9'],
    env: [
      { name: 'A', value: 'x' },
      { name: 'B', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    ],
    resources: { requests: { cpu: '250m' }, limits: { cpu: '500m', memory: '64Mi' } },
  };
  const c = containerConfig(p, p.spec!.containers[0]!, 3);
  assert.deepEqual(c.metadata, { name: 'main', attempt: 3 });
  assert.equal(c.logPath, 'main/3.log');
  assert.deepEqual(c.envs, [{ key: 'A', value: Buffer.from('x') }]);
  assert.equal(c.annotations!['io.kubernetes.container.restartCount'], '3');
  assert.deepEqual(c.linux!.resources, { cpuShares: 256, cpuPeriod: 100000, cpuQuota: 50000, memoryLimitInBytes: 64 * 2 ** 20 });
  // newContainerAnnotations: the ports (Go's field order) and the preStop hook as JSON, the deletion grace period once set.
  assert.equal(c.annotations!['io.kubernetes.container.ports'], undefined);
  assert.equal(c.annotations!['io.kubernetes.container.preStopHandler'], undefined);
  const q: Pod = { ...pod(), metadata: { ...pod().metadata, deletionGracePeriodSeconds: 7 } };
  assert.equal(
    containerConfig(q, q.spec!.containers[0]!, 0).annotations!['io.kubernetes.container.ports'],
    '[{"hostPort":8080,"containerPort":80}]',
  );
  q.spec!.containers[0]!.lifecycle = { preStop: { exec: { command: ['sleep', '1'] } } };
  const d = containerConfig(q, q.spec!.containers[0]!, 3).annotations!;
  assert.equal(d['io.kubernetes.container.preStopHandler'], '{"exec":{"command":["sleep","1"]}}');
  assert.equal(d['io.kubernetes.pod.deletionGracePeriod'], '7');
});

test('container resources with pod-level resources: unset limits come from the pod, and so does its cgroup parent', () => {
  const p = pod({
    containers: [
      { name: 'free', image: 'busybox' },
      { name: 'own', image: 'busybox', resources: { requests: { cpu: '50m', memory: '50Mi' }, limits: { cpu: '100m', memory: '100Mi' } } },
    ],
  });
  (p.spec as { resources?: object }).resources = { requests: { cpu: '150m', memory: '150Mi' }, limits: { cpu: '200m', memory: '200Mi' } };
  const [free, own] = p.spec!.containers.map((c) => containerConfig(p, c, 0, { memoryCapacityBytes: 8 * 2 ** 30 }).linux!.resources);
  // Burstable: (150Mi - 50Mi) / 2 shared out; the free container has no request of its own.
  assert.deepEqual(free, { cpuShares: 204, cpuPeriod: 100000, cpuQuota: 20000, memoryLimitInBytes: 200 * 2 ** 20, oomScoreAdj: 994 });
  assert.deepEqual(own, { cpuShares: 51, cpuPeriod: 100000, cpuQuota: 10000, memoryLimitInBytes: 100 * 2 ** 20, oomScoreAdj: 988 });
  assert.equal(podCgroup(p), '/kubepods/burstable/podu1');
  // The host's huge page sizes: a limit for each (0, none asked), after oom_score_adj.
  const huge = containerConfig(p, p.spec!.containers[0]!, 0, { memoryCapacityBytes: 8 * 2 ** 30, hugePageSizes: ['2MB'] }).linux!
    .resources!;
  assert.deepEqual(Object.keys(huge).slice(-2), ['oomScoreAdj', 'hugepageLimits']);
  assert.deepEqual(huge.hugepageLimits, [{ pageSize: '2MB', limit: 0 }]);
});

test("swap in the container's resources: cgroup v1 NoSwap caps memory+swap at the (pod-level) memory limit, v2 LimitedSwap a share", () => {
  const p = pod({
    containers: [
      { name: 'free', image: 'busybox', resources: { requests: { memory: '1Gi' } } },
      { name: 'own', image: 'busybox', resources: { requests: { memory: '1Gi' }, limits: { memory: '2Gi' } } },
    ],
  });
  const swap = {
    swapBehavior: 'NoSwap',
    cgroupV2: false,
    controllerAvailable: true,
    memoryCapacityBytes: 8 * 2 ** 30,
    swapCapacityBytes: 4 * 2 ** 30,
  };
  const swapOf = (q: Pod, s = swap) =>
    q.spec!.containers.map((c) => {
      const r = containerConfig(q, c, 0, { swap: s }).linux!.resources!;
      return [r.memorySwapLimitInBytes, r.unified];
    });
  assert.deepEqual(swapOf(p), [
    [0, undefined],
    [2 * 2 ** 30, undefined],
  ]);
  const withPodLimit = { ...p, spec: { ...p.spec!, resources: { limits: { memory: '3Gi' } } } } as Pod;
  assert.deepEqual(swapOf(withPodLimit)[0], [3 * 2 ** 30, undefined], 'the pod-level limit stands in for an unset one');
  assert.deepEqual(swapOf(p, { ...swap, swapBehavior: 'LimitedSwap', cgroupV2: true }), [
    [undefined, { 'memory.swap.max': '536870912' }],
    [undefined, { 'memory.swap.max': '536870912' }],
  ]);
  assert.deepEqual(swapOf(p, { ...swap, controllerAvailable: false }), [
    [undefined, undefined],
    [undefined, undefined],
  ]);
});

// Upstream's applySandboxResources, and calculateLinuxResources' Unified.
test("the sandbox's resources: the pod's requests and limits without the overhead; the overhead as both", () => {
  const p = pod({
    containers: [
      { name: 'a', image: 'busybox', resources: { requests: { cpu: '100m' }, limits: { cpu: '500m', memory: '64Mi' } } },
      { name: 'b', image: 'busybox', resources: { requests: { cpu: '150m', memory: '32Mi' } } },
    ],
    overhead: { cpu: '250m', memory: '120Mi' },
  });
  const { resources, overhead } = sandboxConfig(p, 0, node).linux!;
  // b has no limits: the pod's sums hold only a's.
  assert.deepEqual(resources, { cpuShares: 256, cpuPeriod: 100000, cpuQuota: 50000, memoryLimitInBytes: 64 * 2 ** 20 });
  assert.deepEqual(overhead, { cpuShares: 256, cpuPeriod: 100000, cpuQuota: 25000, memoryLimitInBytes: 120 * 2 ** 20 });
  const bare = sandboxConfig(pod(), 0, node).linux!;
  assert.deepEqual(
    bare.resources,
    { cpuShares: 2, cpuPeriod: 100000, cpuQuota: 0, memoryLimitInBytes: 0 },
    'besteffort: the minimum shares',
  );
  assert.deepEqual(bare.overhead, {}, 'no overhead: an empty one, as upstream');
  const group = sandboxConfig(p, 0, { ...node, singleProcessOOMKill: false }).linux!;
  assert.deepEqual([group.resources!.unified, group.overhead!.unified], [{ 'memory.oom.group': '1' }, { 'memory.oom.group': '1' }]);
});

test("the node's cpuCFSQuota and cpuCFSQuotaPeriod: the sandbox's and the container's quota and period", () => {
  const p = pod({ containers: [{ name: 'a', image: 'busybox', resources: { requests: { cpu: '100m' }, limits: { cpu: '500m' } } }] });
  const c = p.spec!.containers[0]!;
  const off = { quota: false, periodUs: 100_000 },
    p50 = { quota: true, periodUs: 50_000 };
  const cpu = (r: { cpuShares?: unknown; cpuPeriod?: unknown; cpuQuota?: unknown } | null | undefined) => [
    r?.cpuShares,
    r?.cpuPeriod,
    r?.cpuQuota,
  ];
  assert.deepEqual(cpu(sandboxConfig(p, 0, { ...node, cfs: off }).linux!.resources), [102, 0, 0], 'quota off: neither quota nor period');
  assert.deepEqual(cpu(containerConfig(p, c, 0, { cfs: off }).linux!.resources), [102, 0, 0]);
  assert.deepEqual(cpu(sandboxConfig(p, 0, { ...node, cfs: p50 }).linux!.resources), [102, 50_000, 25_000], '500m of a 50 ms period');
  assert.deepEqual(cpu(containerConfig(p, c, 0, { cfs: p50 }).linux!.resources), [102, 50_000, 25_000]);
  assert.deepEqual(cpu(containerConfig(p, c, 0, {}).linux!.resources), [102, 100_000, 50_000], 'unset: upstream defaults');
});

test('singleProcessOOMKill false: the container gets memory.oom.group, beside its swap limit', () => {
  const p = pod({ containers: [{ name: 'a', image: 'busybox', resources: { requests: { memory: '1Gi' } } }] });
  const c = p.spec!.containers[0]!;
  const unified = (inputs: Parameters<typeof containerConfig>[3]) => containerConfig(p, c, 0, inputs).linux!.resources!.unified;
  assert.equal(unified({}), undefined);
  assert.equal(unified({ singleProcessOOMKill: true }), undefined);
  assert.deepEqual(unified({ singleProcessOOMKill: false }), { 'memory.oom.group': '1' });
  const swap = {
    swapBehavior: 'NoSwap',
    cgroupV2: true,
    controllerAvailable: true,
    memoryCapacityBytes: 8 * 2 ** 30,
    swapCapacityBytes: 2 ** 30,
  };
  assert.deepEqual(unified({ singleProcessOOMKill: false, swap }), { 'memory.oom.group': '1', 'memory.swap.max': '0' });
});

test('security context: sysctls and the sandbox context; the container runs as the image user unless told', () => {
  const p = pod({
    securityContext: { runAsNonRoot: true, fsGroup: 2000, sysctls: [{ name: 'net.ipv4.ip_local_port_range', value: '1024 65535' }] },
    shareProcessNamespace: true,
  });
  const sb = sandboxConfig(p, 0, node);
  assert.deepEqual(sb.linux!.sysctls, { 'net.ipv4.ip_local_port_range': '1024 65535' });
  assert.deepEqual(sb.linux!.securityContext!.seccomp, { profileType: 'RuntimeDefault' });
  assert.equal(sb.linux!.securityContext!.namespaceOptions!.pid, 'POD');
  const sc = containerConfig(p, p.spec!.containers[0]!, 0, { imageUser: { uid: 101 }, security: { seccompDefault: true } }).linux!
    .securityContext!;
  assert.deepEqual(
    [sc.runAsUser, sc.supplementalGroups, sc.seccomp, sc.namespaceOptions!.pid],
    [{ value: 101 }, [2000], { profileType: 'RuntimeDefault' }, 'POD'],
  );
});

test("user namespace: on the sandbox's and the container's namespace options; a pod's own IDs idmap every mount, the device plugins' too", () => {
  const own = {
    mode: 'POD' as const,
    uids: [{ hostId: 65536, containerId: 0, length: 65536 }],
    gids: [{ hostId: 65536, containerId: 0, length: 65536 }],
  };
  const p = pod({ hostUsers: false, shareProcessNamespace: true });
  const sb = sandboxConfig(p, 0, node, own);
  assert.deepEqual(sb.linux!.securityContext!.namespaceOptions, { network: 'POD', pid: 'POD', ipc: 'POD', usernsOptions: own });
  const devices = {
    envs: [],
    mounts: [{ containerPath: '/dev-lib', hostPath: '/opt/lib', readOnly: true }],
    devices: [],
    annotations: {},
    cdiDevices: [],
  };
  const c = containerConfig(p, p.spec!.containers[0]!, 0, {
    mounts: [{ containerPath: '/data', hostPath: '/vol/data' }],
    devices,
    userNamespace: own,
  });
  assert.deepEqual(c.linux!.securityContext!.namespaceOptions!.usernsOptions, own);
  assert.deepEqual(c.mounts, [
    { containerPath: '/dev-lib', hostPath: '/opt/lib', readonly: true, uidMappings: own.uids, gidMappings: own.gids },
    { containerPath: '/data', hostPath: '/vol/data', uidMappings: own.uids, gidMappings: own.gids },
  ]);
  // The node's user namespace: named, and the mounts left alone.
  const onNode = containerConfig(p, p.spec!.containers[0]!, 0, {
    mounts: [{ containerPath: '/data', hostPath: '/vol/data' }],
    userNamespace: { mode: 'NODE' },
  });
  assert.deepEqual(onNode.linux!.securityContext!.namespaceOptions!.usernsOptions, { mode: 'NODE' });
  assert.deepEqual(onNode.mounts, [{ containerPath: '/data', hostPath: '/vol/data' }]);
  assert.equal(sandboxConfig(p, 0, node).linux!.securityContext!.namespaceOptions!.usernsOptions, undefined, 'none given: none sent');
});

test("container config: the CPU manager's cpuset in the container's resources (upstream's PreCreateContainer)", () => {
  const p = pod();
  const c = p.spec!.containers[0]!;
  assert.equal(containerConfig(p, c, 0, { cpusetCpus: '1' }).linux!.resources!.cpusetCpus, '1');
  assert.equal(containerConfig(p, c, 0, { cpusetCpus: '0,2-3' }).linux!.resources!.cpusetCpus, '0,2-3');
  assert.equal('cpusetCpus' in containerConfig(p, c, 0, {}).linux!.resources!, false, 'the none policy sets none');
});
