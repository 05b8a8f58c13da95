// Where the kubelet's cgroups are, for either cgroup driver (upstream's CgroupName in
// pkg/kubelet/cm/cgroup_manager_linux.go). A cgroup is named by its components, the same for
// both drivers: [kubepods] holds Guaranteed pods, [kubepods, burstable] and
// [kubepods, besteffort] the others, each pod in pod<UID>, all below cgroupRoot
// (KubeletConfiguration, default '/', which lets several kubelets share one host's hierarchy).
// The driver decides the path: cgroupfs joins the components (/kubepods/burstable/pod<UID>);
// systemd makes each prefix a slice, with dashes in a component as underscores
// (/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<UID>.slice). Either path is
// the cgroup's directory in every hierarchy, and what the runtime is handed as cgroup_parent.
// With cgroupsPerQOS false there is none of kubepods, the QoS cgroups and the pods' cgroups
// (upstream's qosContainerManagerNoop and podContainerManagerNoop): the pods' root is cgroupRoot
// itself, and a pod has no cgroup of its own. Pure.
import type { CgroupDriver } from './cgroup-driver.ts';
import type { QOSClass } from './qos.ts';

/** Upstream's CgroupName: a cgroup's components below the root of the hierarchy. */
export type CgroupName = readonly string[];

/** How the node's cgroups are named: the driver, cgroupRoot's components, and cgroupsPerQOS. */
export interface CgroupLayout {
  driver: CgroupDriver;
  root: CgroupName;
  /** cgroupsPerQOS: kubepods, its QoS cgroups and a cgroup per pod; false: none of them. */
  perQos: boolean;
}

/** Upstream's ParseCgroupfsToCgroupName: '/a/b' is [a, b]; '/' or '' is the root. */
export const parseCgroupfs = (path: string): CgroupName => path.split('/').filter(Boolean);

/** The layout of a node (cgroupRoot is given in the cgroupfs form with either driver, as upstream). */
export const cgroupLayout = (driver: CgroupDriver, cgroupRoot = '/', cgroupsPerQOS = true): CgroupLayout => ({
  driver,
  root: parseCgroupfs(cgroupRoot),
  perQos: cgroupsPerQOS,
});

/** The layout when nothing says otherwise (tests, tools): cgroupfs below '/'. */
export const DEFAULT_LAYOUT: CgroupLayout = cgroupLayout('cgroupfs');

/** Upstream's CgroupName.ToCgroupfs. */
export const toCgroupfs = (name: CgroupName): string => `/${name.join('/')}`;

/**
 * Upstream's CgroupName.ToSystemd: each component escaped (libcontainer's slice names cannot
 * hold a dash inside a component), joined by dashes into a slice, expanded into its parents
 * (ExpandSlice: a-b-c.slice is /a.slice/a-b.slice/a-b-c.slice). The root is '/'.
 */
export function toSystemd(name: CgroupName): string {
  const parts = name.map((c) => c.replaceAll('-', '_'));
  return parts.map((_, i) => `/${parts.slice(0, i + 1).join('-')}.slice`).join('') || '/';
}

/** The cgroup's path for the layout's driver (upstream's cgroupManager.Name). */
export const cgroupPath = (l: CgroupLayout, name: CgroupName): string => (l.driver === 'systemd' ? toSystemd(name) : toCgroupfs(name));

/** Upstream's NodeAllocatableRoot and the container manager's cgroupRoot: kubepods, or cgroupRoot without cgroupsPerQOS. */
const podsRootName = (l: CgroupLayout): CgroupName => (l.perQos ? [...l.root, 'kubepods'] : l.root);

/**
 * The cgroup every pod runs below (upstream's NodeAllocatableRoot, GetPodCgroupRoot): kubepods,
 * held to node allocatable; without cgroupsPerQOS cgroupRoot itself ('/' by default: the whole
 * machine, which the Summary then reports as the "pods" system container, as upstream's).
 */
export const nodeAllocatableRoot = (l: CgroupLayout) => cgroupPath(l, podsRootName(l));

/** The QoS cgroups below kubepods (Guaranteed pods have none: they are kubepods' own children); only with cgroupsPerQOS. */
export const qosCgroup = (l: CgroupLayout, qos: 'burstable' | 'besteffort') => cgroupPath(l, [...podsRootName(l), qos]);

/**
 * A pod's cgroup for its QoS class (upstream's GetPodContainerName), absolute as cgroup_parent
 * must be. Undefined without cgroupsPerQOS: podContainerManagerNoop makes none.
 */
export function podCgroupPath(l: CgroupLayout, qos: QOSClass, uid: string): string | undefined {
  if (!l.perQos) return undefined;
  const parent = qos === 'Guaranteed' ? podsRootName(l) : [...podsRootName(l), qos.toLowerCase()];
  return cgroupPath(l, [...parent, `pod${uid}`]);
}

/**
 * The sandbox's cgroup_parent (upstream's GetPodCgroupParent): the pod's cgroup, or '' without
 * cgroupsPerQOS (podContainerManagerNoop's GetPodContainerName), which leaves the place of
 * the pod's containers to the runtime.
 */
export const podCgroupParent = (l: CgroupLayout, qos: QOSClass, uid: string): string => podCgroupPath(l, qos, uid) ?? '';

/** Where a pod's cgroup may be when only its UID is known (stats, cleanup of orphans); none without cgroupsPerQOS. */
export const podCgroupCandidates = (l: CgroupLayout, uid: string): string[] =>
  (['Guaranteed', 'Burstable', 'BestEffort'] as const).flatMap((qos) => podCgroupPath(l, qos, uid) ?? []);

/**
 * A container's (or sandbox's) cgroup below its pod's, as containerd makes it: the ID itself
 * with cgroupfs, runc's transient scope cri-containerd-<ID>.scope with systemd (containerd's
 * "slice:cri-containerd:<ID>" cgroups path).
 */
export const containerCgroupPath = (l: CgroupLayout, podPath: string, id: string): string =>
  l.driver === 'systemd' ? `${podPath}/cri-containerd-${id}.scope` : `${podPath}/${id}`;

/**
 * A container's (or sandbox's) cgroup, its pod's cgroup known or not: below the pod's; without
 * cgroupsPerQOS (an empty cgroup_parent) where containerd puts it then, its default cgroups path
 * /k8s.io/<ID> (oci's populateDefaultUnixSpec, in the CRI's namespace); undefined when neither.
 */
export function containerCgroupOf(l: CgroupLayout, podPath: string | undefined, id: string): string | undefined {
  if (podPath) return containerCgroupPath(l, podPath, id);
  return l.perQos ? undefined : `/k8s.io/${id}`;
}

/**
 * A systemd cgroup path's unit and its parent slice (upstream's updateSystemdCgroupInfo): the
 * last component, and the one before it or the root slice '-.slice'. Undefined when the path
 * is not a slice (a cgroupfs path given to the systemd driver).
 */
export function sliceOf(path: string): { unit: string; parent: string } | undefined {
  const parts = path.split('/').filter(Boolean);
  const unit = parts.at(-1);
  if (!unit?.endsWith('.slice')) return undefined;
  return { unit, parent: parts.at(-2) ?? '-.slice' };
}

/**
 * Upstream's ParseSystemdToCgroupName: a slice's components from its last path element
 * (/system.slice is [system], /a.slice/a-b.slice is [a, b]), each `_` back to `-`.
 */
export const parseSystemd = (path: string): CgroupName =>
  (path.split('/').filter(Boolean).at(-1) ?? '')
    .replace(/\.slice$/, '')
    .split('-')
    .map((c) => c.replaceAll('_', '-'));

/**
 * A cgroup named in the configuration (systemReservedCgroup, kubeReservedCgroup), as the cgroup
 * manager reads and writes it (upstream's cgroupManager.CgroupName, then Name): with systemd a
 * slice name in either form (/system.slice, or /system as cgroupfs names it: both are
 * /system.slice), with cgroupfs the path itself.
 */
export const configuredCgroupPath = (driver: CgroupDriver, path: string): string =>
  driver === 'systemd' ? toSystemd(parseSystemd(path)) : toCgroupfs(parseCgroupfs(path));
