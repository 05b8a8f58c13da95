// Whether a pod may run here, as upstream's admission: its sysctls against the allowlist
// (pkg/kubelet/sysctl), then GeneralPredicates: the node's allocatable cpu, memory, ephemeral-storage,
// huge pages, extended resources and pods;
// its labels against the pod's node selector and required node affinity; host ports; the OS.
// Pure but for the CPU manager's allocation, handed in (upstream's resource managers allocate
// at admission): the sync loop asks it once per pod.
import type { Container, Node, NodeSelectorRequirement, Pod } from 'kubernetes-types/core/v1.js';
import { parseQuantity } from '../resources/quantity.ts';
import { amountOf, HUGEPAGES_PREFIX, podCPUAndMemoryRequests, podRequests as podAmounts } from '../resources/pod-resources.ts';
import { normalizeSysctlName } from '../runtime/security-context.ts';
import { admitAppArmor } from '../security/apparmor.ts';
import { admissionMessage, planPodDevices, type PodPlanInput } from '../devices/allocation.ts';
import { isExtendedResourceName } from '../devices/registration.ts';
import { extendedResourceClaimStatus } from '../dra/claims.ts';
import { isDRAExtendedResourceName } from '../dra/container.ts';
import type { Admission } from './verdict.ts';

export type { Admission };

/** The reason of a pod refused for its node selector or required node affinity. */
export const NODE_AFFINITY = 'NodeAffinity';

/**
 * Effective requests in cores and bytes, as the scheduler counts them (resourcehelper.PodRequests):
 * pod-level requests where set, else the containers' aggregate with init containers and sidecars; plus the overhead.
 */
export const podRequests = (pod: Pod): { cpu: number; memory: number } => podCPUAndMemoryRequests(pod);

const admittedRequests = (pod: Pod) => ({ ...podRequests(pod), 'ephemeral-storage': podAmounts(pod)['ephemeral-storage'] ?? 0 });

/**
 * The allocatable the fit check compares with. No ephemeral-storage in a known allocatable is 0,
 * as upstream's Fits reads it (localStorageCapacityIsolation: false leaves it out, and a pod that
 * requests it is refused); a node whose status is not known yet limits nothing.
 */
function allocatableOf(alloc: Record<string, string>, r: 'cpu' | 'memory' | 'ephemeral-storage'): number {
  if (alloc[r] !== undefined) return parseQuantity(alloc[r]) ?? Infinity;
  return r === 'ephemeral-storage' && Object.keys(alloc).length ? 0 : Infinity;
}

function matches(req: NodeSelectorRequirement, labels: Record<string, string>): boolean {
  const v = labels[req.key];
  switch (req.operator) {
    case 'In':
      return v !== undefined && (req.values ?? []).includes(v);
    case 'NotIn':
      return v === undefined || !(req.values ?? []).includes(v);
    case 'Exists':
      return v !== undefined;
    case 'DoesNotExist':
      return v === undefined;
    case 'Gt':
      return v !== undefined && Number(v) > Number(req.values?.[0]);
    case 'Lt':
      return v !== undefined && Number(v) < Number(req.values?.[0]);
    default:
      return false;
  }
}

function fitsNode(pod: Pod, node: Node): boolean {
  const labels = node.metadata?.labels ?? {};
  if (Object.entries(pod.spec?.nodeSelector ?? {}).some(([k, v]) => labels[k] !== v)) return false;
  const terms = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (!terms?.length) return true;
  // Terms are ORed; the requirements within a term are ANDed (matchFields: only metadata.name).
  return terms.some(
    (t) =>
      (t.matchExpressions ?? []).every((r) => matches(r, labels)) &&
      (t.matchFields ?? []).every((r) => r.key === 'metadata.name' && matches({ ...r, key: 'name' }, { name: node.metadata!.name! })),
  );
}

const hostPorts = (pod: Pod) =>
  (pod.spec?.containers ?? []).flatMap((c) =>
    (c.ports ?? []).filter((p) => p.hostPort).map((p) => `${p.protocol ?? 'TCP'}/${p.hostIP || '0.0.0.0'}/${p.hostPort}`),
  );

function portsConflict(a: string[], b: string[]): boolean {
  return a.some((x) => {
    const [proto, ip, port] = x.split('/');
    return b.some((y) => {
      const [p2, ip2, port2] = y.split('/');
      return proto === p2 && port === port2 && (ip === ip2 || ip === '0.0.0.0' || ip2 === '0.0.0.0');
    });
  });
}

// Safe sysctls: namespaced and isolated from other pods. The legacy ones always; the newer
// ones when the node's kernel namespaces them (upstream's SafeSysctlAllowlist).
const LEGACY_SAFE_SYSCTLS = [
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
];
const NEWER_SAFE_SYSCTLS: [name: string, kernel: string][] = [
  ['net.ipv4.ip_local_reserved_ports', '3.16'],
  ['net.ipv4.tcp_rmem', '4.15'],
  ['net.ipv4.tcp_wmem', '4.15'],
];

function kernelAtLeast(version: string, min: string): boolean {
  const v = (/^(\d+)\.(\d+)/.exec(version) ?? []).slice(1).map(Number),
    m = min.split('.').map(Number);
  if (v.length < 2) return false;
  return v[0]! > m[0]! || (v[0] === m[0] && v[1]! >= m[1]!);
}

/** kernelVersion: the node's (status.nodeInfo); unknown, only the legacy list. */
export function safeSysctls(kernelVersion?: string): string[] {
  return [
    ...LEGACY_SAFE_SYSCTLS,
    ...NEWER_SAFE_SYSCTLS.filter(([, k]) => kernelVersion && kernelAtLeast(kernelVersion, k)).map(([n]) => n),
  ];
}

/** The kernel namespace a sysctl lives in (upstream's NamespacedBy); undefined: not known to be namespaced. */
function sysctlNamespace(name: string): 'ipc' | 'net' | undefined {
  if (name === 'kernel.sem' || ['kernel.shm', 'kernel.msg', 'fs.mqueue.'].some((p) => name.startsWith(p))) return 'ipc';
  return name.startsWith('net.') ? 'net' : undefined;
}

/**
 * upstream's patternAllowlist.validateSysctl over the safe sysctls plus allowedUnsafeSysctls
 * (names or prefixes ending in *): the reason a sysctl is refused, or undefined. A pod in the
 * host's network or IPC namespace may not set that namespace's sysctls: they would be the host's.
 */
export function forbiddenSysctl(pod: Pod, allowed: string[]): string | undefined {
  const exact = new Map<string, string>(),
    prefixes = new Map<string, string>();
  for (const pattern of allowed.map(normalizeSysctlName)) {
    const star = pattern.endsWith('*'),
      name = star ? pattern.slice(0, -1) : pattern;
    const ns = sysctlNamespace(name);
    // Upstream refuses to start with such a pattern; here it allows nothing.
    if (ns) (star ? prefixes : exact).set(name, ns);
  }
  const host = { net: !!pod.spec?.hostNetwork, ipc: !!pod.spec?.hostIPC };
  for (const s of pod.spec?.securityContext?.sysctls ?? []) {
    const name = normalizeSysctlName(s.name);
    const ns = exact.get(name) ?? [...prefixes].find(([p]) => name.startsWith(p))?.[1];
    if (!ns) return `"${name}" not allowlisted`;
    if (host[ns as 'net' | 'ipc']) return `"${name}" not allowed with host ${ns} enabled`;
  }
  return undefined;
}

export interface AdmitOptions {
  /** KubeletConfiguration allowedUnsafeSysctls. */
  allowedUnsafeSysctls?: string[];
  /** Why the host cannot enforce AppArmor (read once at start); undefined: it can. */
  appArmorHostError?: string;
  /** The device manager's state (src/devices): device plugin resources must be there, healthy and free. */
  devices?: PodPlanInput;
  /** The CPU manager's allocation (src/cpumanager): exclusive CPUs taken for the pod, or the refusal. */
  cpus?: (pod: Pod) => Admission;
}

/**
 * upstream's topology manager admit handler (policy none) over the device manager's Allocate:
 * each container's device plugin resources must be registered, healthy and free.
 */
export function admitDevices(pod: Pod, devices: PodPlanInput): Admission {
  const plan = planPodDevices(pod, devices);
  if ('error' in plan)
    return { admit: false, reason: 'UnexpectedAdmissionError', message: `Pod was rejected: ${admissionMessage(plan.error)}` };
  return { admit: true };
}

/** Fits' ScalarResources: huge pages, extended resources and the prefixed native ones. */
const isScalarResource = (r: string) => r.startsWith(HUGEPAGES_PREFIX) || r.startsWith('attachable-volumes-') || r.includes('/');

/**
 * Upstream's removeMissingExtendedResources: the pod as Fits sees it, without the containers'
 * requests of an extended resource the node does not list (a cluster-level resource it knows
 * nothing of) or that a ResourceClaim serves (DRA's extended resources, in the pod's
 * status.extendedResourceClaimStatus).
 */
function withoutMissingExtendedResources(pod: Pod, alloc: Record<string, string>): Pod {
  const mappings = extendedResourceClaimStatus(pod)?.requestMappings ?? [];
  const keep = (c: Container) => {
    const missing = (r: string) =>
      (isDRAExtendedResourceName(r) && mappings.some((m) => m.resourceName === r && m.containerName === c.name)) ||
      (isExtendedResourceName(r) && alloc[r] === undefined);
    // (Limits too: podRequests takes a limit for a missing request, as the apiserver defaults it.)
    const drop = (l?: Record<string, string>) => l && Object.fromEntries(Object.entries(l).filter(([r]) => !missing(r)));
    return { ...c, resources: { ...c.resources, requests: drop(c.resources?.requests), limits: drop(c.resources?.limits) } };
  };
  return {
    ...pod,
    spec: { ...pod.spec!, containers: (pod.spec?.containers ?? []).map(keep), initContainers: pod.spec?.initContainers?.map(keep) },
  };
}

/**
 * Fits after cpu, memory and ephemeral-storage: each other resource the pod asks for against the
 * node's allocatable (none listed: 0); a node whose status is not known yet limits nothing.
 */
function scalarShortage(pod: Pod, active: Pod[], alloc: Record<string, string>, devices?: PodPlanInput): Admission | undefined {
  if (!Object.keys(alloc).length) return undefined;
  let activeAmounts: Record<string, number>[] | undefined; // the other pods' requests, read once, when first needed
  for (const [r, want] of Object.entries(podAmounts(withoutMissingExtendedResources(pod, alloc)))) {
    if (!isScalarResource(r) || want <= 0) continue;
    // The device manager's resources passed its allocation above: upstream's sanitizeNodeAllocatable
    // raises their allocatable to what is allocated, so Fits passes them.
    if (devices?.isDeviceResource(r)) continue;
    const capacity = amountOf(r, alloc[r] ?? 0);
    activeAmounts ??= active.map((p) => podAmounts(p));
    const used = activeAmounts.reduce((n, a) => n + (a[r] ?? 0), 0);
    if (used + want > capacity)
      return {
        admit: false,
        reason: `OutOf${r}`,
        message: `Pod was rejected: Node didn't have enough resource: ${r}, requested: ${want}, used: ${used}, capacity: ${capacity}`,
      };
  }
  return undefined;
}

/** active: the pods already admitted and not finished. */
export function admitPod(pod: Pod, active: Pod[], node: Node, opts: AdmitOptions = {}): Admission {
  const sysctl = forbiddenSysctl(pod, [...safeSysctls(node.status?.nodeInfo?.kernelVersion), ...(opts.allowedUnsafeSysctls ?? [])]);
  if (sysctl) return { admit: false, reason: 'SysctlForbidden', message: `Pod was rejected: forbidden sysctl: ${sysctl}` };
  // Upstream's handler chain: sysctls, then the resource managers' allocation (CPU manager first), then the predicates.
  const cpus = opts.cpus?.(pod);
  if (cpus && !cpus.admit) return cpus;
  if (opts.devices) {
    const devices = admitDevices(pod, opts.devices);
    if (!devices.admit) return devices;
  }
  if (pod.spec?.os?.name && pod.spec.os.name !== 'linux') {
    return {
      admit: false,
      reason: 'PodOSNotSupported',
      message: `Pod was rejected: Failed to admit pod as the OS field doesn't match node OS`,
    };
  }
  if (!fitsNode(pod, node))
    return {
      admit: false,
      reason: NODE_AFFINITY,
      message: "Pod was rejected: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector",
    };
  if (portsConflict(hostPorts(pod), active.flatMap(hostPorts))) {
    return {
      admit: false,
      reason: 'NodePorts',
      message: "Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports",
    };
  }
  const alloc = node.status?.allocatable ?? {};
  const maxPods = Number(alloc.pods ?? Infinity);
  if (active.length + 1 > maxPods) {
    return {
      admit: false,
      reason: 'OutOfpods',
      message: `Pod was rejected: Node didn't have enough resource: pods, requested: 1, used: ${active.length}, capacity: ${maxPods}`,
    };
  }
  const want = admittedRequests(pod);
  for (const r of ['cpu', 'memory', 'ephemeral-storage'] as const) {
    const capacity = allocatableOf(alloc, r);
    const used = active.reduce((n, p) => n + admittedRequests(p)[r], 0);
    if (want[r] > 0 && used + want[r] > capacity) {
      // Upstream prints cpu in millicores, memory and ephemeral-storage in bytes.
      const f = (x: number) => String(r === 'cpu' ? Math.round(x * 1000) : Math.round(x));
      return {
        admit: false,
        reason: `OutOf${r}`,
        message: `Pod was rejected: Node didn't have enough resource: ${r}, requested: ${f(want[r])}, used: ${f(used)}, capacity: ${f(capacity)}`,
      };
    }
  }
  const scalar = scalarShortage(pod, active, alloc, opts.devices);
  if (scalar) return scalar;
  // Upstream's AppArmor admit handler runs after the predicates.
  const appArmor = admitAppArmor(pod, opts.appArmorHostError);
  if (!appArmor.admit) return appArmor;
  return { admit: true };
}
