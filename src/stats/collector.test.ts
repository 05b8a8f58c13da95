import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cgroupLayout } from '../resources/cgroup-layout.ts';
import type { CgroupReader } from './cgroup.ts';
import { collectSample } from './collector.ts';
import type { HostStats } from './host.ts';
import type { ContainerInfo, RuntimeStatsSource, SandboxInfo } from './runtime-source.ts';
import { mem } from './testing.ts';
import type { VolumeDir, VolumeStatsSource } from './volumes.ts';
import type { ClaimStatsSource } from './claim-volumes.ts';
import type { RawVolume } from './sample.ts';
import { type Filesystem, NO_IO } from './filesystems.ts';

const sandboxes: SandboxInfo[] = [
  { id: 's1', uid: 'u1', name: 'web', namespace: 'ns', ready: true, createdAtMs: 1000 },
  { id: 's0', uid: 'u1', name: 'web', namespace: 'ns', ready: false, createdAtMs: 500 },
  { id: 's2', uid: 'u2', name: 'done', namespace: 'ns', ready: false, createdAtMs: 700 },
];
const ctr = (id: string, sandboxId: string, name: string, running: boolean): ContainerInfo => ({
  id,
  sandboxId,
  podUid: sandboxId === 's2' ? 'u2' : 'u1',
  podName: 'web',
  podNamespace: 'ns',
  name,
  image: 'busybox',
  imageRef: 'sha256:img',
  labels: {},
  running,
  createdAtMs: 1100,
});
const containers = [
  ctr('c1', 's1', 'app', true),
  ctr('c0', 's0', 'app', false),
  ctr('c2', 's2', 'job', false),
  ctr('c3', 's1', 'side', true),
];

function runtime(fail?: string): RuntimeStatsSource {
  return {
    sandboxes: async () => {
      if (fail) throw new Error(fail);
      return sandboxes;
    },
    containers: async () => containers,
    imageLabels: async () => ({}),
    containerStats: async () =>
      new Map([['c1', { timeMs: 5, cpuNs: 9, writableLayer: { timeMs: 5, usedBytes: 8192, mountpoint: '/snapshots' } }]]),
    imageFilesystems: async () => [{ timeMs: 4, usedBytes: 300, mountpoint: '/images' }],
  };
}

// A host whose cgroups are a set of paths; each sample's CPU is its path's length, to tell them apart.
function host(paths: string[]): HostStats {
  const cgroups: CgroupReader = {
    version: 1,
    sample: (p) => (paths.includes(p) ? { cpu: { usageNs: p.length }, memory: mem(10, 5) } : {}),
    exists: (p) => paths.includes(p),
    pids: (p) => (/\/(cri-containerd-)?s1(\.scope)?$/.test(p) ? [4242] : /\/(cri-containerd-)?c1(\.scope)?$/.test(p) ? [50, 51] : []),
    processCount: () => 3,
    createdAtMs: () => 77,
    ofProcess: () => '/',
  };
  return {
    cgroups,
    netDev: (pid) =>
      pid === 4242
        ? [{ name: 'eth0', rxBytes: 1, rxPackets: 1, rxErrors: 0, rxDropped: 0, txBytes: 1, txPackets: 1, txErrors: 0, txDropped: 0 }]
        : [],
    fs: (p) => ({ capacityBytes: p.length, availableBytes: 1, usedBytes: 1, inodes: 1, inodesFree: 1 }),
    dirUsage: (p) => (p === '/logs/ns_web_u1/app' ? { usedBytes: 4096, inodesUsed: 2 } : undefined),
    bootTimeMs: () => 1,
    machine: () => ({ cpuCores: 2, memoryBytes: 100, swapBytes: 0 }),
    rlimit: () => ({ maxPid: 10, curProc: 5 }),
    meminfo: () => 'MemTotal: 1 kB\n',
    openFiles: (pid) => (pid === 51 ? undefined : { fds: pid % 10, sockets: pid === 4242 ? 1 : 0 }),
    ulimits: (pid) => [{ name: 'max_open_files', soft: pid, hard: pid }],
    diskstats: () => ' 254       0 vda 1 0 2 3 4 0 5 6 0 7 8\n',
    deviceOf: (p) => (p === '/snapshots' ? '254:0' : undefined),
    // statfs of each partition: its mount point's length in blocks, to tell them apart.
    filesystems: (partitions) => partitions.map((p) => ({ ...fsOf(p.mountpoint.length), device: p.device, mountpoint: p.mountpoint })),
  };
}

const fsOf = (blocks: number): Omit<Filesystem, 'device' | 'mountpoint'> => ({
  capacityBytes: blocks,
  freeBytes: 0,
  availableBytes: 0,
  inodes: 1,
  inodesFree: 1,
  disk: NO_IO,
});

const opts = { rootDir: '/var/lib/kubelet', podLogsDir: '/logs', kubeletStartMs: 2, now: () => 1234 };

test('collectSample with the systemd driver: kubepods, the pod and its containers as slices and scopes', async () => {
  const pod = '/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podu1.slice';
  const s = await collectSample(
    runtime(),
    host(['/', '/kubepods.slice', pod, `${pod}/cri-containerd-s1.scope`, `${pod}/cri-containerd-c1.scope`]),
    { ...opts, cgroups: cgroupLayout('systemd') },
  );
  assert.deepEqual(
    s.system.map((x) => x.cgroupPath),
    ['/kubepods.slice'],
  );
  assert.deepEqual(
    s.pods.map((p) => [p.cgroupPath, p.sandboxCgroupPath, p.sandboxCgroup?.cpu?.usageNs]),
    [[pod, `${pod}/cri-containerd-s1.scope`, `${pod}/cri-containerd-s1.scope`.length]],
  );
  assert.deepEqual(
    s.containers.filter((c) => c.cgroup).map((c) => c.cgroupPath),
    [`${pod}/cri-containerd-c1.scope`],
  );
});

// upstream's GetPodCgroupRoot with cgroupsPerQOS false: cgroupRoot. No pod cgroup (the pod's figures
// are its containers'); the sandbox and containers where containerd puts them without a cgroup parent.
test('collectSample without cgroupsPerQOS: "pods" is the root, no pod cgroup, containers in /k8s.io/<ID>', async () => {
  const s = await collectSample(runtime(), host(['/', '/kubepods', '/kubepods/burstable/podu1', '/k8s.io/s1', '/k8s.io/c1']), {
    ...opts,
    cgroups: cgroupLayout('cgroupfs', '/', false),
  });
  assert.deepEqual(
    s.system.map((x) => [x.name, x.cgroupPath, x.startTimeMs, x.cgroup === s.root]),
    [['pods', '/', 1, true]],
  );
  assert.deepEqual(
    s.pods.map((p) => [p.uid, p.cgroupPath, p.cgroup, p.sandboxCgroupPath, p.network?.[0]?.name]),
    [['u1', undefined, undefined, '/k8s.io/s1', 'eth0']],
  );
  assert.deepEqual(
    s.containers.map((c) => [c.id, c.cgroupPath, c.cgroup?.cpu?.usageNs, c.cri?.cpuNs]),
    [
      ['c1', '/k8s.io/c1', '/k8s.io/c1'.length, 9],
      ['c3', undefined, undefined, undefined],
    ],
  );
});

test('collectSample: running containers grouped under their live sandbox, read from their cgroups', async () => {
  const s = await collectSample(
    runtime(),
    host(['/', '/kubepods', '/kubepods/burstable/podu1', '/kubepods/burstable/podu1/s1', '/kubepods/burstable/podu1/c1']),
    opts,
  );
  assert.equal(s.timeMs, 1234);
  assert.equal(s.runtimeError, undefined);
  assert.deepEqual(
    s.system.map((x) => [x.name, x.cgroupPath, x.startTimeMs]),
    [['pods', '/kubepods', 77]],
  );
  assert.deepEqual(
    s.pods.map((p) => [p.uid, p.sandboxId, p.cgroupPath, p.processCount, p.network?.[0]?.name]),
    [['u1', 's1', '/kubepods/burstable/podu1', 3, 'eth0']],
  );
  assert.equal(s.pods[0]!.sandboxCgroup?.cpu?.usageNs, '/kubepods/burstable/podu1/s1'.length);
  assert.deepEqual(
    s.containers.map((c) => [c.id, c.name, c.cgroupPath, c.cgroup?.cpu?.usageNs, c.cri?.cpuNs, c.logs?.usedBytes]),
    [
      ['c1', 'app', '/kubepods/burstable/podu1/c1', '/kubepods/burstable/podu1/c1'.length, 9, 4096],
      ['c3', 'side', '/kubepods/burstable/podu1/c3', undefined, undefined, undefined],
    ],
  );
  assert.deepEqual(s.imageFs, {
    timeMs: 4,
    usedBytes: 300,
    mountpoint: '/images',
    fs: { capacityBytes: 7, availableBytes: 1, usedBytes: 1, inodes: 1, inodesFree: 1 },
  });
  assert.equal(s.rootFs?.capacityBytes, '/var/lib/kubelet'.length);
  assert.deepEqual(s.rlimit, { maxPid: 10, curProc: 5 });
});

test("collectSample: cadvisor's process stats of each cgroup but the root, ulimits of containers only", async () => {
  const s = await collectSample(
    runtime(),
    host(['/', '/kubepods', '/kubepods/burstable/podu1', '/kubepods/burstable/podu1/s1', '/kubepods/burstable/podu1/c1']),
    opts,
  );
  assert.equal(s.root.processes, undefined, "the root's processes are the host's: not walked");
  assert.deepEqual(s.system[0]!.cgroup.processes, { processCount: 0, fdCount: 0, socketCount: 0, ulimits: [] });
  assert.deepEqual(s.pods[0]!.cgroup?.processes, { processCount: 0, fdCount: 0, socketCount: 0, ulimits: [] }, 'a pod is no container');
  assert.deepEqual(s.pods[0]!.sandboxCgroup?.processes, {
    processCount: 1,
    fdCount: 2,
    socketCount: 1,
    ulimits: [{ name: 'max_open_files', soft: 4242, hard: 4242 }],
  });
  assert.deepEqual(
    s.containers[0]!.cgroup?.processes,
    { processCount: 2, fdCount: 0, socketCount: 0, ulimits: [{ name: 'max_open_files', soft: 50, hard: 50 }] },
    'a process gone since cgroup.procs counts, without descriptors',
  );
  assert.equal(s.containers[0]!.writableLayerDevice, '254:0');
  assert.deepEqual(s.blockDevices, { '254:0': 'vda' });
});

test('collectSample: the configured system containers that exist, the kubelet started when it did', async () => {
  const s = await collectSample(runtime(), host(['/', '/kubepods', '/kubelet.slice', '/system.slice/containerd.service']), {
    ...opts,
    systemCgroups: { kubeletCgroups: '/kubelet.slice', runtimeCgroups: '/system.slice/containerd.service', systemCgroups: '/gone' },
  });
  assert.deepEqual(
    s.system.map((x) => [x.name, x.cgroupPath, x.startTimeMs]),
    [
      ['pods', '/kubepods', 77],
      ['kubelet', '/kubelet.slice', 2],
      ['runtime', '/system.slice/containerd.service', 77],
    ],
  );
});

test("collectSample: cAdvisor's filesystems on the root, and on a system container or pod cgroup its hint names", async () => {
  const pod = '/kubepods/burstable/podu1';
  const partitions = ['/', '/data', '/var/lib/kubelet'].map((mountpoint, i) => ({
    device: `/dev/vd${i}`,
    mountpoint,
    fsType: 'ext4',
    major: 254,
    minor: i,
  }));
  const hints = new Map([
    ['/kubepods', ['/data', '/not-a-mount-point']],
    [pod, ['/var/lib/kubelet']],
    ['/elsewhere', ['/']],
  ]);
  const s = await collectSample(runtime(), host(['/', '/kubepods', pod, `${pod}/s1`, `${pod}/c1`]), {
    ...opts,
    filesystems: { partitions, hints },
  });
  assert.deepEqual(
    s.filesystems?.map((f) => [f.device, f.capacityBytes]),
    [
      ['/dev/vd0', 1],
      ['/dev/vd1', 5],
      ['/dev/vd2', 16],
    ],
  );
  assert.deepEqual(
    s.system.map((x) => [x.cgroupPath, x.filesystems?.map((f) => f.mountpoint)]),
    [['/kubepods', ['/data']]],
  );
  assert.deepEqual(
    s.pods.map((p) => p.filesystems?.map((f) => f.mountpoint)),
    [['/var/lib/kubelet']],
  );
  // Without them (a test's collector), nothing is listed.
  assert.equal((await collectSample(runtime(), host(['/']), opts)).filesystems, undefined);
});

test('collectSample: a runtime that does not answer leaves the node figures and says why', async () => {
  const s = await collectSample(runtime('connection refused'), host(['/']), opts);
  assert.equal(s.runtimeError, 'connection refused');
  assert.deepEqual([s.pods, s.containers], [[], []]);
  assert.equal(s.root.cpu?.usageNs, 1);
});

test('collectSample: a root cgroup without memory files (v2) falls back to /proc/meminfo', async () => {
  const h = host([]);
  h.cgroups.sample = () => ({});
  const s = await collectSample(runtime(), h, opts);
  assert.equal(s.root.memory?.usageBytes, 1024);
});

// Volumes of u1: a disk emptyDir and a configMap on the kubelet's filesystem (dev 1), two tmpfs (dev 7, 8).
function volumes(): VolumeStatsSource & { asked: string[]; kept?: Set<string> } {
  const base = '/var/lib/kubelet/pods/u1/volumes';
  const dirs: VolumeDir[] = [
    { name: 'config', plugin: 'kubernetes.io~configmap', path: `${base}/kubernetes.io~configmap/config`, dev: 1, ownFs: false },
    { name: 'scratch', plugin: 'kubernetes.io~empty-dir', path: `${base}/kubernetes.io~empty-dir/scratch`, dev: 1, ownFs: false },
    { name: 'tmp', plugin: 'kubernetes.io~empty-dir', path: `${base}/kubernetes.io~empty-dir/tmp`, dev: 7, ownFs: true },
    { name: 'token', plugin: 'kubernetes.io~projected', path: `${base}/kubernetes.io~projected/token`, dev: 8, ownFs: true },
  ];
  const src = {
    asked: [] as string[],
    kept: undefined as Set<string> | undefined,
    list: (uid: string) => (uid === 'u1' ? dirs : []),
    usage(path: string) {
      src.asked.push(path);
      return path.endsWith('/tmp') ? undefined : { usedBytes: path.length, inodesUsed: 2, timeMs: 1000 };
    },
    retain(paths: Set<string>) {
      src.kept = paths;
    },
  };
  return src;
}

test("collectSample: the pod's volumes with their last walk, statfs once a filesystem, etc-hosts", async () => {
  const h = host(['/', '/kubepods/burstable/podu1']);
  const statfs: string[] = [];
  const fs = h.fs;
  h.fs = (p) => {
    statfs.push(p);
    return fs(p);
  };
  h.dirUsage = (p) => (p === '/var/lib/kubelet/pods/u1/etc-hosts' ? { usedBytes: 4096, inodesUsed: 1 } : undefined);
  const v = volumes();
  const s = await collectSample(runtime(), h, { ...opts, volumes: v });
  const base = '/var/lib/kubelet/pods/u1/volumes';
  assert.deepEqual(
    s.pods[0]!.volumes!.map((x) => [x.name, x.plugin, x.ownFs, x.usage?.usedBytes, x.fs?.capacityBytes]),
    [
      [
        'config',
        'kubernetes.io~configmap',
        false,
        `${base}/kubernetes.io~configmap/config`.length,
        `${base}/kubernetes.io~configmap/config`.length,
      ],
      // Same filesystem as config: its statfs, not another.
      [
        'scratch',
        'kubernetes.io~empty-dir',
        false,
        `${base}/kubernetes.io~empty-dir/scratch`.length,
        `${base}/kubernetes.io~configmap/config`.length,
      ],
      ['tmp', 'kubernetes.io~empty-dir', true, undefined, `${base}/kubernetes.io~empty-dir/tmp`.length],
      [
        'token',
        'kubernetes.io~projected',
        true,
        `${base}/kubernetes.io~projected/token`.length,
        `${base}/kubernetes.io~projected/token`.length,
      ],
    ],
  );
  assert.deepEqual(
    statfs.filter((p) => p.startsWith(base)),
    [`${base}/kubernetes.io~configmap/config`, `${base}/kubernetes.io~empty-dir/tmp`, `${base}/kubernetes.io~projected/token`],
  );
  assert.deepEqual(s.pods[0]!.etcHosts, { usedBytes: 4096, inodesUsed: 1 });
  assert.equal(v.asked.length, 4);
  assert.deepEqual(
    [...v.kept!].sort(),
    v
      .list('u1')
      .map((d) => d.path)
      .sort(),
    'the walks of the listed volumes are kept',
  );
});

function claims(): ClaimStatsSource & { kept?: Set<string> } {
  const data: RawVolume = {
    name: 'data',
    plugin: 'kubernetes.io~csi',
    ownFs: true,
    metrics: { capacityBytes: 10, availableBytes: 6, usedBytes: 4, inodes: 0, inodesFree: 0, inodesUsed: 0, timeMs: 900 },
    pvc: { name: 'data-web', namespace: 'ns' },
  };
  const src = {
    kept: undefined as Set<string> | undefined,
    volumes: (uid: string) => (uid === 'u1' ? [data] : []),
    retain(uids: Set<string>) {
      src.kept = uids;
    },
  };
  return src;
}

test("collectSample: the pod's claim volumes after its directories; the live pods' figures kept", async () => {
  const c = claims();
  const s = await collectSample(runtime(), host(['/', '/kubepods/burstable/podu1']), { ...opts, volumes: volumes(), claims: c });
  assert.deepEqual(
    s.pods[0]!.volumes!.map((x) => [x.name, x.pvc?.name]),
    [
      ['config', undefined],
      ['scratch', undefined],
      ['tmp', undefined],
      ['token', undefined],
      ['data', 'data-web'],
    ],
  );
  assert.deepEqual([...c.kept!], ['u1'], 'the pods sampled (u2 has no live container)');
  // Claims alone (no directory source): still listed.
  const only = await collectSample(runtime(), host(['/']), { ...opts, claims: claims() });
  assert.deepEqual(
    only.pods[0]!.volumes!.map((x) => x.name),
    ['data'],
  );
});

test("collectSample: a runtime that does not answer keeps the volumes' walks and the claims' figures", async () => {
  const v = volumes();
  const c = claims();
  await collectSample(runtime('connection refused'), host(['/']), { ...opts, volumes: v, claims: c });
  assert.equal(v.kept, undefined);
  assert.equal(c.kept, undefined);
});

test("collectSample: the running containers' application metrics, with containerd's labels (the image's, the CRI's over them)", async () => {
  const seen: { id: string; pids: number[]; labels: Record<string, string> }[] = [];
  const rt = {
    ...runtime(),
    containers: async () => containers.map((c) => ({ ...c, labels: { 'io.kubernetes.container.name': c.name, shared: 'cri' } })),
    imageLabels: async (ref: string) => ({ 'io.cadvisor.metric.prometheus': `/${ref}.json`, shared: 'image' }),
  };
  const pod = '/kubepods/besteffort/podu1';
  const s = await collectSample(rt, host(['/', '/kubepods', pod, `${pod}/s1`, `${pod}/c1`, `${pod}/c3`]), {
    ...opts,
    appMetrics: async (cs) => {
      for (const c of cs) seen.push({ id: c.id, pids: c.pids(), labels: await c.labels() });
      return new Map([['c1', { specs: [], values: { up: [{ floatValue: 1, timestampMs: 5 }] } }]]);
    },
  });
  assert.deepEqual(seen, [
    {
      id: 'c1',
      pids: [50, 51],
      labels: { 'io.cadvisor.metric.prometheus': '/sha256:img.json', shared: 'cri', 'io.kubernetes.container.name': 'app' },
    },
    {
      id: 'c3',
      pids: [],
      labels: { 'io.cadvisor.metric.prometheus': '/sha256:img.json', shared: 'cri', 'io.kubernetes.container.name': 'side' },
    },
  ]);
  assert.deepEqual(
    s.containers.map((c) => [c.id, c.customMetrics?.values.up?.[0]?.floatValue]),
    [
      ['c1', 1],
      ['c3', undefined],
    ],
  );
});
