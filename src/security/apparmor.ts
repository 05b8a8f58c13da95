// AppArmor at admission, as upstream's appArmorAdmitHandler (pkg/kubelet/lifecycle/handlers.go)
// over pkg/security/apparmor (validate.go, helpers.go): a pending pod that asks for any profile
// but unconfined (fields or the deprecated annotations) is refused, reason "AppArmor", on a
// host without AppArmor, rather than run unconfined. The host is read once at start-up, as
// upstream's NewValidator: enabling AppArmor takes a kubelet restart.
import { existsSync, readFileSync } from 'node:fs';
import type { AppArmorProfile, Container, Pod } from 'kubernetes-types/core/v1.js';
import type { Admission } from '../pods/verdict.ts';

/** v1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix; the key ends with the container's name. */
export const APPARMOR_ANNOTATION_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';
const ANNOTATION_RUNTIME_DEFAULT = 'runtime/default';
const ANNOTATION_UNCONFINED = 'unconfined';
const ANNOTATION_LOCALHOST_PREFIX = 'localhost/';

export interface AppArmorHostFiles {
  /** The securityfs directory of AppArmor. */
  securityfs: string;
  /** The module parameter, "Y" when enabled. */
  enabled: string;
}

const HOST_FILES: AppArmorHostFiles = {
  securityfs: '/sys/kernel/security/apparmor',
  enabled: '/sys/module/apparmor/parameters/enabled',
};

/**
 * Upstream's validateHost (with libcontainer's apparmor.IsEnabled): why this host cannot enforce
 * AppArmor profiles, or undefined when it can. Call once at start-up.
 */
export function appArmorHostError(files: AppArmorHostFiles = HOST_FILES): string | undefined {
  let enabled = false;
  if (existsSync(files.securityfs)) {
    try {
      const buf = readFileSync(files.enabled, 'utf8');
      enabled = buf.length > 1 && buf[0] === 'Y';
    } catch {
      // no module parameter: not enabled
    }
  }
  return enabled ? undefined : 'AppArmor is not enabled on the host';
}

const allContainers = (pod: Pod): Container[] => [
  ...(pod.spec?.initContainers ?? []),
  ...(pod.spec?.containers ?? []),
  ...((pod.spec?.ephemeralContainers ?? []) as Container[]),
];

/**
 * Upstream's isRequired: a profile other than Unconfined in the pod's or a container's
 * securityContext, or a deprecated annotation other than "unconfined". (Upstream looks at the
 * first such annotation in map order, which is random; here any one counts.)
 */
export function appArmorRequired(pod: Pod): boolean {
  const confined = (p?: AppArmorProfile) => p !== undefined && p.type !== 'Unconfined';
  if (confined(pod.spec?.securityContext?.appArmorProfile)) return true;
  if (allContainers(pod).some((c) => confined(c.securityContext?.appArmorProfile))) return true;
  return Object.entries(pod.metadata?.annotations ?? {}).some(
    ([k, v]) => k.startsWith(APPARMOR_ANNOTATION_PREFIX) && v !== ANNOTATION_UNCONFINED,
  );
}

/** Upstream's getProfileFromPodAnnotations: the deprecated annotation of a container as a profile; an invalid value is none. */
function profileFromAnnotation(pod: Pod, containerName: string): AppArmorProfile | undefined {
  const v = pod.metadata?.annotations?.[APPARMOR_ANNOTATION_PREFIX + containerName];
  if (v === undefined) return undefined;
  if (v === ANNOTATION_RUNTIME_DEFAULT) return { type: 'RuntimeDefault' };
  if (v === ANNOTATION_UNCONFINED) return { type: 'Unconfined' };
  if (v.startsWith(ANNOTATION_LOCALHOST_PREFIX))
    return { type: 'Localhost', localhostProfile: v.slice(ANNOTATION_LOCALHOST_PREFIX.length) };
  return undefined;
}

/**
 * Upstream's GetProfile: the container's field, then its annotation (static pods may not have had
 * them synced to fields), then the pod's field.
 */
export function appArmorProfile(pod: Pod, c: Container): AppArmorProfile | undefined {
  return c.securityContext?.appArmorProfile ?? profileFromAnnotation(pod, c.name) ?? pod.spec?.securityContext?.appArmorProfile;
}

/**
 * Upstream's validator.Validate: undefined when the pod can run here; else the error. hostError:
 * appArmorHostError's answer at start-up.
 */
export function validateAppArmor(pod: Pod, hostError: string | undefined): string | undefined {
  if (!appArmorRequired(pod)) return undefined;
  if (hostError) return hostError;
  for (const c of allContainers(pod)) {
    const p = appArmorProfile(pod, c);
    if (p?.type === 'Localhost' && !p.localhostProfile?.trim()) {
      // Upstream prints the profile struct with %q: &{"Localhost" <name>}.
      const name = p.localhostProfile === undefined ? '<nil>' : JSON.stringify(p.localhostProfile);
      return `invalid empty AppArmor profile name: &{"Localhost" ${name}}`;
    }
  }
  return undefined;
}

/**
 * Upstream's appArmorAdmitHandler.Admit: only a pending pod is checked (one already running or
 * done was admitted before). A pod without a phase counts as pending: upstream's sources set
 * Pending on static pods, which kubelet-ts leaves unset. The message carries "Pod was rejected: "
 * as every admission message here (upstream's rejectPod adds it to the status message).
 */
export function admitAppArmor(pod: Pod, hostError: string | undefined): Admission {
  const phase = pod.status?.phase;
  if (phase !== undefined && phase !== 'Pending') return { admit: true };
  const err = validateAppArmor(pod, hostError);
  if (!err) return { admit: true };
  return { admit: false, reason: 'AppArmor', message: `Pod was rejected: Cannot enforce AppArmor: ${err}` };
}
