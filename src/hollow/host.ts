// A hollow node's host: the parts of src/kubelet/host-system.ts that would change the machine,
// swapped for ones that change nothing, as upstream's kubemark hollow kubelet
// (pkg/kubemark/hollow_kubelet.go NewHollowKubelet) swaps in mount.FakeMounter, oom.FakeOOMAdjuster
// and cm.NewStubContainerManager. Many hollow nodes share one machine: none may mount, write
// sysctls, create cgroups or move the shared process between cgroups.
import { mkdir } from 'node:fs/promises';
import type { HostSystem } from '../kubelet/host-system.ts';
import type { CgroupManager } from '../resources/cgroup-manager.ts';
import type { PodCgroupLimits } from '../resources/cgroup-limits.ts';

/**
 * Cgroups kept as a map of path to limits (upstream's stub container manager keeps none; this one
 * answers read() as a real one would, so resize and QoS code runs the same).
 */
export function memoryCgroups(): CgroupManager {
  const cgroups = new Map<string, PodCgroupLimits>();
  return {
    driver: 'cgroupfs',
    ensure: async (path, l) => void cgroups.set(path, l),
    ensureQos: async (path, l) => void cgroups.set(path, { ...cgroups.get(path), ...l }),
    update: (path, l) => void (cgroups.has(path) && cgroups.set(path, l)),
    read: (path) => cgroups.get(path),
    memoryUsage: (path) => (cgroups.has(path) ? 0 : undefined),
    // A hollow node's host has no reserved cgroups to hold: as upstream's stub container manager, nothing is enforced.
    setReserved: async () => {},
    remove: async (path) => {
      for (const p of cgroups.keys()) if (p === path || p.startsWith(`${path}/`)) cgroups.delete(p);
      return true;
    },
    present: (path) => [...cgroups.keys()].some((p) => p === path || p.startsWith(`${path}/`)),
  };
}

/** The host of a hollow node: directories are made (the kubelet writes into them), nothing is mounted or set. */
export function hollowHost(): HostSystem {
  return {
    makeRShared: () => false,
    setupKernelTunables: () => {},
    applyOwnOOMScoreAdj: () => undefined,
    setOpenFilesLimit: () => undefined,
    cgroupfs: memoryCgroups,
    ensureSystemCgroups: () => [],
    mountTmpfs: async (dir) => void (await mkdir(dir, { recursive: true })),
    bindMount: async (_source, target) => void (await mkdir(target, { recursive: true })),
  };
}
