// The kubelet's cgroup manager (upstream's CgroupManager, pkg/kubelet/cm/types.go): how the
// cgroups it owns (kubepods, the QoS classes, one per pod) are made, sized, updated and removed.
// With the cgroupfs driver the kubelet writes the cgroup filesystem itself (pod-cgroup.ts); with
// systemd the cgroups are slices that systemd makes and sizes over D-Bus (systemd-cgroups.ts),
// the same files written after, as libcontainer does. Reading is the same for both: the path
// (cgroup-layout.ts) is the cgroup's directory in every hierarchy.
import type { CgroupDriver } from './cgroup-driver.ts';
import { type CgroupLayout, DEFAULT_LAYOUT, parseCgroupfs } from './cgroup-layout.ts';
import { qosCgroupFiles } from './cgroup-files.ts';
import type { PodCgroupLimits, ReservedCgroupLimits } from './cgroup-limits.ts';
import {
  cgroupHierarchy,
  cgroupPresent,
  ensureCgroup,
  ensurePodCgroup,
  readMemoryUsage,
  readPodCgroup,
  removePodCgroup,
  validateCgroup,
  writeReservedCgroup,
  writePodCgroup,
} from './pod-cgroup.ts';

/** What the kubelet sets on a QoS cgroup: its CPU weight, and a memory limit with qosReserved. */
export type QosCgroupLimits = Pick<PodCgroupLimits, 'cpuShares' | 'memoryLimitBytes'>;

export interface CgroupManager {
  readonly driver: CgroupDriver;
  /** Makes the cgroup with these limits, or brings an existing one to them (upstream's Create, then Update). */
  ensure(path: string, l: PodCgroupLimits): Promise<void>;
  /**
   * A QoS cgroup: made if need be, with this CPU weight, and this memory limit when given
   * (upstream's qosContainerManager; qosReserved). Throws when a limit is refused (a memory
   * limit below the usage on cgroup v1).
   */
  ensureQos(path: string, l: QosCgroupLimits): Promise<void>;
  /** In-place resize of an existing cgroup: its cpu and memory now, an absent limit as unlimited. */
  update(path: string, l: PodCgroupLimits): void;
  /** The cgroup's cpu and memory limits; undefined when it is not there. */
  read(path: string): PodCgroupLimits | undefined;
  /** memory usage of the cgroup (a pod's, or a container's below it). */
  memoryUsage(path: string): number | undefined;
  /**
   * A reserved cgroup (systemReservedCgroup, kubeReservedCgroup, as cgroupPath names it) held to
   * its reservation: throws when it is not there, or a limit is refused (upstream's
   * enforceExistingCgroup: Validate, then Update).
   */
  setReserved(path: string, l: ReservedCgroupLimits): Promise<void>;
  /** Its processes killed and the cgroup gone (upstream's podContainerManager.Destroy); false while some of it is left. */
  remove(path: string): Promise<boolean>;
  /** The cgroup is there, in any of its hierarchies (upstream's Exists, asked before a Destroy). */
  present(path: string): boolean;
}

/** The cgroupfs driver: the kubelet makes and writes the cgroups itself (pod-cgroup.ts). */
export const cgroupfsManager = (root = '/sys/fs/cgroup'): CgroupManager => ({
  driver: 'cgroupfs',
  ensure: async (path, l) => ensurePodCgroup(path, l, root),
  ensureQos: async (path, l) => {
    const h = cgroupHierarchy(root, () => []);
    ensureCgroup(path, qosCgroupFiles(l, h.version), root, h);
  },
  update: (path, l) => writePodCgroup(path, l, root),
  read: (path) => readPodCgroup(path, root),
  memoryUsage: (path) => readMemoryUsage(path, root),
  setReserved: async (path, l) => {
    const h = cgroupHierarchy(root);
    validateCgroup(path, parseCgroupfs(path), root, h);
    writeReservedCgroup(path, l, root, h);
  },
  remove: async (path) => removePodCgroup(path, root),
  present: (path) => cgroupPresent(path, root),
});

/** Upstream's cgroup manager operation types (kubelet_cgroup_manager_duration_seconds). */
export type CgroupOperation = 'create' | 'update' | 'destroy';

/**
 * The manager with each write timed as upstream's cgroupCommon times its Create, Update and
 * Destroy: ensure is the pod cgroup's EnsureExists (Create), the QoS and reserved cgroups'
 * writes are their Update, remove is Destroy. A failed operation is timed too (upstream defers it).
 */
export function timedCgroupManager(m: CgroupManager, observe: (op: CgroupOperation, seconds: number) => void): CgroupManager {
  const timed =
    <A extends unknown[], R>(op: CgroupOperation, f: (...a: A) => R) =>
    (...a: A): R => {
      const t0 = performance.now();
      const done = () => observe(op, (performance.now() - t0) / 1000);
      let r: R;
      try {
        r = f(...a);
      } catch (e) {
        done();
        throw e;
      }
      if (r instanceof Promise) return r.finally(done) as R;
      done();
      return r;
    };
  return {
    ...m,
    ensure: timed('create', m.ensure),
    ensureQos: timed('update', m.ensureQos),
    update: timed('update', m.update),
    setReserved: timed('update', m.setReserved),
    remove: timed('destroy', m.remove),
  };
}

/** The node's cgroups: how they are named, and the manager that makes them. */
export interface NodeCgroups {
  layout: CgroupLayout;
  manager: CgroupManager;
}

/** cgroupfs below '/' (tests, tools: what nothing configured means). */
export const defaultNodeCgroups = (): NodeCgroups => ({ layout: DEFAULT_LAYOUT, manager: cgroupfsManager() });
