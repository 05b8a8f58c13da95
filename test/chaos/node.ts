// The local stack as the chaos run sees it (hack/up.sh): pods through the apiserver, containers
// through crictl, what the node holds for pods on its filesystems, and the daemons' pids.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, rmdirSync, statfsSync, writeFileSync } from 'node:fs';
import type { V1Pod } from '@kubernetes/client-node';
import { ROOT, clients, crictl } from '../e2e/stack.ts';
import type { Inventory, PodView, RuntimeContainer } from './invariants.ts';

export const PIDS = `${ROOT}/_output/local/pids`;
export const KUBELET_ROOT = '/var/lib/kubelet';

/** The pid in a pid file of hack/lib.sh's start_bg (or the kubelet's supervised child). */
export const pidOf = (name: 'kubelet-ts.child' | 'containerd' | 'kube-apiserver' | 'etcd') =>
  Number(readFileSync(`${PIDS}/${name}.pid`, 'utf8'));

/** The status of one of the node's conditions. */
export async function condition(node: string, type: string): Promise<string | undefined> {
  return (await clients().core.readNode({ name: node })).status?.conditions?.find((c) => c.type === type)?.status;
}

/** The kubelet answers its healthz (:10248) and the node is Ready. */
export async function kubeletHealthy(node: string): Promise<boolean> {
  const ok = await fetch('http://127.0.0.1:10248/healthz', { signal: AbortSignal.timeout(2000) })
    .then((r) => r.ok)
    .catch(() => false);
  return ok && (await condition(node, 'Ready')) === 'True';
}

const conditionTrue = (p: V1Pod, type: string) => p.status?.conditions?.some((c) => c.type === type && c.status === 'True') ?? false;

export function podView(p: V1Pod): PodView {
  const statuses = [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])];
  return {
    uid: p.metadata!.uid!,
    runtimeUid: p.metadata?.annotations?.['kubernetes.io/config.mirror'] ?? p.metadata!.uid!,
    name: p.metadata!.name!,
    kind: p.metadata?.labels?.['chaos.kts/kind'] ?? '',
    deleting: !!p.metadata?.deletionTimestamp,
    phase: p.status?.phase ?? '',
    reason: p.status?.reason,
    ready: conditionTrue(p, 'Ready'),
    containersReady: conditionTrue(p, 'ContainersReady'),
    containers: statuses.map((s) => ({
      name: s.name,
      id: s.containerID?.replace(/^\w+:\/\//, ''),
      running: !!s.state?.running,
      restartCount: s.restartCount,
      lastTerminated: !!s.lastState?.terminated,
      lastStarted: !!s.lastState?.terminated?.startedAt,
      lastNeverStarted: !!s.lastState?.waiting,
      lastExitCode: s.lastState?.terminated?.exitCode,
      reason: s.state?.terminated?.reason,
    })),
  };
}

export async function pods(ns: string): Promise<PodView[]> {
  return (await clients().core.listNamespacedPod({ namespace: ns })).items.map(podView);
}

/** The runtime's containers of the pods in a namespace (CRI labels). */
export function runtimeContainers(ns: string): RuntimeContainer[] {
  const list = JSON.parse(crictl('ps', '-a', '-o', 'json', '--label', `io.kubernetes.pod.namespace=${ns}`)) as {
    containers: { id: string; state: string; labels: Record<string, string> }[];
  };
  return list.containers.map((c) => ({
    id: c.id,
    podUid: c.labels['io.kubernetes.pod.uid']!,
    name: c.labels['io.kubernetes.container.name']!,
    running: c.state === 'CONTAINER_RUNNING',
  }));
}

const dirs = (path: string) => (existsSync(path) ? readdirSync(path) : []);
const subdirs = (path: string) =>
  existsSync(path)
    ? readdirSync(path, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
    : [];

/** Directories named pod<uid> in the kubepods cgroups (v1 hierarchies or v2), at any QoS level. */
function podCgroups(): string[] {
  const roots = ['/sys/fs/cgroup/memory/kubepods', '/sys/fs/cgroup/cpu/kubepods', '/sys/fs/cgroup/kubepods'];
  const levels = (root: string) => [
    root,
    ...subdirs(root)
      .filter((d) => !d.startsWith('pod'))
      .map((d) => `${root}/${d}`),
  ];
  return roots.flatMap(levels).flatMap((d) =>
    subdirs(d)
      .filter((x) => x.startsWith('pod'))
      .map((x) => `${d}/${x}`),
  );
}

/**
 * What the node holds for pods: sandboxes and containers in containerd, network namespaces,
 * the CNI's IP reservations, pod cgroups, mounts and pod directories under the kubelet's root,
 * and the pod log directories.
 */
export function inventory(): Inventory {
  const ids = (args: string[]) =>
    crictl(...args, '-q')
      .split('\n')
      .filter(Boolean);
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter((m) => m.startsWith(`${KUBELET_ROOT}/pods/`));
  return {
    sandboxes: ids(['pods']),
    containers: ids(['ps', '-a']),
    'network namespaces': dirs('/var/run/netns'),
    'CNI IPs': dirs('/var/lib/cni/networks').flatMap((n) =>
      dirs(`/var/lib/cni/networks/${n}`)
        .filter((f) => /^[\d.:a-f]+$/.test(f) && f.includes('.'))
        .map((ip) => `${n}/${ip}`),
    ),
    'pod cgroups': podCgroups(),
    mounts: [...new Set(mounts)],
    'pod dirs': dirs(`${KUBELET_ROOT}/pods`),
    'log dirs': dirs('/var/log/pods'),
  };
}

/** hack/containerd.sh and hack/control-plane.sh start what is not running (and wait for it). */
export function startAgain(script: 'containerd.sh' | 'control-plane.sh'): void {
  execFileSync('bash', [`${ROOT}/hack/${script}`], { stdio: 'ignore', timeout: 180_000 });
}

// A network cut of one process from the apiserver: the process moves into a net_cls cgroup of
// its own, whose packets to the apiserver's port an iptables rule drops (established
// connections included). The net_cls hierarchy is mounted for it when no one has, and stays
// mounted: on this kernel an unmounted v1 hierarchy is still listed in every /proc/PID/cgroup,
// and containerd's shims then cannot load any task's cgroups ("cannot find cgroup mount
// destination": no OOM events, no OOMKilled). hack/systemd-node.sh hides it from podman.
const NET_CLS = '/run/kts-netcls';
const CUT_CLASS = '0x00100001';

/** Cuts pid from the apiserver at address:port; returns what undoes it. */
export function cutFromApiserver(pid: number, address: string, port = 6443): () => void {
  execFileSync('sh', ['-c', `mkdir -p ${NET_CLS} && (mountpoint -q ${NET_CLS} || mount -t cgroup -o net_cls none ${NET_CLS})`]);
  const group = `${NET_CLS}/chaos-cut`;
  mkdirSync(group, { recursive: true });
  writeFileSync(`${group}/net_cls.classid`, CUT_CLASS);
  const rule = ['OUTPUT', '-m', 'cgroup', '--cgroup', CUT_CLASS, '-p', 'tcp', '-d', address, '--dport', String(port), '-j', 'DROP'];
  execFileSync('iptables', ['-I', ...rule]);
  writeFileSync(`${group}/cgroup.procs`, String(pid));
  return () => {
    execFileSync('iptables', ['-D', ...rule]);
    // The process and whatever it started during the cut (children inherit its cgroup: a
    // systemd-inhibit, a mount helper) go back to the root, or the group stays busy (EBUSY).
    const procs = () => readFileSync(`${group}/cgroup.procs`, 'utf8').split('\n').filter(Boolean);
    for (const p of procs()) {
      try {
        writeFileSync(`${NET_CLS}/cgroup.procs`, p);
      } catch {
        /* exited meanwhile */
      }
    }
    if (procs().length) throw new Error(`processes left in ${group} after the cut: ${procs().join(' ')}`);
    rmdirSync(group);
  };
}

/** Whether path is a mount of a loop device (hack/kubelet.sh's filesystem of the root dir). */
export function onOwnFilesystem(path: string): boolean {
  return execFileSync('findmnt', ['-rn', '-o', 'SOURCE,TARGET'], { encoding: 'utf8' })
    .split('\n')
    .some((l) => l.startsWith('/dev/loop') && l.endsWith(` ${path}`));
}

/** Fills the filesystem of path to its last block with files under it; returns what removes them. */
export function fill(path: string): { bytes: number; undo: () => void } {
  const files = [`${path}/chaos-fill`, `${path}/chaos-fill-rest`];
  const { bfree, bsize } = statfsSync(path);
  // fallocate takes all but what its own extents need; dd writes the rest until ENOSPC.
  execFileSync('fallocate', ['-l', String(Math.max(0, bfree * bsize - 64 * 2 ** 20)), files[0]!]);
  spawnSync('dd', ['if=/dev/zero', `of=${files[1]}`, 'bs=4k'], { stdio: 'ignore' });
  return {
    bytes: bfree * bsize,
    undo: () => {
      for (const f of files) rmSync(f, { force: true });
    },
  };
}
