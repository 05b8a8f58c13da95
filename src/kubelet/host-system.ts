// What the kubelet changes on its host outside its root directory and the runtime: mounts, the
// cgroup filesystem, kernel settings, its own OOM score and open-files limit. The composition root
// takes one of these (the real host by default), so a kubelet that has no host of its own (a hollow
// node, src/hollow) is the same code with these parts swapped, as upstream's kubemark swaps its
// mounter, OOM adjuster and container manager, and no subsystem reads a "hollow" flag.
import { bindMount, mountTmpfs } from '../mount/mountinfo.ts';
import type { Logger } from '../log/log.ts';
import { setupKernelTunables } from '../node/kernel-tunables.ts';
import { applyOwnOOMScoreAdj } from '../node/oom-score.ts';
import { setOpenFilesLimit } from '../node/open-files.ts';
import { makeRShared } from '../node/shared-mount.ts';
import { ensureSystemCgroups, type SystemCgroupsConfig } from '../node/system-cgroups.ts';
import { cgroupfsManager, type CgroupManager } from '../resources/cgroup-manager.ts';

export interface HostSystem {
  /** upstream's setupDataDirs: the root directory bind-mounted with shared propagation; true when it had to be. */
  makeRShared(path: string): boolean;
  /** The kernel settings the kubelet needs (upstream's setupKernelTunables). */
  setupKernelTunables(protect: boolean, log: Logger): void;
  /** The kubelet's own oom_score_adj (upstream's OOMAdjuster). */
  applyOwnOOMScoreAdj(value: number): Error | undefined;
  /** The kubelet's own RLIMIT_NOFILE (maxOpenFiles; upstream's SetNumFiles); the error. */
  setOpenFilesLimit(n: number): string | undefined;
  /** The cgroupfs driver's cgroup manager (the systemd driver's goes through systemd, src/resources/systemd-cgroups.ts). */
  cgroupfs(): CgroupManager;
  /** kubeletCgroups/systemCgroups/runtimeCgroups made and joined; the errors. */
  ensureSystemCgroups(c: SystemCgroupsConfig): string[];
  /** Memory-backed volumes (secrets, projected, emptyDir medium Memory). */
  mountTmpfs(dir: string, sizeBytes?: number): Promise<void>;
  /** Local and hostPath persistent volumes into the pod's directory. */
  bindMount(source: string, target: string, readOnly: boolean): Promise<void>;
}

/** The machine the kubelet runs on. */
export const realHost: HostSystem = {
  makeRShared: (path) => makeRShared(path),
  setupKernelTunables: (protect, log) => setupKernelTunables(protect, log),
  applyOwnOOMScoreAdj: (value) => applyOwnOOMScoreAdj(value),
  setOpenFilesLimit: (n) => setOpenFilesLimit(n),
  cgroupfs: () => cgroupfsManager(),
  ensureSystemCgroups: (c) => ensureSystemCgroups(c),
  mountTmpfs,
  bindMount,
};
