import { test } from 'node:test';
import assert from 'node:assert/strict';
import { earlier, later, T } from './fixtures.test.ts';
import { buildSummary, cpuAndMemoryOnly, rfc3339 } from './summary.ts';
import type { RawSample } from './sample.ts';

// The wire form: what /stats/summary sends (undefined fields dropped).
const wire = (x: unknown) => JSON.parse(JSON.stringify(x));
const t = '2026-11-22T12:00:10Z';
const fs = { availableBytes: 600, capacityBytes: 1000 };
const inodes = { inodesFree: 70, inodes: 100 };

test('rfc3339: whole seconds in UTC, as metav1.Time', () => {
  assert.equal(rfc3339(T + 999), t);
  assert.equal(rfc3339(0), '1970-01-01T00:00:00Z');
});

test('buildSummary: node, system containers, pods and containers with rates against the previous sample', () => {
  assert.deepEqual(wire(buildSummary('node-1', later, earlier)), {
    node: {
      nodeName: 'node-1',
      systemContainers: [{
        name: 'pods', startTime: '2026-11-22T08:00:05Z',
        cpu: { time: t, usageNanoCores: 500_000_000, usageCoreNanoSeconds: 15e9 },
        memory: { time: t, usageBytes: 900, workingSetBytes: 800, rssBytes: 100, pageFaults: 50, majorPageFaults: 5 },
      }],
      startTime: '2026-11-22T08:00:00Z',
      cpu: { time: t, usageNanoCores: 1e9, usageCoreNanoSeconds: 110e9 },
      memory: { time: t, availableBytes: 6000, usageBytes: 5000, workingSetBytes: 4000, rssBytes: 100, pageFaults: 50, majorPageFaults: 5 },
      network: {
        time: t, name: 'eth0', rxBytes: 10, rxErrors: 1, txBytes: 20, txErrors: 2,
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
    },
    pods: [{
      podRef: { name: 'web', namespace: 'ns', uid: 'u1' },
      startTime: '2026-11-22T11:00:00Z',
      containers: [
        {
          name: 'app', startTime: '2026-11-22T11:00:01Z',
          cpu: { time: t, usageNanoCores: 200_000_000, usageCoreNanoSeconds: 6e9 },
          memory: { time: t, availableBytes: 700, usageBytes: 400, workingSetBytes: 300, rssBytes: 100, pageFaults: 50, majorPageFaults: 5 },
          rootfs: { time: '2026-11-22T12:00:08Z', ...fs, usedBytes: 8192, ...inodes, inodesUsed: 5 },
          logs: { time: t, ...fs, usedBytes: 4096, ...inodes, inodesUsed: 2 },
        },
        {
          // No cgroup read: the runtime's figures, at the runtime's time.
          name: 'side', startTime: '2026-11-22T11:00:02Z',
          cpu: { time: '2026-11-22T12:00:09Z', usageNanoCores: 100_000_000, usageCoreNanoSeconds: 2e9 },
          memory: { time: '2026-11-22T12:00:09Z', usageBytes: 150, workingSetBytes: 100, rssBytes: 20 },
        },
      ],
      cpu: { time: t, usageNanoCores: 200_000_000, usageCoreNanoSeconds: 7e9 },
      memory: { time: t, usageBytes: 600, workingSetBytes: 500, rssBytes: 100, pageFaults: 50, majorPageFaults: 5 },
      network: { time: t, name: 'eth0', rxBytes: 7, rxErrors: 0, txBytes: 8, txErrors: 0, interfaces: [{ name: 'eth0', rxBytes: 7, rxErrors: 0, txBytes: 8, txErrors: 0 }] },
      'ephemeral-storage': { time: t, ...fs, usedBytes: 12288, ...inodes, inodesUsed: 7 },
      process_stats: { process_count: 3 },
    }],
  });
});

test('buildSummary: without a previous sample there is no rate yet', () => {
  const s = buildSummary('node-1', later);
  const rates = [s.node.cpu, ...s.node.systemContainers!.map((c) => c.cpu), ...s.pods.flatMap((p) => [p.cpu, ...p.containers.map((c) => c.cpu)])].map((c) => c?.usageNanoCores);
  assert.deepEqual(rates, [undefined, undefined, undefined, undefined, undefined]);
  assert.equal(s.pods[0]!.containers[0]!.cpu!.usageCoreNanoSeconds, 6e9);
});

test('buildSummary: the edges of what a sample may lack', async (tt) => {
  const cases: [name: string, edit: (s: RawSample) => void, check: (w: any) => void][] = [
    ['no pod cgroup: the pod is its containers summed', (s) => { s.pods[0]!.cgroup = undefined; }, (w) => {
      assert.deepEqual(w.pods[0].cpu, { time: t, usageNanoCores: 300_000_000, usageCoreNanoSeconds: 8e9 });
      assert.deepEqual(w.pods[0].memory, { time: t, usageBytes: 550, workingSetBytes: 400, rssBytes: 120 });
    }],
    ['a container with no figures at all reports zero, as upstream', (s) => { s.containers[1]!.cri = undefined; }, (w) => {
      assert.deepEqual(w.pods[0].containers[1].cpu, { time: t, usageNanoCores: 0, usageCoreNanoSeconds: 0 });
      assert.deepEqual(w.pods[0].containers[1].memory, { time: t, workingSetBytes: 0 });
    }],
    ['no interfaces: no network', (s) => { s.network = []; s.pods[0]!.network = undefined; }, (w) => {
      assert.equal(w.node.network, undefined);
      assert.equal(w.pods[0].network, undefined);
    }],
    ['no eth0: the inline figures are blank, the list stays', (s) => { s.network = s.network.slice(0, 1); }, (w) => {
      assert.deepEqual(w.node.network, { time: t, name: '', interfaces: [{ name: 'ens3', rxBytes: 1, rxErrors: 0, txBytes: 2, txErrors: 0 }] });
    }],
    ['no image filesystem: no runtime section', (s) => { s.imageFs = undefined; }, (w) => {
      assert.equal(w.node.runtime, undefined);
      assert.deepEqual(w.pods[0].containers[0].rootfs, { time: '2026-11-22T12:00:08Z', usedBytes: 8192, inodesUsed: 5 });
    }],
    ['a pod whose containers were not sampled lists none', (s) => { s.containers = []; }, (w) => {
      assert.deepEqual(w.pods[0].containers, []);
    }],
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
  assert.deepEqual(Object.keys(w.node), ['nodeName', 'systemContainers', 'startTime', 'cpu', 'memory']);
  assert.deepEqual(Object.keys(w.node.systemContainers[0]), ['name', 'startTime', 'cpu', 'memory']);
  assert.deepEqual(Object.keys(w.pods[0]), ['podRef', 'startTime', 'containers', 'cpu', 'memory']);
  assert.deepEqual(Object.keys(w.pods[0].containers[0]), ['name', 'startTime', 'cpu', 'memory']);
  assert.equal(w.pods[0].cpu.usageNanoCores, 200_000_000);
});
