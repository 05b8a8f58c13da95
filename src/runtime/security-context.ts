// A pod's security context in CRI terms, as upstream's kuberuntime (security_context.go,
// helpers.go getSeccompProfile, kuberuntime_sandbox_linux.go) and pkg/securitycontext.
// Pure: the image's user and the node's seccomp settings come in as arguments.
import type { Container, Pod, SeccompProfile, SecurityContext, SELinuxOptions } from 'kubernetes-types/core/v1.js';
import type { LinuxContainerSecurityContext } from '../cri/generated/runtime/v1/LinuxContainerSecurityContext.ts';
import type { LinuxSandboxSecurityContext } from '../cri/generated/runtime/v1/LinuxSandboxSecurityContext.ts';
import type { NamespaceOption } from '../cri/generated/runtime/v1/NamespaceOption.ts';
import type { SecurityProfile } from '../cri/generated/runtime/v1/SecurityProfile.ts';
import { appArmorProfile } from '../security/apparmor.ts';
import { formatPod } from '../podutil/podutil.ts';

/** The user an image's config names (CRI ImageStatus): a numeric uid, or a name the runtime resolves. */
export interface ImageUser {
  uid?: number;
  username?: string;
}

/** What of the node a container's security context depends on. */
export interface NodeSecurity {
  /** KubeletConfiguration seccompDefault: RuntimeDefault instead of Unconfined when a pod says nothing. */
  seccompDefault?: boolean;
  /** <root-dir>/seccomp: where Localhost profiles live. */
  seccompProfileRoot?: string;
  /** This host's paths masked beside the fixed list (src/node/host.ts thermalThrottlePaths). */
  hostMaskedPaths?: string[];
}

const DEFAULT_SECCOMP_ROOT = '/var/lib/kubelet/seccomp';
const MAX_USER_ID = 2147483647;

// upstream's defaults for procMount Default (pkg/securitycontext), kept in step with moby's.
const DEFAULT_MASKED_PATHS = [
  '/proc/asound',
  '/proc/acpi',
  '/proc/interrupts',
  '/proc/kcore',
  '/proc/keys',
  '/proc/latency_stats',
  '/proc/timer_list',
  '/proc/timer_stats',
  '/proc/sched_debug',
  '/proc/scsi',
  '/sys/firmware',
  '/sys/devices/virtual/powercap',
];
const DEFAULT_READONLY_PATHS = ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger'];

/** NamespacesForPod: host namespaces, and one pid namespace for the pod with shareProcessNamespace. */
export function namespaceOptions(pod: Pod): NamespaceOption {
  const s = pod.spec!;
  return {
    network: s.hostNetwork ? 'NODE' : 'POD',
    pid: s.hostPID ? 'NODE' : s.shareProcessNamespace ? 'POD' : 'CONTAINER',
    ipc: s.hostIPC ? 'NODE' : 'POD',
  };
}

/** DetermineEffectiveSecurityContext: the pod's runAs*, seLinuxOptions under the container's own fields. */
export function effectiveSecurityContext(pod: Pod, c: Container): SecurityContext {
  const p = pod.spec?.securityContext;
  const fromPod: SecurityContext = p
    ? {
        ...(p.seLinuxOptions ? { seLinuxOptions: p.seLinuxOptions } : {}),
        ...(p.runAsUser !== undefined ? { runAsUser: p.runAsUser } : {}),
        ...(p.runAsGroup !== undefined ? { runAsGroup: p.runAsGroup } : {}),
        ...(p.runAsNonRoot !== undefined ? { runAsNonRoot: p.runAsNonRoot } : {}),
      }
    : {};
  const own = Object.fromEntries(Object.entries(c.securityContext ?? {}).filter(([, v]) => v !== undefined && v !== null));
  return { ...fromPod, ...own };
}

/** verifyRunAsNonRoot (security_context_others.go): the error message, or undefined when the container may run. */
export function verifyRunAsNonRoot(pod: Pod, c: Container, user: ImageUser): string | undefined {
  const sc = effectiveSecurityContext(pod, c);
  if (!sc.runAsNonRoot) return undefined;
  const where = `(pod: "${formatPod(pod)}", container: ${c.name})`;
  if (sc.runAsUser !== undefined) return sc.runAsUser === 0 ? `container's runAsUser breaks non-root policy ${where}` : undefined;
  if (user.uid === undefined && user.username) {
    return `container has runAsNonRoot and image has non-numeric user (${user.username}), cannot verify user is non-root ${where}`;
  }
  // No user in the image at all: it runs as root (upstream's getImageUser).
  const uid = user.uid ?? 0;
  if (uid === 0) return `container has runAsNonRoot and image will run as root ${where}`;
  if (uid < 0 || uid > MAX_USER_ID) {
    return `container has runAsNonRoot and image has an invalid user id (${uid}). (Must be 1-(${MAX_USER_ID})): must be between 0 and ${MAX_USER_ID}, inclusive ${where}`;
  }
  return undefined;
}

/** fieldSeccompProfile: a Localhost profile is a file under the kubelet's seccomp root. */
function fieldSeccompProfile(p: SeccompProfile, root: string): SecurityProfile | string {
  if (p.type === 'RuntimeDefault') return { profileType: 'RuntimeDefault' };
  if (p.type === 'Localhost') {
    if (!p.localhostProfile) return 'localhostProfile must be set if seccompProfile type is Localhost.';
    return { profileType: 'Localhost', localhostRef: `${root.replace(/\/+$/, '')}/${p.localhostProfile.replace(/^\/+/, '')}` };
  }
  return { profileType: 'Unconfined' };
}

/** getSeccompProfile: the container's field, else the pod's, else RuntimeDefault with seccompDefault, else Unconfined. */
export function seccompProfile(pod: Pod, c: Container, opts: NodeSecurity = {}): SecurityProfile | string {
  const p = c.securityContext?.seccompProfile ?? pod.spec?.securityContext?.seccompProfile;
  if (p) return fieldSeccompProfile(p, opts.seccompProfileRoot ?? DEFAULT_SECCOMP_ROOT);
  return { profileType: opts.seccompDefault ? 'RuntimeDefault' : 'Unconfined' };
}

/** What keeps a container from being configured (CreateContainerConfigError), as generateContainerConfig checks it. */
export function securityContextError(pod: Pod, c: Container, user: ImageUser = {}, opts: NodeSecurity = {}): string | undefined {
  const seccomp = seccompProfile(pod, c, opts);
  if (typeof seccomp === 'string') return seccomp;
  return verifyRunAsNonRoot(pod, c, user);
}

const selinux = (o?: SELinuxOptions) =>
  o ? { user: o.user ?? '', role: o.role ?? '', type: o.type ?? '', level: o.level ?? '' } : undefined;

// supplementalGroupsPolicy (1.31+) is newer than kubernetes-types; Merge is the CRI default.
export const strictSupplementalGroups = (pod: Pod) =>
  (pod.spec?.securityContext as { supplementalGroupsPolicy?: string } | undefined)?.supplementalGroupsPolicy === 'Strict';

/** fsGroup first, then supplementalGroups, as upstream orders them. */
function supplementalGroups(pod: Pod): number[] {
  const p = pod.spec?.securityContext;
  return [...(p?.fsGroup !== undefined ? [p.fsGroup] : []), ...(p?.supplementalGroups ?? [])];
}

/** determineEffectiveSecurityContext: the container's LinuxContainerSecurityContext. */
export function containerSecurityContext(
  pod: Pod,
  c: Container,
  user: ImageUser = {},
  opts: NodeSecurity = {},
): LinuxContainerSecurityContext {
  const sc = effectiveSecurityContext(pod, c);
  const seccomp = seccompProfile(pod, c, opts);
  const caps = sc.capabilities;
  const unmasked = sc.procMount === 'Unmasked';
  const out: LinuxContainerSecurityContext = {
    namespaceOptions: namespaceOptions(pod),
    privileged: !!sc.privileged,
    readonlyRootfs: !!sc.readOnlyRootFilesystem,
    // Names go as written (NET_ADMIN or CAP_NET_ADMIN, ALL): containerd normalises them, as for upstream.
    ...(caps ? { capabilities: { addCapabilities: caps.add ?? [], dropCapabilities: caps.drop ?? [] } } : {}),
    ...(sc.seLinuxOptions ? { selinuxOptions: selinux(sc.seLinuxOptions) } : {}),
    ...(sc.runAsGroup !== undefined ? { runAsGroup: { value: sc.runAsGroup } } : {}),
    supplementalGroups: supplementalGroups(pod),
    ...(strictSupplementalGroups(pod) ? { supplementalGroupsPolicy: 'Strict' as const } : {}),
    noNewPrivs: noNewPrivs(sc),
    maskedPaths: unmasked ? [] : [...DEFAULT_MASKED_PATHS, ...(opts.hostMaskedPaths ?? [])],
    readonlyPaths: unmasked ? [] : DEFAULT_READONLY_PATHS,
    // A Localhost profile without a name never gets here: securityContextError stops the container first.
    seccomp: typeof seccomp === 'string' ? { profileType: 'Unconfined' } : seccomp,
    ...appArmorSecurity(pod, c),
  };
  // Without runAsUser the image's user, as upstream passes it: a uid, else its name.
  if (sc.runAsUser !== undefined) out.runAsUser = { value: sc.runAsUser };
  else {
    if (user.uid !== undefined) out.runAsUser = { value: user.uid };
    if (user.username) out.runAsUsername = user.username;
  }
  return out;
}

/**
 * Upstream's getAppArmorProfile: the container's profile (its field, its deprecated annotation,
 * the pod's field) for the runtime, with the deprecated string form beside it; none asked for,
 * none sent (the runtime's default applies). A Localhost profile without a name never gets here:
 * admission refuses it (src/security/apparmor.ts).
 */
export function appArmorSecurity(pod: Pod, c: Container): Pick<LinuxContainerSecurityContext, 'apparmor' | 'apparmorProfile'> {
  const p = appArmorProfile(pod, c);
  switch (p?.type) {
    case 'RuntimeDefault':
      return { apparmor: { profileType: 'RuntimeDefault' }, apparmorProfile: 'runtime/default' };
    case 'Unconfined':
      return { apparmor: { profileType: 'Unconfined' }, apparmorProfile: 'unconfined' };
    case 'Localhost':
      return p.localhostProfile
        ? { apparmor: { profileType: 'Localhost', localhostRef: p.localhostProfile }, apparmorProfile: `localhost/${p.localhostProfile}` }
        : {};
    default:
      return {};
  }
}

/**
 * AddNoNewPrivileges: only an explicit allowPrivilegeEscalation false sets no_new_privs. The API
 * refuses it next to privileged or an added CAP_SYS_ADMIN; a pod that skipped validation gets the
 * escalation those imply rather than a container that cannot use them.
 */
function noNewPrivs(sc: SecurityContext): boolean {
  if (sc.allowPrivilegeEscalation !== false) return false;
  const sysAdmin = (sc.capabilities?.add ?? []).some((cap) => cap.toUpperCase().replace(/^CAP_/, '') === 'SYS_ADMIN');
  return !sc.privileged && !sysAdmin;
}

/** generatePodSandboxLinuxConfig's security context: the pause container runs RuntimeDefault whatever the pod says. */
export function sandboxSecurityContext(pod: Pod): LinuxSandboxSecurityContext {
  const p = pod.spec?.securityContext;
  const all = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? []), ...(pod.spec?.ephemeralContainers ?? [])];
  return {
    namespaceOptions: namespaceOptions(pod),
    privileged: all.some((c) => c.securityContext?.privileged),
    // Issue 84623 upstream: a least-privilege profile for the sandbox lets pods use strict ones.
    seccomp: { profileType: 'RuntimeDefault' },
    ...(p?.runAsUser !== undefined ? { runAsUser: { value: p.runAsUser } } : {}),
    ...(p?.runAsGroup !== undefined ? { runAsGroup: { value: p.runAsGroup } } : {}),
    ...(p?.seLinuxOptions ? { selinuxOptions: selinux(p.seLinuxOptions) } : {}),
    supplementalGroups: supplementalGroups(pod),
    ...(strictSupplementalGroups(pod) ? { supplementalGroupsPolicy: 'Strict' as const } : {}),
  };
}

/** sysctl.d's rule (NormalizeName): a name whose first separator is "/" has "." and "/" swapped. */
export function normalizeSysctlName(name: string): string {
  const i = name.search(/[./]/);
  if (i < 0 || name[i] === '.') return name;
  return name.replace(/[./]/g, (ch) => (ch === '.' ? '/' : '.'));
}

/** The pod's sysctls for the sandbox, names dot-separated as runc needs them. */
export function sandboxSysctls(pod: Pod): Record<string, string> {
  return Object.fromEntries((pod.spec?.securityContext?.sysctls ?? []).map((s) => [normalizeSysctlName(s.name), s.value]));
}
