// The CRI configs for a pod's sandbox and containers, built from the pod spec. Pure:
// everything the runtime needs to know is decided here, in one readable place.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import type { RuntimeRequest } from '../cri/runtime-client.ts';
import type { Mount } from '../cri/generated/runtime/v1/Mount.ts';
import type { NamespaceOption } from '../cri/generated/runtime/v1/NamespaceOption.ts';
import type { UserNamespace } from '../cri/generated/runtime/v1/UserNamespace.ts';

export type PodSandboxConfig = NonNullable<RuntimeRequest<'RunPodSandbox'>['config']>;
type ContainerConfig = NonNullable<RuntimeRequest<'CreateContainer'>['config']>;
import { labels } from '../container/types.ts';
import type { DeviceRunOptions } from '../devices/allocation.ts';
import { containerHash } from './hash.ts';
import { containerOOMScoreAdj, qosClass } from '../resources/qos.ts';
import { type CFS, fromAmounts, linuxResources, OOM_GROUP } from '../resources/linux-resources.ts';
import { podLimits, podLimitsForContainers, podRequests, toAmounts } from '../resources/pod-resources.ts';
import { containerSwap, type NodeSwap } from '../resources/swap.ts';
import { containerSecurityContext, sandboxSecurityContext, sandboxSysctls, type ImageUser, type NodeSecurity } from './security-context.ts';
import { type CgroupLayout, DEFAULT_LAYOUT, podCgroupParent, podCgroupPath } from '../resources/cgroup-layout.ts';
import { containerHugepageLimits } from '../resources/pod-cgroup.ts';
import { kernelHostname } from '../podutil/hostname.ts';

/** The node's settings a pod's configs depend on; its security ones (seccomp, masked paths) as NodeSecurity. */
export interface NodeContext extends NodeSecurity {
  podLogsDir: string;
  clusterDomain: string;
  /** HostnameOverride (on unless false): spec.hostnameOverride names the pod's host. */
  hostnameOverride?: boolean;
  clusterDNS: string[];
  /** nameservers, searches and options of the host's resolv.conf (dnsPolicy Default). */
  hostDNS: { servers: string[]; searches: string[]; options: string[] };
  /** The node's IPs: status.hostIP(s) in a container's environment. */
  nodeIPs?: string[];
  /** The node's memory capacity in bytes (status.capacity), for containers' oom_score_adj; unknown: the runtime's default. */
  memoryCapacity?: () => number | undefined;
  /** The cgroup driver and cgroupRoot (src/resources/cgroup-layout.ts): where pod cgroups are; unset: cgroupfs below '/'. */
  cgroups?: CgroupLayout;
  /** The node's swap (src/node/swap.ts): the containers' swap limits follow from it; unset: none set. */
  swap?: NodeSwap;
  /** KubeletConfiguration podPidsLimit: pids.max of each pod's cgroup when above 0. */
  podPidsLimit?: number;
  /** false: an OOM kill takes the whole container (src/resources/linux-resources.ts singleProcessOOMKill); unset: one process. */
  singleProcessOOMKill?: boolean;
  /** KubeletConfiguration cpuCFSQuota and cpuCFSQuotaPeriod; unset: quota on, 100 ms. */
  cfs?: CFS;
  /** The CPU manager's cpuset for a container (src/cpumanager: its own CPUs, else the shared pool); undefined: none set (policy none). */
  cpusetFor?: (pod: Pod, c: Container) => string | undefined;
  /** The memory manager's NUMA nodes of the container (cpuset_mems); undefined: none named. */
  cpusetMemsFor?: (pod: Pod, c: Container) => string | undefined;
  /** The host's huge page sizes as the cgroup names them ("2MB"): each container gets a limit for each. */
  hugePageSizes?: string[];
}

const podRef = (pod: Pod) => ({ name: pod.metadata!.name!, namespace: pod.metadata!.namespace ?? 'default', uid: pod.metadata!.uid! });

/** /var/log/pods/NAMESPACE_NAME_UID, upstream's layout. */
export const podLogDir = (pod: Pod, root: string) => {
  const r = podRef(pod);
  return `${root}/${r.namespace}_${r.name}_${r.uid}`;
};

/** The pod's cgroup under kubepods, in the driver's form; undefined without cgroupsPerQOS (no pod cgroups). */
export const podCgroup = (pod: Pod, cgroups = DEFAULT_LAYOUT): string | undefined =>
  podCgroupPath(cgroups, qosClass(pod), pod.metadata!.uid!);

/** Upstream's DNS rules for ClusterFirst, Default and None (search paths capped at 32). */
export function dnsConfig(pod: Pod, node: NodeContext): PodSandboxConfig['dnsConfig'] {
  let policy = pod.spec?.dnsPolicy ?? 'ClusterFirst';
  if (policy === 'ClusterFirstWithHostNet') policy = 'ClusterFirst';
  else if (policy === 'ClusterFirst' && pod.spec?.hostNetwork) policy = 'Default';
  if (policy === 'ClusterFirst' && node.clusterDNS.length === 0) policy = 'Default';
  let servers: string[] = [],
    searches: string[] = [],
    options: string[] = [];
  if (policy === 'ClusterFirst') {
    const ns = pod.metadata?.namespace ?? 'default',
      d = node.clusterDomain;
    servers = node.clusterDNS;
    searches = d ? [`${ns}.svc.${d}`, `svc.${d}`, d, ...node.hostDNS.searches] : node.hostDNS.searches;
    options = ['ndots:5'];
  } else if (policy === 'Default') {
    ({ servers, searches, options } = node.hostDNS);
  }
  const extra = pod.spec?.dnsConfig;
  servers = [...new Set([...servers, ...(extra?.nameservers ?? [])])];
  searches = [...new Set([...searches, ...(extra?.searches ?? [])])].slice(0, 32);
  const opts = new Map(options.map((o) => [o.split(':')[0]!, o]));
  for (const o of extra?.options ?? []) opts.set(o.name!, o.value === undefined ? o.name! : `${o.name}:${o.value}`);
  return { servers, searches, options: [...opts.values()] };
}

/**
 * Throws with upstream's message when the pod's hostname cannot be the kernel's (an FQDN too long).
 * userns: the pod's user namespace (src/userns), as upstream's NamespacesForPod adds it.
 */
export function sandboxConfig(pod: Pod, attempt: number, node: NodeContext, userns?: UserNamespace): PodSandboxConfig {
  const ref = podRef(pod);
  const s = pod.spec!;
  const hostname = kernelHostname(pod, node.clusterDomain, node.hostnameOverride);
  if (typeof hostname !== 'string') throw new Error(hostname.error);
  return {
    metadata: { ...ref, attempt },
    // A hostname cannot be set in the node's network namespace.
    hostname: s.hostNetwork ? '' : hostname,
    logDirectory: podLogDir(pod, node.podLogsDir),
    dnsConfig: dnsConfig(pod, node),
    portMappings: s.containers.flatMap(portMappings),
    labels: { ...pod.metadata?.labels, [labels.podName]: ref.name, [labels.podNamespace]: ref.namespace, [labels.podUID]: ref.uid },
    annotations: { ...pod.metadata?.annotations },
    linux: {
      cgroupParent: podCgroupParent(node.cgroups ?? DEFAULT_LAYOUT, qosClass(pod), pod.metadata!.uid!),
      securityContext: withUserNamespace(sandboxSecurityContext(pod), userns),
      sysctls: sandboxSysctls(pod),
      ...sandboxResources(pod, node.singleProcessOOMKill, node.cfs),
    },
  };
}

/**
 * Upstream's MakePortMappings: every port of the container, host port or not (the runtime's
 * portmap acts on those with one), a name met twice kept once; unnamed ones are told apart by
 * address family, protocol, host IP and both ports.
 */
function portMappings(c: Container) {
  const seen = new Set<string>();
  return (c.ports ?? []).flatMap((p) => {
    const family = !p.hostIP ? 'any' : p.hostIP.includes(':') ? 'v6' : 'v4';
    const name = p.name || `${family}-${p.protocol ?? 'TCP'}-${p.hostIP ?? ''}:${p.containerPort}:${p.hostPort ?? 0}`;
    if (seen.has(name)) return [];
    seen.add(name);
    const protocol = (p.protocol ?? 'TCP') as 'TCP' | 'UDP' | 'SCTP';
    return [{ protocol, containerPort: p.containerPort, hostPort: p.hostPort ?? 0, hostIp: p.hostIP ?? '' }];
  });
}

/** A ContainerPort in the field order of upstream's Go struct (json.Marshal), empty fields left out. */
const goPortOrder = (p: NonNullable<Container['ports']>[number]) => ({
  ...(p.name ? { name: p.name } : {}),
  ...(p.hostPort ? { hostPort: p.hostPort } : {}),
  containerPort: p.containerPort,
  ...(p.protocol ? { protocol: p.protocol } : {}),
  ...(p.hostIP ? { hostIP: p.hostIP } : {}),
});

/**
 * The pod's resources and overhead on its sandbox, as upstream's applySandboxResources
 * (calculateSandboxResources: the pod's requests and limits without the overhead;
 * convertOverheadToLinuxResources: the overhead as both). runc pods are bounded by their pod
 * cgroup (src/resources/pod-cgroup.ts); containerd passes these on as the sandbox's
 * io.kubernetes.cri.sandbox-* annotations, from which VM runtimes (Kata) size the VM.
 */
function sandboxResources(pod: Pod, singleProcessOOMKill: boolean | undefined, cfs: CFS | undefined) {
  const unified = oomGroup(singleProcessOOMKill);
  const of = (cpuRequest: number | undefined, cpuLimit = 0, memoryLimit = 0) => ({
    ...fromAmounts(cpuRequest, cpuLimit, memoryLimit, cfs),
    ...(unified && { unified }),
  });
  const req = podRequests(pod, { excludeOverhead: true }),
    lim = podLimits(pod, { excludeOverhead: true });
  const o = pod.spec?.overhead && toAmounts(pod.spec.overhead);
  return { resources: of(req.cpu, lim.cpu, lim.memory), overhead: o ? of(o.cpu ?? 0, o.cpu, o.memory) : {} };
}

/** calculateLinuxResources' Unified: the kernel kills the whole cgroup on OOM unless single process kills were asked for. */
const oomGroup = (singleProcessOOMKill: boolean | undefined) => (singleProcessOOMKill === false ? { [OOM_GROUP]: '1' } : undefined);

/**
 * CPU and memory for the runtime, with upstream's conversions (shares from requests, quota from
 * limits); a limit the container leaves unset comes from the pod-level resources (generateLinuxContainerResources).
 */
function resources(pod: Pod, c: Container, cfs: CFS | undefined) {
  return linuxResources(c.resources, podLimitsForContainers(pod), cfs);
}

/** What the container gets from outside its spec, decided elsewhere (volumes: src/volumes). */
export interface ContainerInputs {
  /** CRI mounts: volumeMounts, /etc/hosts, the termination message file. */
  mounts?: Mount[];
  /** The raw block volumes of its volumeDevices (src/volumes, upstream's makeBlockVolumes). */
  volumeDevices?: { containerPath: string; hostPath: string; permissions: string }[];
  /** The environment and the expanded command and args (env.ts); without them, literal env values only. */
  env?: { name: string; value: string }[];
  command?: string[];
  args?: string[];
  /** The image's user (CRI ImageStatus): the container runs as it when the pod names no runAsUser. */
  imageUser?: ImageUser;
  /** The node's seccomp settings (seccompDefault, the Localhost profile root) and masked paths. */
  security?: NodeSecurity;
  /** The node's memory in bytes: the container's oom_score_adj follows from it (upstream's GetContainerOOMScoreAdjust). */
  memoryCapacityBytes?: number;
  /** What the device plugins' Allocate gave the container (src/devices): merged in ahead of its own, as upstream's GenerateRunContainerOptions. */
  devices?: DeviceRunOptions;
  /** The node's swap: NoSwap or LimitedSwap in the container's resources (src/resources/swap.ts). */
  swap?: NodeSwap;
  /** The pod's user namespace, as its sandbox has it (src/userns). */
  userNamespace?: UserNamespace;
  /** The node's (NodeContext): false puts memory.oom.group in the container's resources. */
  singleProcessOOMKill?: boolean;
  /** The node's (NodeContext): the CFS quota and period of the container's cpu limit. */
  cfs?: CFS;
  /** The CPU manager's cpuset (upstream's PreCreateContainer: cpuset_cpus of the container's resources). */
  cpusetCpus?: string;
  cpusetMems?: string;
  /** The host's huge page sizes (NodeContext): hugepage_limits of the container's resources. */
  hugePageSizes?: string[];
}

/** The device plugins' share of a container's config: envs, mounts and annotations first, then the container's own. */
function withDevices(config: ContainerConfig, d: DeviceRunOptions | undefined): ContainerConfig {
  if (!d) return config;
  const envs = d.envs.map((e) => ({ key: e.name, value: Buffer.from(e.value) }));
  const mounts: Mount[] = d.mounts.map((m) => ({ containerPath: m.containerPath, hostPath: m.hostPath, readonly: m.readOnly }));
  return {
    ...config,
    envs: [...envs, ...(config.envs ?? [])],
    mounts: [...mounts, ...(config.mounts ?? [])],
    devices: [
      ...d.devices.map((x) => ({ containerPath: x.containerPath, hostPath: x.hostPath, permissions: x.permissions })),
      ...(config.devices ?? []),
    ],
    annotations: { ...d.annotations, ...config.annotations },
    CDIDevices: d.cdiDevices.map((name) => ({ name })),
  };
}

export function containerConfig(pod: Pod, c: Container, attempt: number, inputs: ContainerInputs = {}): ContainerConfig {
  return inUserNamespace(withDevices(ownConfig(pod, c, attempt, inputs), inputs.devices), inputs.userNamespace);
}

/** NamespacesForPod's usernsOptions on a sandbox's or container's namespace options. */
function withUserNamespace<T extends { namespaceOptions?: NamespaceOption | null }>(sc: T, userns: UserNamespace | undefined): T {
  return userns ? { ...sc, namespaceOptions: { ...sc.namespaceOptions, usernsOptions: userns } } : sc;
}

/**
 * The container in the pod's user namespace, and every mount idmapped with its IDs (files on a
 * volume keep their owners as the host sees them), as upstream's applyPlatformSpecificContainerConfig.
 */
function inUserNamespace(config: ContainerConfig, userns: UserNamespace | undefined): ContainerConfig {
  if (!userns) return config;
  const idmapped = userns.uids?.length ? { uidMappings: userns.uids, gidMappings: userns.gids } : undefined;
  return {
    ...config,
    mounts: idmapped ? config.mounts?.map((m) => ({ ...m, ...idmapped })) : config.mounts,
    linux: { ...config.linux, securityContext: withUserNamespace(config.linux?.securityContext ?? {}, userns) },
  };
}

function ownConfig(pod: Pod, c: Container, attempt: number, inputs: ContainerInputs): ContainerConfig {
  const ref = podRef(pod);
  const linux = resources(pod, c, inputs.cfs);
  const swap = containerSwap(pod, c, linux.memoryLimitInBytes, inputs.swap);
  // Upstream's order: the OOM group (calculateLinuxResources), then the swap limit beside it.
  const unified = { ...oomGroup(inputs.singleProcessOOMKill), ...swap.unified };
  return {
    metadata: { name: c.name, attempt },
    // userSpecifiedImage as upstream's generateContainerConfig: containerd names the OCI spec's image after it.
    image: { image: c.image ?? '', userSpecifiedImage: c.image ?? '' },
    command: inputs.command ?? c.command ?? [],
    args: inputs.args ?? c.args ?? [],
    workingDir: c.workingDir ?? '',
    envs: inputs.env
      ? inputs.env.map((e) => ({ key: e.name, value: Buffer.from(e.value) }))
      : (c.env ?? []).filter((e) => e.value !== undefined && !e.valueFrom).map((e) => ({ key: e.name, value: Buffer.from(e.value!) })),
    labels: { [labels.podName]: ref.name, [labels.podNamespace]: ref.namespace, [labels.podUID]: ref.uid, [labels.containerName]: c.name },
    annotations: {
      [labels.containerHash]: containerHash(c),
      [labels.restartCount]: String(attempt),
      [labels.terminationMessagePath]: c.terminationMessagePath ?? '/dev/termination-log',
      [labels.terminationMessagePolicy]: c.terminationMessagePolicy ?? 'File',
      ...(pod.metadata?.deletionGracePeriodSeconds !== undefined
        ? { [labels.deletionGracePeriod]: String(pod.metadata.deletionGracePeriodSeconds) }
        : {}),
      [labels.terminationGracePeriod]: String(pod.spec?.terminationGracePeriodSeconds ?? 30),
      // JSON, as upstream's newContainerAnnotations writes them: a container's preStop hook
      // and ports can be read back from the runtime when its pod is no longer known.
      ...(c.lifecycle?.preStop ? { [labels.preStopHandler]: JSON.stringify(c.lifecycle.preStop) } : {}),
      ...(c.ports?.length ? { [labels.ports]: JSON.stringify(c.ports.map(goPortOrder)) } : {}),
    },
    logPath: `${c.name}/${attempt}.log`,
    mounts: inputs.mounts ?? [],
    ...(inputs.volumeDevices?.length ? { devices: inputs.volumeDevices } : {}),
    stdin: !!c.stdin,
    stdinOnce: !!c.stdinOnce,
    tty: !!c.tty,
    linux: {
      resources: {
        ...linux,
        ...(inputs.memoryCapacityBytes ? { oomScoreAdj: containerOOMScoreAdj(pod, c, inputs.memoryCapacityBytes) } : {}),
        // Upstream's order in generateLinuxContainerResources: after oom_score_adj, before swap.
        ...(inputs.hugePageSizes ? { hugepageLimits: containerHugepageLimits(pod, c.resources?.limits, inputs.hugePageSizes) } : {}),
        ...swap,
        ...(inputs.cpusetCpus ? { cpusetCpus: inputs.cpusetCpus } : {}),
        ...(inputs.cpusetMems ? { cpusetMems: inputs.cpusetMems } : {}),
        ...(Object.keys(unified).length ? { unified } : {}),
      },
      securityContext: containerSecurityContext(pod, c, inputs.imageUser, inputs.security),
    },
  };
}

/** The object path events name a container by, as upstream (spec.containers{x}, spec.initContainers{x}, spec.ephemeralContainers{x}). */
export function containerFieldPath(pod: Pod, name: string): string {
  return `spec.${FIELD[containerType(pod, name)]}{${name}}`;
}

/** Which list of the pod's spec a container is in, as upstream's metrics label it. */
export type ContainerType = 'container' | 'init_container' | 'ephemeral_container';
const FIELD: Record<ContainerType, string> = {
  container: 'containers',
  init_container: 'initContainers',
  ephemeral_container: 'ephemeralContainers',
};

export function containerType(pod: Pod, name: string): ContainerType {
  if (pod.spec?.initContainers?.some((c) => c.name === name)) return 'init_container';
  if (pod.spec?.ephemeralContainers?.some((c) => c.name === name)) return 'ephemeral_container';
  return 'container';
}
