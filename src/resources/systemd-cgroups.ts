// The systemd cgroup driver (upstream's cgroup manager with libcontainer's systemd manager,
// runc libcontainer/cgroups/systemd v1.go and v2.go): each cgroup the kubelet owns is a
// transient slice (kubepods.slice, kubepods-burstable.slice, kubepods-burstable-pod<UID>.slice)
// that systemd makes, sizes and removes when asked over D-Bus, so that systemd, which owns the
// tree, never undoes what the kubelet set. The runtime then puts each container in a scope below
// the pod's slice. As libcontainer does on cgroup v1, the cgroup's files are written too, after
// systemd made it: hugetlb has no systemd property, and the quota is exact there.
import { existsSync } from 'node:fs';
import type { SystemdManager, UnitProperty } from '../dbus/systemd.ts';
import type { Logger } from '../log/log.ts';
import { cpuWeight } from './cgroup-files.ts';
import type { PodCgroupLimits, ReservedCgroupLimits } from './cgroup-limits.ts';
import { parseSystemd, sliceOf } from './cgroup-layout.ts';
import { cgroupfsManager, type CgroupManager, type QosCgroupLimits } from './cgroup-manager.ts';
import { CFS_PERIOD_US } from './linux-resources.ts';
import { cgroupHierarchy, validateCgroup, writeReservedCgroup } from './pod-cgroup.ts';

/** systemd's "infinity" (USEC_INFINITY, CGROUP_LIMIT_MAX): 2^64-1. */
export const INFINITY = 18_446_744_073_709_551_615n;

/** A D-Bus error's name (org.freedesktop.systemd1.UnitExists, ...), from DBusError or a fake. */
const errorName = (e: unknown) => (e as { errorName?: string }).errorName;

/**
 * Pure: runc's addCpuQuota: the quota as microseconds of CPU per second, rounded up to whole
 * percent (systemd keeps CPUQuota as a percentage, and a child must get the quota it expects).
 * No quota: infinity.
 */
export function cpuQuotaPerSecUSec(quotaUs: number | undefined, periodUs = CFS_PERIOD_US): bigint {
  if (!quotaUs || quotaUs < 0) return INFINITY;
  const perSec = Math.floor((quotaUs * 1_000_000) / periodUs);
  return BigInt(perSec % 10_000 ? (Math.floor(perSec / 10_000) + 1) * 10_000 : perSec);
}

/**
 * Pure: the resource properties of a cgroup with these limits (runc's genV1ResourcesProperties
 * and genV2ResourcesProperties): CPU weight, quota and period, the memory limit (left alone
 * when absent unless unlimitedMemory: an in-place resize to no limit), the pids limit.
 */
export function resourceProperties(l: PodCgroupLimits, version: 1 | 2, unlimitedMemory = false): UnitProperty[] {
  const memory = l.memoryLimitBytes !== undefined ? BigInt(l.memoryLimitBytes) : unlimitedMemory ? INFINITY : undefined;
  return [
    version === 1 ? ['CPUShares', ['t', BigInt(l.cpuShares)]] : ['CPUWeight', ['t', BigInt(cpuWeight(l.cpuShares))]],
    ['CPUQuotaPeriodUSec', ['t', BigInt(l.cpuPeriodUs ?? CFS_PERIOD_US)]],
    ['CPUQuotaPerSecUSec', ['t', cpuQuotaPerSecUSec(l.cpuQuotaUs, l.cpuPeriodUs)]],
    ...(memory === undefined ? [] : [[version === 1 ? 'MemoryLimit' : 'MemoryMax', ['t', memory]] as UnitProperty]),
    ...(l.pidsLimit !== undefined ? [['TasksMax', ['t', l.pidsLimit > 0 ? BigInt(l.pidsLimit) : INFINITY]] as UnitProperty] : []),
  ];
}

/**
 * Pure: a QoS slice's properties: its CPU weight, and its memory limit when one is set (runc's
 * genV1ResourcesProperties skips a zero one; a negative one becomes the uint64 Go's conversion
 * makes of it, as upstream hands it over).
 */
export function qosProperties(l: QosCgroupLimits, version: 1 | 2): UnitProperty[] {
  const cpu = resourceProperties({ cpuShares: l.cpuShares }, version)[0]!;
  if (!l.memoryLimitBytes) return [cpu];
  return [cpu, [version === 1 ? 'MemoryLimit' : 'MemoryMax', ['t', BigInt.asUintN(64, BigInt(l.memoryLimitBytes))]]];
}

/**
 * Pure: a reserved slice's properties (runc's genV1ResourcesProperties and
 * genV2ResourcesProperties for upstream's enforceExistingCgroup): the CPU weight, memory and
 * pids limits the reservation names (a zero one skipped, as runc skips it), no quota.
 */
export function reservedProperties(l: ReservedCgroupLimits, version: 1 | 2): UnitProperty[] {
  const out: UnitProperty[] = [];
  if (l.cpuShares !== undefined)
    out.push(version === 1 ? ['CPUShares', ['t', BigInt(l.cpuShares)]] : ['CPUWeight', ['t', BigInt(cpuWeight(l.cpuShares))]]);
  if (l.memoryLimitBytes) out.push([version === 1 ? 'MemoryLimit' : 'MemoryMax', ['t', BigInt(l.memoryLimitBytes)]]);
  if (l.pidsLimit) out.push(['TasksMax', ['t', l.pidsLimit > 0 ? BigInt(l.pidsLimit) : INFINITY]]);
  return out;
}

/**
 * Pure: what a new slice is started with besides its resources (runc's Apply for a slice):
 * its parent as Wants=, no default dependencies (a pod slice must not wait for or stop with
 * the boot's targets), and accounting on for every controller the kubelet limits or reads (on
 * v2 that is what enables the controllers in the parents' subtree_control).
 */
export const sliceProperties = (unit: string, parent: string, version: 1 | 2): UnitProperty[] => [
  ['Description', ['s', `libcontainer container ${unit}`]],
  ['Wants', ['as', [parent]]],
  ['DefaultDependencies', ['b', false]],
  ['MemoryAccounting', ['b', true]],
  ['CPUAccounting', ['b', true]],
  [version === 1 ? 'BlockIOAccounting' : 'IOAccounting', ['b', true]],
  ['TasksAccounting', ['b', true]],
];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The systemd driver over a SystemdManager: systemd's calls, then the cgroupfs manager's file
 * writes and reads on the same paths. root: the cgroup filesystem (tests: a directory); log:
 * where a resize's property update that failed is said (the files already hold its limits).
 */
export function systemdCgroupManager(
  systemd: SystemdManager,
  root = '/sys/fs/cgroup',
  o: { realizeWaitMs?: number; log?: Logger } = {},
): CgroupManager {
  const files = cgroupfsManager(root);
  const version = () => cgroupHierarchy(root, () => []).version;
  const slice = (path: string) => {
    const s = sliceOf(path);
    if (!s) throw new Error(`${path} is not a systemd slice: the systemd cgroup driver names every cgroup as one`);
    return s;
  };
  /**
   * StartTransientUnit, or SetUnitProperties when the unit is there (libcontainer's startUnit
   * treats UnitExists as success and sets the properties next). Then waits a moment for systemd
   * to make the cgroup: the job runs after the reply.
   */
  async function apply(path: string, resources: UnitProperty[]): Promise<void> {
    const { unit, parent } = slice(path);
    const v = version();
    try {
      await systemd.startTransientUnit(unit, [...sliceProperties(unit, parent, v), ...resources]);
    } catch (e) {
      if (errorName(e) !== 'org.freedesktop.systemd1.UnitExists') throw new Error(`cannot start ${unit}: ${(e as Error).message}`);
      await systemd.setUnitProperties(unit, resources);
    }
    const dir = `${root}${v === 1 ? '/memory' : ''}${path}`;
    for (let waited = 0; !existsSync(dir) && waited < (o.realizeWaitMs ?? 1000); waited += 10) await sleep(10);
  }
  return {
    ...files,
    driver: 'systemd',
    async ensure(path, l) {
      await apply(path, resourceProperties(l, version()));
      await files.ensure(path, l);
    },
    async ensureQos(path, l) {
      await apply(path, qosProperties(l, version()));
      await files.ensureQos(path, l);
    },
    update(path, l) {
      // The files now (a resize grows, then the containers, then shrinks: in that order), and
      // systemd's properties after, in the same order, so that a daemon-reload keeps them.
      files.update(path, l);
      const { unit } = slice(path);
      void systemd.setUnitProperties(unit, resourceProperties(l, version(), true)).catch((e: unknown) => {
        o.log?.warn('Failed to set the unit properties of a resized cgroup; its files hold the limits', { unit, err: e });
      });
    },
    async setReserved(path, l) {
      // The slice must be there (Validate), then systemd's properties and the files (libcontainer's Set).
      const h = cgroupHierarchy(root);
      validateCgroup(path, parseSystemd(path), root, h);
      await systemd.setUnitProperties(slice(path).unit, reservedProperties(l, h.version));
      writeReservedCgroup(path, l, root, h);
    },
    async remove(path) {
      // Processes first (as upstream's Destroy), then the unit, then what systemd leaves in the
      // hierarchies it does not manage (libcontainer's RemovePaths).
      await files.remove(path);
      try {
        await systemd.stopUnit(slice(path).unit);
      } catch (e) {
        if (errorName(e) !== 'org.freedesktop.systemd1.NoSuchUnit') throw e;
      }
      return files.remove(path);
    },
  };
}
