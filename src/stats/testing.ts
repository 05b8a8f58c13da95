// Samples for the stats tests (testing.ts: left out of the build and of the unit test glob): one
// node, one pod with two containers (one read from its cgroup, one known only from CRI stats),
// taken at T, and an earlier one 10 s before.
import type { CgroupSample, MemorySample, RawSample } from './sample.ts';

export const T = Date.parse('2026-11-22T12:00:10Z');

export const mem = (usage: number, ws: number, limit?: number): MemorySample => ({
  usageBytes: usage,
  workingSetBytes: ws,
  rssBytes: 100,
  cacheBytes: 200,
  mappedFileBytes: 30,
  swapBytes: 0,
  activeFileBytes: 150,
  inactiveFileBytes: usage - ws,
  kernelBytes: 40,
  pageFaults: 50,
  majorPageFaults: 5,
  localPageFaults: 1,
  localMajorPageFaults: 0,
  maxUsageBytes: usage * 2,
  failcnt: 0,
  limitBytes: limit,
});
const cg = (usageNs: number, memory: MemorySample): CgroupSample => ({
  cpu: { usageNs, userNs: usageNs / 2, systemNs: usageNs / 2, shares: 2, periodUs: 100000 },
  memory,
});
const fs = { capacityBytes: 1000, availableBytes: 600, usedBytes: 350, inodes: 100, inodesFree: 70 };

/** A sample at `at` with the given cumulative CPU figures (ns). */
export function sample(at: number, cpu: { node: number; pods: number; pod: number; app: number; side: number }): RawSample {
  return {
    timeMs: at,
    bootTimeMs: Date.parse('2026-11-22T08:00:00Z'),
    machine: {
      cpuCores: 2,
      memoryBytes: 10_000,
      swapBytes: 2000,
      physicalCores: 2,
      sockets: 1,
      machineID: 'mid',
      systemUUID: 'uuid',
      bootID: 'boot',
      kernelVersion: '6.1.0',
      osVersion: 'Debian GNU/Linux 12 (bookworm)',
    },
    root: cg(cpu.node, mem(5000, 4000)),
    network: [
      { name: 'ens3', rxBytes: 1, rxPackets: 1, rxErrors: 0, rxDropped: 0, txBytes: 2, txPackets: 2, txErrors: 0, txDropped: 0 },
      { name: 'eth0', rxBytes: 10, rxPackets: 3, rxErrors: 1, rxDropped: 0, txBytes: 20, txPackets: 4, txErrors: 2, txDropped: 0 },
    ],
    system: [
      { name: 'pods', cgroupPath: '/kubepods', startTimeMs: Date.parse('2026-11-22T08:00:05Z'), cgroup: cg(cpu.pods, mem(900, 800)) },
    ],
    rootFs: fs,
    imageFs: { timeMs: at - 3000, usedBytes: 300, inodesUsed: 40, mountpoint: '/var/lib/containerd/snapshots', fs },
    rlimit: { maxPid: 32768, curProc: 154 },
    blockDevices: { '254:0': 'vda', '7:0': 'loop0' },
    pods: [
      {
        uid: 'u1',
        name: 'web',
        namespace: 'ns',
        sandboxId: 's1',
        createdAtMs: Date.parse('2026-11-22T11:00:00Z'),
        cgroupPath: '/kubepods/besteffort/podu1',
        sandboxCgroupPath: '/kubepods/besteffort/podu1/s1',
        cgroup: cg(cpu.pod, mem(600, 500)),
        sandboxCgroup: cg(1e6, mem(60, 50)),
        processCount: 3,
        network: [
          { name: 'eth0', rxBytes: 7, rxPackets: 1, rxErrors: 0, rxDropped: 0, txBytes: 8, txPackets: 1, txErrors: 0, txDropped: 0 },
        ],
      },
    ],
    containers: [
      {
        id: 'c1',
        name: 'app',
        podUid: 'u1',
        sandboxId: 's1',
        image: 'busybox:1.36',
        createdAtMs: Date.parse('2026-11-22T11:00:01Z'),
        cgroupPath: '/kubepods/besteffort/podu1/c1',
        cgroup: {
          ...cg(cpu.app, { ...mem(400, 300, 1000), reservationBytes: 512, oomKills: 1 }),
          // Disk I/O on vda and on a device /proc/diskstats does not list.
          blkio: {
            serviceBytes: [
              { major: 254, minor: 0, stats: { Read: 12288, Write: 4096, Sync: 4096, Async: 12288, Discard: 0, Total: 16384 } },
              { major: 8, minor: 16, stats: { Read: 512, Write: 0, Total: 512 } },
            ],
            serviced: [{ major: 254, minor: 0, stats: { Read: 3, Write: 1, Sync: 1, Async: 3, Discard: 0, Total: 4 } }],
          },
          pids: { current: 3, max: 0 },
          processes: { processCount: 2, fdCount: 7, socketCount: 1, ulimits: [{ name: 'max_open_files', soft: 1048576, hard: 1048576 }] },
        },
        cri: {
          timeMs: at - 500,
          cpuNs: cpu.app - 1,
          workingSetBytes: 299,
          writableLayer: { timeMs: at - 2000, usedBytes: 8192, inodesUsed: 5, mountpoint: '/var/lib/containerd/snapshots' },
        },
        logs: { usedBytes: 4096, inodesUsed: 2 },
        writableLayerDevice: '254:0',
      },
      {
        id: 'c2',
        name: 'side',
        podUid: 'u1',
        sandboxId: 's1',
        image: 'busybox:1.36',
        createdAtMs: Date.parse('2026-11-22T11:00:02Z'),
        cri: { timeMs: at - 500, cpuNs: cpu.side, workingSetBytes: 100, usageBytes: 150, rssBytes: 20 },
      },
    ],
  };
}

export const earlier = sample(T - 10_000, { node: 100e9, pods: 10e9, pod: 5e9, app: 4e9, side: 1e9 });
// In the 10 s between: the node used 1 core, the pods 0.5, the pod and app 0.2, side 0.1.
export const later = sample(T, { node: 110e9, pods: 15e9, pod: 7e9, app: 6e9, side: 2e9 });
