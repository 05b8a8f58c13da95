// The node's system containers: the cgroups the kubelet, the runtime and the other system
// processes run in (kubeletCgroups, --runtime-cgroups, systemCgroups). The kubelet places
// itself and the root cgroup's processes in them at start (upstream's setupNode and
// ensureSystemCgroups in pkg/kubelet/cm/container_manager_linux.go), and the Summary API
// reports each as the system container `kubelet`, `runtime` or `misc`
// (GetSystemContainersStats in pkg/kubelet/server/stats/summary_sys_containers.go).
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';

export interface SystemCgroupsConfig {
  kubeletCgroups: string;
  systemCgroups: string;
  runtimeCgroups: string;
}

/** Pure: what upstream's setupNode and flag validation refuse, as "field: reason". */
export function invalidSystemCgroups(c: SystemCgroupsConfig): string | undefined {
  if (c.systemCgroups === '/') return 'systemCgroups: system container cannot be root ("/")';
  for (const [field, name] of Object.entries(c)) {
    if (name && !name.startsWith('/')) return `${field}: ${JSON.stringify(name)} is not an absolute cgroup name`;
  }
  return undefined;
}

export interface SystemContainerNames {
  kubelet?: string;
  runtime?: string;
  misc?: string;
}

/**
 * Pure: the cgroup of each system container the Summary reports. Without kubeletCgroups the
 * kubelet's own cgroup is its container (upstream's periodic getContainer(os.Getpid())),
 * unless that is the root or a pod's, whose figures are not the kubelet's.
 */
export function systemContainerNames(c: SystemCgroupsConfig, ownCgroup: string | undefined, podsCgroup: string): SystemContainerNames {
  // Without cgroupsPerQOS the pods' cgroup may be the root: only the root is then left out.
  const inPods = podsCgroup !== '/' && ownCgroup?.startsWith(podsCgroup);
  const own = ownCgroup && ownCgroup !== '/' && !inPods ? ownCgroup : undefined;
  return {
    kubelet: c.kubeletCgroups || own,
    runtime: c.runtimeCgroups || undefined,
    misc: c.systemCgroups || undefined,
  };
}

/** A process in the root cgroup that may move: not init, and not a kernel thread (upstream's isKernelPid: no exe). */
function movable(pid: number, proc: string): boolean {
  if (pid === 1) return false;
  try {
    readlinkSync(`${proc}/${pid}/exe`);
    return true;
  } catch {
    return false;
  }
}

/** The cgroup hierarchies a process joins: every v1 controller (not named ones), or the unified one. */
function hierarchies(root: string): string[] {
  if (existsSync(`${root}/cgroup.controllers`)) return [root];
  return readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory() && e.name !== 'systemd' && e.name !== 'unified')
    .map((e) => `${root}/${e.name}`);
}

/**
 * A new v1 cpuset cgroup has no CPUs and no memory nodes, and takes no process (ENOSPC) until
 * given its parent's, level by level (libcontainer's cpusetCopyIfNeeded).
 */
function inheritCpuset(h: string, name: string): void {
  let path = h;
  for (const part of name.split('/').filter(Boolean)) {
    const parent = path;
    path = `${path}/${part}`;
    for (const f of ['cpuset.cpus', 'cpuset.mems']) {
      if (!existsSync(`${path}/${f}`) || readFileSync(`${path}/${f}`, 'utf8').trim() === '') {
        writeFileSync(`${path}/${f}`, readFileSync(`${parent}/${f}`, 'utf8').trim());
      }
    }
  }
}

/** Creates the cgroup in every hierarchy and writes the PID into it (libcontainer's Manager.Apply). */
function place(root: string, name: string, pid: number): void {
  for (const h of hierarchies(root)) {
    mkdirSync(`${h}${name}`, { recursive: true });
    if (existsSync(`${h}/cpuset.cpus`) && !existsSync(`${root}/cgroup.controllers`)) inheritCpuset(h, name);
    writeFileSync(`${h}${name}/cgroup.procs`, String(pid));
  }
}

/**
 * Puts the kubelet into kubeletCgroups and the root cgroup's movable processes into
 * systemCgroups. Errors name the cgroup and the PID; the caller logs them and goes on, as
 * upstream's kubelet does when ensureState fails.
 */
export function ensureSystemCgroups(c: SystemCgroupsConfig, o: { root?: string; proc?: string; pid?: number } = {}): string[] {
  const root = o.root ?? '/sys/fs/cgroup';
  const proc = o.proc ?? '/proc';
  const errors: string[] = [];
  if (c.kubeletCgroups) {
    try {
      place(root, c.kubeletCgroups, o.pid ?? process.pid);
    } catch (e) {
      errors.push(`failed to move the kubelet into ${c.kubeletCgroups}: ${(e as Error).message}`);
    }
  }
  if (c.systemCgroups) {
    // The root's own processes (cgroup.procs of one hierarchy's root); a process that forks
    // meanwhile leaves new ones behind, so upstream tries up to 11 times.
    const first = hierarchies(root)[0];
    for (let attempt = 0; attempt <= 10 && first; attempt++) {
      const pids = readFileSync(`${first}/cgroup.procs`, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map(Number)
        .filter((p) => movable(p, proc));
      if (pids.length === 0) break;
      errors.length = 0;
      for (const pid of pids) {
        try {
          place(root, c.systemCgroups, pid);
        } catch (e) {
          errors.push(`failed to move PID ${pid} into the system container ${c.systemCgroups}: ${(e as Error).message}`);
        }
      }
    }
  }
  return errors;
}
