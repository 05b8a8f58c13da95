// Whether a pod may run here, as upstream's admission: its sysctls against the allowlist
// (pkg/kubelet/sysctl), then predicateAdmitHandler: the OS, then GeneralPredicates: the node's
// allocatable pods, cpu, memory, ephemeral-storage, huge pages and extended resources; its labels
// against the pod's node selector and required node affinity; its node name; host ports; the
// node's NoExecute taints. A critical pod refused for resources alone preempts others
// (src/pods/preemption.ts).
// Pure but for the CPU manager's allocation, handed in (upstream's resource managers allocate
// at admission): the sync loop asks it once per pod.
import type { Container, Node, NodeSelectorRequirement, Pod } from 'kubernetes-types/core/v1.js';
import { amountOf, HUGEPAGES_PREFIX, podRequests as podAmounts } from '../resources/pod-resources.ts';
import { normalizeSysctlName, strictSupplementalGroups } from '../runtime/security-context.ts';
import { admitAppArmor } from '../security/apparmor.ts';
import { admissionMessage, planPodDevices, type PodPlanInput } from '../devices/allocation.ts';
import { isExtendedResourceName } from '../devices/registration.ts';
import { extendedResourceClaimStatus } from '../dra/claims.ts';
import { isDRAExtendedResourceName } from '../dra/container.ts';
import { handleAdmissionFailure } from './preemption.ts';
import { isStaticPod } from '../podutil/podutil.ts';
import { untoleratedTaint } from '../podutil/tolerations.ts';
import type { Admission, PredicateFailure } from './verdict.ts';

export type { Admission };

/** The reason of a pod refused for its node selector or required node affinity. */
export const NODE_AFFINITY = 'NodeAffinity';

/**
 * The allocatable Fits compares with, in its units (cpu in millicores). No ephemeral-storage in a
 * known allocatable is 0, as upstream's Fits reads it (localStorageCapacityIsolation: false leaves
 * it out, and a pod that requests it is refused); no cpu or memory limits nothing.
 */
function allocatableOf(alloc: Record<string, string>, r: string): number {
  if (alloc[r] !== undefined) return amountOf(r, alloc[r]);
  return r === 'cpu' || r === 'memory' ? Infinity : 0;
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
 * Upstream's noderesources.Fits: each resource the pod asks for that the node's allocatable
 * lacks room for beside the other pods, pods first; a node whose status is not known yet limits
 * nothing but pods.
 */
function insufficientResources(pod: Pod, active: Pod[], alloc: Record<string, string>, devices?: PodPlanInput): PredicateFailure[] {
  const out: PredicateFailure[] = [];
  const maxPods = Number(alloc.pods ?? Infinity);
  if (active.length + 1 > maxPods) out.push({ resource: 'pods', requested: 1, used: active.length, capacity: maxPods });
  if (!Object.keys(alloc).length) return out;
  const want = podAmounts(withoutMissingExtendedResources(pod, alloc));
  let activeAmounts: Record<string, number>[] | undefined; // the other pods' requests, read once, when first needed
  const check = (r: string) => {
    const requested = want[r] ?? 0;
    if (requested <= 0) return;
    activeAmounts ??= active.map((p) => podAmounts(p));
    const used = activeAmounts.reduce((n, a) => n + (a[r] ?? 0), 0);
    const capacity = allocatableOf(alloc, r);
    if (used + requested > capacity) out.push({ resource: r, requested, used, capacity });
  };
  for (const r of ['cpu', 'memory', 'ephemeral-storage']) check(r);
  // The device manager's resources passed its allocation above: upstream's sanitizeNodeAllocatable
  // raises their allocatable to what is allocated, so Fits passes them.
  for (const r of Object.keys(want)) if (isScalarResource(r) && !devices?.isDeviceResource(r)) check(r);
  return out;
}

/**
 * Upstream's generalFilter: every failure, in its order (resources, node affinity, node name,
 * host ports, then the NoExecute taints the pod does not tolerate, which a static pod ignores).
 */
export function generalFilter(pod: Pod, active: Pod[], node: Node, devices?: PodPlanInput): PredicateFailure[] {
  const failures = insufficientResources(pod, active, node.status?.allocatable ?? {}, devices);
  if (!fitsNode(pod, node)) failures.push({ predicate: NODE_AFFINITY, desc: "node(s) didn't match Pod's node affinity/selector" });
  const nodeName = pod.spec?.nodeName;
  if (nodeName && node.metadata?.name && nodeName !== node.metadata.name)
    failures.push({ predicate: 'NodeName', desc: "node(s) didn't match the requested node name" });
  if (portsConflict(hostPorts(pod), active.flatMap(hostPorts)))
    failures.push({ predicate: 'NodePorts', desc: "node(s) didn't have free ports for the requested pod ports" });
  if (!isStaticPod(pod) && untoleratedTaint(node.spec?.taints ?? [], pod.spec?.tolerations ?? [], (t) => t.effect === 'NoExecute'))
    failures.push({ predicate: 'TaintToleration', desc: "node(s) had taints that the pod didn't tolerate" });
  return failures;
}

/** predicateAdmitHandler.Admit's refusal for the first failure. */
function refusal(f: PredicateFailure): Extract<Admission, { admit: false }> {
  if ('predicate' in f)
    return { admit: false, reason: f.predicate, message: `Pod was rejected: Predicate ${f.predicate} failed: ${f.desc}` };
  // Go prints the int64s: cpu in millicores, the rest in bytes or units.
  const n = (x: number) => String(Math.round(x));
  return {
    admit: false,
    reason: `OutOf${f.resource}`,
    message: `Pod was rejected: Node didn't have enough resource: ${f.resource}, requested: ${n(f.requested)}, used: ${n(f.used)}, capacity: ${n(f.capacity)}`,
  };
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
  // predicateAdmitHandler: first the checks preemption cannot help.
  if ((pod.metadata?.labels?.['kubernetes.io/os'] ?? 'linux') !== 'linux')
    return {
      admit: false,
      reason: 'PodOSSelectorNodeLabelDoesNotMatch',
      message: "Pod was rejected: Failed to admit pod as the `kubernetes.io/os` label doesn't match node label",
    };
  if (pod.spec?.os?.name && pod.spec.os.name !== 'linux') {
    return {
      admit: false,
      reason: 'PodOSNotSupported',
      message: `Pod was rejected: Failed to admit pod as the OS field doesn't match node OS`,
    };
  }
  // (NodeStatus.features is newer than kubernetes-types.)
  const features = (node.status as { features?: { supplementalGroupsPolicy?: boolean } } | undefined)?.features;
  if (strictSupplementalGroups(pod) && !features?.supplementalGroupsPolicy)
    return {
      admit: false,
      reason: 'SupplementalGroupsPolicyNotSupported',
      message: 'Pod was rejected: SupplementalGroupsPolicy=Strict is not supported in this node',
    };
  const failures = generalFilter(pod, active, node, opts.devices);
  let preempted: Admission | undefined;
  if (failures.length) {
    const handled = handleAdmissionFailure(pod, failures, active);
    if (Array.isArray(handled)) {
      // Upstream's generalFilter reads the Node again only when node affinity is the one failure.
      const refetchNode = failures.every((f) => 'predicate' in f && f.predicate === NODE_AFFINITY);
      return refetchNode ? { ...refusal(handled[0]!), refetchNode } : refusal(handled[0]!);
    }
    if (!handled.admit) return handled;
    preempted = handled;
  }
  // Upstream's AppArmor admit handler runs after the predicates.
  const appArmor = admitAppArmor(pod, opts.appArmorHostError);
  if (!appArmor.admit) return appArmor;
  return preempted ?? { admit: true };
}
