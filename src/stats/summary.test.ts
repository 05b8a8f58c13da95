import { test } from 'node:test';
import assert from 'node:assert/strict';
import { earlier, later, T } from './testing.ts';
import { buildSummary, cpuAndMemoryOnly, isLocalEphemeral, userDefinedMetrics, volumeStats } from './summary.ts';
import type { RawSample, RawVolume } from './sample.ts';

// The wire form: what /stats/summary sends (undefined fields dropped).
const wire = (x: unknown) => JSON.parse(JSON.stringify(x));
const t = '2026-11-22T12:00:10Z';
const fs = { availableBytes: 600, capacityBytes: 1000 };
const inodes = { inodesFree: 70, inodes: 100 };
// cadvisor's PSI where the kernel has none (the fixtures are a cgroup v1 host).
const zero = { total: 0, avg10: 0, avg60: 0, avg300: 0 };
const Z = { full: zero, some: zero };

test("buildSummary: node, system containers, pods and containers with rates against the previous sample; page faults are the cgroup's own (cadvisor's ContainerData)", () => {
  assert.deepEqual(wire(buildSummary('node-1', later, earlier)), {
    node: {
      nodeName: 'node-1',
      systemContainers: [
        {
          name: 'pods',
          startTime: '2026-11-22T08:00:05Z',
          cpu: { time: t, usageNanoCores: 500_000_000, usageCoreNanoSeconds: 15e9, psi: Z },
          memory: { time: t, usageBytes: 900, workingSetBytes: 800, rssBytes: 100, pageFaults: 1, majorPageFaults: 0, psi: Z },
          io: { time: t, psi: Z },
          swap: { time: t, swapUsageBytes: 0 },
        },
      ],
      startTime: '2026-11-22T08:00:00Z',
      cpu: { time: t, usageNanoCores: 1e9, usageCoreNanoSeconds: 110e9, psi: Z },
      memory: {
        time: t,
        availableBytes: 6000,
        usageBytes: 5000,
        workingSetBytes: 4000,
        rssBytes: 100,
        pageFaults: 1,
        majorPageFaults: 0,
        psi: Z,
      },
      io: { time: t, psi: Z },
      network: {
        time: t,
        name: 'eth0',
        rxBytes: 10,
        rxErrors: 1,
        txBytes: 20,
        txErrors: 2,
        interfaces: [
          { name: 'ens3', rxBytes: 1, rxErrors: 0, txBytes: 2, txErrors: 0 },
          { name: 'eth0', rxBytes: 10, rxErrors: 1, txBytes: 20, txErrors: 2 },
        ],
      },
      fs: { time: t, ...fs, usedBytes: 350, ...inodes, inodesUsed: 30 },
      runtime: {
        imageFs: { time: '2026-11-22T12:00:07Z', ...fs, usedBytes: 300, ...inodes, inodesUsed: 40 },
        containerFs: { time: '2026-11-22T12:00:07Z', ...fs, usedBytes: 300, ...inodes, inodesUsed: 40 },
      },
      rlimit: { time: t, maxpid: 32768, curproc: 154 },
      // SwapTotal is the node's swap limit.
      swap: { time: t, swapAvailableBytes: 2000, swapUsageBytes: 0 },
    },
    pods: [
      {
        podRef: { name: 'web', namespace: 'ns', uid: 'u1' },
        startTime: '2026-11-22T11:00:00Z',
        containers: [
          {
            name: 'app',
            startTime: '2026-11-22T11:00:01Z',
            cpu: { time: t, usageNanoCores: 200_000_000, usageCoreNanoSeconds: 6e9 },
            memory: {
              time: t,
              availableBytes: 700,
              usageBytes: 400,
              workingSetBytes: 300,
              rssBytes: 100,
              pageFaults: 1,
              majorPageFaults: 0,
            },
            // Containers in the CRI's shape: no PSI where the runtime has none (v1), unlimited swap is 0.
            io: { time: t },
            rootfs: { time: '2026-11-22T12:00:08Z', ...fs, usedBytes: 8192, ...inodes, inodesUsed: 5 },
            logs: { time: t, ...fs, usedBytes: 4096, ...inodes, inodesUsed: 2 },
            swap: { time: t, swapAvailableBytes: 0, swapUsageBytes: 0 },
          },
          {
            // No cgroup read: the runtime's figures, at the runtime's time.
            name: 'side',
            startTime: '2026-11-22T11:00:02Z',
            cpu: { time: '2026-11-22T12:00:09Z', usageNanoCores: 100_000_000, usageCoreNanoSeconds: 2e9 },
            memory: { time: '2026-11-22T12:00:09Z', usageBytes: 150, workingSetBytes: 100, rssBytes: 20 },
            // The runtime sent no io or swap: what the kubelet fills in.
            io: { time: t },
            swap: { time: t, swapAvailableBytes: 0, swapUsageBytes: 0 },
          },
        ],
        cpu: { time: t, usageNanoCores: 200_000_000, usageCoreNanoSeconds: 7e9, psi: Z },
        memory: { time: t, usageBytes: 600, workingSetBytes: 500, rssBytes: 100, pageFaults: 1, majorPageFaults: 0, psi: Z },
        io: { time: t, psi: Z },
        network: {
          time: t,
          name: 'eth0',
          rxBytes: 7,
          rxErrors: 0,
          txBytes: 8,
          txErrors: 0,
          interfaces: [{ name: 'eth0', rxBytes: 7, rxErrors: 0, txBytes: 8, txErrors: 0 }],
        },
        'ephemeral-storage': { time: t, ...fs, usedBytes: 12288, ...inodes, inodesUsed: 7 },
        process_stats: { process_count: 3 },
        swap: { time: t, swapUsageBytes: 0 },
      },
    ],
  });
});

test("buildSummary: the fields in upstream's order (the JSON keys of its structs)", () => {
  const w = wire(buildSummary('node-1', later, earlier));
  assert.deepEqual(Object.keys(w.node), [
    'nodeName',
    'systemContainers',
    'startTime',
    'cpu',
    'memory',
    'io',
    'network',
    'fs',
    'runtime',
    'rlimit',
    'swap',
  ]);
  assert.deepEqual(Object.keys(w.node.systemContainers[0]), ['name', 'startTime', 'cpu', 'memory', 'io', 'swap']);
  assert.deepEqual(Object.keys(w.pods[0]), [
    'podRef',
    'startTime',
    'containers',
    'cpu',
    'memory',
    'io',
    'network',
    'ephemeral-storage',
    'process_stats',
    'swap',
  ]);
  assert.deepEqual(Object.keys(w.pods[0].containers[0]), ['name', 'startTime', 'cpu', 'memory', 'io', 'rootfs', 'logs', 'swap']);
  assert.deepEqual(Object.keys(w.node.cpu.psi), ['full', 'some']);
  assert.deepEqual(Object.keys(w.node.cpu.psi.full), ['total', 'avg10', 'avg60', 'avg300']);
  assert.deepEqual(Object.keys(w.node.swap), ['time', 'swapAvailableBytes', 'swapUsageBytes']);
});

test('buildSummary: without a previous sample there is no rate yet', () => {
  const s = buildSummary('node-1', later);
  const rates = [
    s.node.cpu,
    ...s.node.systemContainers!.map((c) => c.cpu),
    ...s.pods.flatMap((p) => [p.cpu, ...p.containers.map((c) => c.cpu)]),
  ].map((c) => c?.usageNanoCores);
  assert.deepEqual(rates, [undefined, undefined, undefined, undefined, undefined]);
  assert.equal(s.pods[0]!.containers[0]!.cpu!.usageCoreNanoSeconds, 6e9);
});

// A PSI reading whose figures are all derived from n, in the sample's form and on the wire.
const P = (n: number) => ({
  some: { total: n * 1000, avg10: n, avg60: n / 2, avg300: n / 4 },
  full: { total: n * 100, avg10: n / 10, avg60: 0, avg300: 0 },
});
const W = (n: number) => {
  const p = P(n);
  return { full: p.full, some: p.some };
};

test('buildSummary: the edges of what a sample may lack', async (tt) => {
  const cases: [name: string, edit: (s: RawSample) => void, check: (w: any) => void][] = [
    [
      'no pod cgroup: the pod is its containers summed',
      (s) => {
        s.pods[0]!.cgroup = undefined;
      },
      (w) => {
        assert.deepEqual(w.pods[0].cpu, { time: t, usageNanoCores: 300_000_000, usageCoreNanoSeconds: 8e9 });
        assert.deepEqual(w.pods[0].memory, { time: t, availableBytes: 700, usageBytes: 550, workingSetBytes: 400, rssBytes: 120 });
        assert.deepEqual(w.pods[0].io, { time: t }, 'pressure does not add up');
        assert.deepEqual(w.pods[0].swap, { time: t, swapAvailableBytes: 0, swapUsageBytes: 0 });
      },
    ],
    [
      'a container with no figures at all reports zero, as upstream',
      (s) => {
        s.containers[1]!.cri = undefined;
      },
      (w) => {
        assert.deepEqual(w.pods[0].containers[1].cpu, { time: t, usageNanoCores: 0, usageCoreNanoSeconds: 0 });
        assert.deepEqual(w.pods[0].containers[1].memory, { time: t, workingSetBytes: 0 });
      },
    ],
    [
      'no interfaces: no network',
      (s) => {
        s.network = [];
        s.pods[0]!.network = undefined;
      },
      (w) => {
        assert.equal(w.node.network, undefined);
        assert.equal(w.pods[0].network, undefined);
      },
    ],
    [
      'no eth0: the inline figures are blank, the list stays',
      (s) => {
        s.network = s.network.slice(0, 1);
      },
      (w) => {
        assert.deepEqual(w.node.network, {
          time: t,
          name: '',
          interfaces: [{ name: 'ens3', rxBytes: 1, rxErrors: 0, txBytes: 2, txErrors: 0 }],
        });
      },
    ],
    [
      'no image filesystem: no runtime section',
      (s) => {
        s.imageFs = undefined;
      },
      (w) => {
        assert.equal(w.node.runtime, undefined);
        assert.deepEqual(w.pods[0].containers[0].rootfs, { time: '2026-11-22T12:00:08Z', usedBytes: 8192, inodesUsed: 5 });
      },
    ],
    [
      'a pod whose containers were not sampled lists none',
      (s) => {
        s.containers = [];
      },
      (w) => {
        assert.deepEqual(w.pods[0].containers, []);
      },
    ],
    [
      'cgroup v2: pressure from the files, swap against swap.max',
      (s) => {
        s.root.psi = { cpu: P(1), memory: P(2), io: P(3) };
        for (const cg of [s.system[0]!.cgroup, s.pods[0]!.cgroup!, s.containers[0]!.cgroup!]) {
          cg.psi = { cpu: P(4), memory: undefined, io: P(5) };
          cg.memory = { ...cg.memory!, swapBytes: 100, swapLimitBytes: 1000 };
        }
        s.root.memory!.swapBytes = 300;
      },
      (w) => {
        assert.deepEqual([w.node.cpu.psi, w.node.memory.psi, w.node.io.psi], [W(1), W(2), W(3)]);
        assert.deepEqual(w.node.swap, { time: t, swapAvailableBytes: 1700, swapUsageBytes: 300 });
        const sys = w.node.systemContainers[0];
        assert.deepEqual([sys.cpu.psi, sys.memory.psi, sys.io.psi], [W(4), Z, W(5)], 'a file PSI left out is zeros, as cadvisor');
        assert.deepEqual(sys.swap, { time: t, swapAvailableBytes: 900, swapUsageBytes: 100 });
        const pod = w.pods[0];
        assert.deepEqual(
          [pod.cpu.psi, pod.memory.psi, pod.io, pod.swap],
          [W(4), Z, { time: t, psi: W(5) }, { time: t, swapAvailableBytes: 900, swapUsageBytes: 100 }],
        );
        const app = pod.containers[0];
        assert.deepEqual(
          [app.cpu.psi, app.memory.psi, app.io],
          [W(4), undefined, { time: t, psi: W(5) }],
          'containers: only the PSI there is',
        );
        assert.deepEqual(app.swap, { time: t, swapAvailableBytes: 900, swapUsageBytes: 100 });
      },
    ],
    [
      'a container without a memory limit has 0 available, as containerd says',
      (s) => {
        s.containers[0]!.cgroup!.memory!.limitBytes = undefined;
      },
      (w) => {
        assert.equal(w.pods[0].containers[0].memory.availableBytes, 0);
        assert.equal(w.pods[0].memory.availableBytes, undefined, 'the pod cgroup as cadvisor: nothing without a limit');
      },
    ],
    [
      'a container known only from CRI: its memory, io and swap as the runtime sent them',
      (s) => {
        Object.assign(s.containers[1]!.cri!, {
          availableBytes: 400,
          cpuPsi: P(6),
          memoryPsi: P(7),
          io: { timeMs: T - 500, psi: P(8) },
          swap: { timeMs: T - 500, usageBytes: 5, availableBytes: 50 },
        });
      },
      (w) => {
        const side = w.pods[0].containers[1];
        const at = '2026-11-22T12:00:09Z';
        assert.deepEqual(side.cpu.psi, W(6));
        assert.deepEqual(side.memory, { time: at, availableBytes: 400, usageBytes: 150, workingSetBytes: 100, rssBytes: 20, psi: W(7) });
        assert.deepEqual(
          [side.io, side.swap],
          [
            { time: at, psi: W(8) },
            { time: at, swapAvailableBytes: 50, swapUsageBytes: 5 },
          ],
        );
      },
    ],
  ];
  for (const [name, edit, check] of cases) {
    await tt.test(name, () => {
      const s = structuredClone(later);
      edit(s);
      check(wire(buildSummary('node-1', s, earlier)));
    });
  }
});

test('cpuAndMemoryOnly keeps what metrics-server reads and nothing else', () => {
  const w = wire(cpuAndMemoryOnly(buildSummary('node-1', later, earlier)));
  // Upstream's CPU-and-memory path keeps swap too.
  assert.deepEqual(Object.keys(w.node), ['nodeName', 'systemContainers', 'startTime', 'cpu', 'memory', 'swap']);
  assert.deepEqual(Object.keys(w.node.systemContainers[0]), ['name', 'startTime', 'cpu', 'memory', 'swap']);
  assert.deepEqual(Object.keys(w.pods[0]), ['podRef', 'startTime', 'containers', 'cpu', 'memory', 'swap']);
  assert.deepEqual(Object.keys(w.pods[0].containers[0]), ['name', 'startTime', 'cpu', 'memory', 'swap']);
  assert.equal(w.pods[0].cpu.usageNanoCores, 200_000_000);
});

test("isLocalEphemeral: upstream's IsLocalEphemeralVolume, told from the volume directory", () => {
  const cases: [plugin: string, ownFs: boolean, counts: boolean][] = [
    ['kubernetes.io~empty-dir', false, true], // medium "": on the node's disk
    ['kubernetes.io~empty-dir', true, false], // medium Memory: a tmpfs of its own
    ['kubernetes.io~configmap', false, true],
    ['kubernetes.io~git-repo', false, true],
    ['kubernetes.io~secret', true, false],
    ['kubernetes.io~projected', true, false],
    ['kubernetes.io~downward-api', true, false],
    ['kubernetes.io~local-volume', true, false], // a claim: persistent, whatever disk it is on
    ['kubernetes.io~csi', true, false],
  ];
  for (const [plugin, ownFs, counts] of cases) assert.equal(isLocalEphemeral({ plugin, ownFs }), counts, `${plugin} ownFs=${ownFs}`);
});

const vfs = { capacityBytes: 1000, availableBytes: 600, usedBytes: 350, inodes: 100, inodesFree: 70 };
const vol = (name: string, plugin: string, ownFs: boolean, usedBytes: number, inodesUsed: number, fs = vfs): RawVolume => ({
  name,
  plugin,
  ownFs,
  usage: { usedBytes, inodesUsed, timeMs: T - 20_000 },
  fs,
});

const claimVol = (name: string, plugin: string, abnormal?: boolean): RawVolume => ({
  name,
  plugin,
  ownFs: true,
  metrics: {
    capacityBytes: 8000,
    availableBytes: 5000,
    usedBytes: 3000,
    inodes: 100,
    inodesFree: 90,
    inodesUsed: 10,
    abnormal,
    timeMs: T - 30_000,
  },
  pvc: { name: `${name}-web-0`, namespace: 'ns' },
});

test("volumeStats: used from du (at the walk's time), the rest from statfs; a claim's as measured; nothing before the first walk or without statfs", () => {
  const tmpfs = { capacityBytes: 64, availableBytes: 60, usedBytes: 4, inodes: 10, inodesFree: 7 };
  const cases: [name: string, v: RawVolume, want: unknown][] = [
    [
      'emptyDir on disk',
      vol('scratch', 'kubernetes.io~empty-dir', false, 40960, 12),
      {
        time: '2026-11-22T11:59:50Z',
        availableBytes: 600,
        capacityBytes: 1000,
        usedBytes: 40960,
        inodesFree: 70,
        inodes: 100,
        inodesUsed: 12,
        name: 'scratch',
      },
    ],
    [
      'a tmpfs: its own statfs',
      vol('token', 'kubernetes.io~projected', true, 4096, 3, tmpfs),
      {
        time: '2026-11-22T11:59:50Z',
        availableBytes: 60,
        capacityBytes: 64,
        usedBytes: 4096,
        inodesFree: 7,
        inodes: 10,
        inodesUsed: 3,
        name: 'token',
      },
    ],
    [
      "a claim: its plugin's figures, at their time, and pvcRef",
      claimVol('data', 'kubernetes.io~local-volume'),
      {
        time: '2026-11-22T11:59:40Z',
        availableBytes: 5000,
        capacityBytes: 8000,
        usedBytes: 3000,
        inodesFree: 90,
        inodes: 100,
        inodesUsed: 10,
        name: 'data',
        pvcRef: { name: 'data-web-0', namespace: 'ns' },
      },
    ],
    [
      "a CSI claim with CSIVolumeHealth: the driver's condition",
      claimVol('logs', 'kubernetes.io~csi', true),
      {
        time: '2026-11-22T11:59:40Z',
        availableBytes: 5000,
        capacityBytes: 8000,
        usedBytes: 3000,
        inodesFree: 90,
        inodes: 100,
        inodesUsed: 10,
        name: 'logs',
        pvcRef: { name: 'logs-web-0', namespace: 'ns' },
        volumeHealthStats: { abnormal: true },
      },
    ],
    ['a claim not measured yet', { ...claimVol('new', 'kubernetes.io~csi'), metrics: undefined }, undefined],
    ['not walked yet', { ...vol('new', 'kubernetes.io~empty-dir', false, 0, 0), usage: undefined }, undefined],
    ['no statfs', { ...vol('gone', 'kubernetes.io~empty-dir', false, 0, 0), fs: undefined }, undefined],
  ];
  for (const [name, v, want] of cases) {
    const got = wire({ v: volumeStats(v) }).v;
    assert.deepEqual(got, want, name);
    if (got)
      assert.deepEqual(
        Object.keys(got).slice(0, 8),
        ['time', 'availableBytes', 'capacityBytes', 'usedBytes', 'inodesFree', 'inodes', 'inodesUsed', 'name'],
        `${name}: upstream's order`,
      );
  }
});

test("buildSummary: the pod's volumes, and its local ephemeral ones and etc-hosts in its ephemeral storage", () => {
  const s = structuredClone(later);
  s.pods[0]!.volumes = [
    vol('tmp', 'kubernetes.io~empty-dir', true, 1 << 20, 50),
    vol('config', 'kubernetes.io~configmap', false, 8192, 4),
    vol('scratch', 'kubernetes.io~empty-dir', false, 40960, 12),
    vol('kube-api-access', 'kubernetes.io~projected', true, 12288, 6),
    { ...vol('fresh', 'kubernetes.io~empty-dir', false, 0, 0), usage: undefined },
    claimVol('data', 'kubernetes.io~local-volume'),
    claimVol('cache', 'kubernetes.io~csi'),
  ];
  s.pods[0]!.etcHosts = { usedBytes: 4096, inodesUsed: 1 };
  const w = wire(buildSummary('node-1', s, earlier));
  // Local ephemeral first, then the rest, by name; the one not yet walked is left out.
  assert.deepEqual(
    w.pods[0].volume.map((v: { name: string; usedBytes: number }) => [v.name, v.usedBytes]),
    [
      ['config', 8192],
      ['scratch', 40960],
      ['cache', 3000],
      ['data', 3000],
      ['kube-api-access', 12288],
      ['tmp', 1 << 20],
    ],
  );
  // Claim volumes are not local ephemeral storage (upstream's IsLocalEphemeralVolume): not counted.
  // Writable layer 8192 + logs 4096, configMap 8192, emptyDir 40960, etc-hosts 4096; inodes 5 + 2 + 4 + 12 + 1.
  assert.deepEqual(w.pods[0]['ephemeral-storage'], { time: t, ...fs, usedBytes: 65536, ...inodes, inodesUsed: 24 });
  assert.deepEqual(Object.keys(w.pods[0]), [
    'podRef',
    'startTime',
    'containers',
    'cpu',
    'memory',
    'io',
    'network',
    'volume',
    'ephemeral-storage',
    'process_stats',
    'swap',
  ]);
  // Without volumes: none listed, as before.
  assert.equal(wire(buildSummary('node-1', later, earlier)).pods[0].volume, undefined);
});

test("userDefinedMetrics: a metric a spec with the latest of the two samples' values; an int metric's integer; none without specs", () => {
  const [c] = later.containers;
  const at = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
  const specs = [
    { name: 'up', type: 'gauge', format: 'float', units: '' },
    { name: 'active', type: 'gauge', format: 'int', units: 'connections' },
    { name: 'idle', type: 'cumulative', format: 'float', units: '' },
  ];
  const prev = {
    ...c!,
    customMetrics: {
      specs,
      values: { up: [{ floatValue: 1, timestampMs: T - 10_000 }], idle: [{ floatValue: 4, timestampMs: T - 10_000 }] },
    },
  };
  const cur = {
    ...c!,
    customMetrics: { specs, values: { up: [{ floatValue: 0, timestampMs: T }], active: [{ floatValue: 0, intValue: 7, timestampMs: T }] } },
  };
  assert.deepEqual(userDefinedMetrics(cur, prev), [
    { name: 'up', type: 'gauge', units: '', time: at(T), value: 0 },
    { name: 'active', type: 'gauge', units: 'connections', time: at(T), value: 7 },
    { name: 'idle', type: 'cumulative', units: '', time: at(T - 10_000), value: 4 },
  ]);
  assert.deepEqual(userDefinedMetrics({ ...c!, customMetrics: { specs: [], values: { up: [] } } }, undefined), undefined);
  assert.equal(userDefinedMetrics(c!, undefined), undefined);
  // In the Summary, after logs, before swap (upstream's field order).
  const w = buildSummary('n', { ...later, containers: [cur, ...later.containers.slice(1)] }, earlier);
  assert.deepEqual(Object.keys(w.pods[0]!.containers.find((x) => x.name === c!.name)!).slice(-2), ['userDefinedMetrics', 'swap']);
});
