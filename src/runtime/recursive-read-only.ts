// Recursive read-only mounts: a volumeMount's recursiveReadOnly (Disabled, IfPossible, Enabled)
// resolved against what the pod's runtime handler says it supports in CRI Status. A runtime
// that does not say (containerd 1.6) supports nothing: Enabled fails the container
// (CreateContainerConfigError), IfPossible falls back to a plain read-only mount. Pure.
import type { Container, VolumeMount, VolumeMountStatus } from 'kubernetes-types/core/v1.js';
import type { Mount } from '../cri/generated/runtime/v1/Mount.ts';

/** A handler as CRI StatusResponse.runtime_handlers lists it ('' is the default handler). */
export interface RuntimeHandlerInfo {
  name: string;
  features?: { recursiveReadOnlyMounts?: boolean; userNamespaces?: boolean } | null;
}

/** Whether a container asks for recursive read-only anywhere: only then is the runtime asked. */
export function requestsRecursiveReadOnly(c: Container): boolean {
  return (c.volumeMounts ?? []).some((m) => m.recursiveReadOnly !== undefined && m.recursiveReadOnly !== 'Disabled');
}

/**
 * Upstream's runtimeHandlerSupportsRecursiveReadOnlyMounts (with toKubeRuntimeStatus's reading of
 * the features): a runtime that lists no handlers, or not this one, does not support it.
 */
export function runtimeHandlerSupportsRecursiveReadOnlyMounts(handlerName: string, handlers: readonly RuntimeHandlerInfo[]): boolean {
  return handlers.find((h) => h.name === handlerName)?.features?.recursiveReadOnlyMounts === true;
}

/** Upstream's resolveRecursiveReadOnly: whether the mount is made recursively read-only; throws with upstream's words. */
export function resolveRecursiveReadOnly(m: VolumeMount, runtimeSupportsRRO: boolean): boolean {
  const mode = m.recursiveReadOnly;
  if (mode === undefined || mode === 'Disabled') return false;
  if (!m.readOnly) throw new Error(`volume "${m.name}" requested recursive read-only mode, but it is not read-only`);
  if (m.mountPropagation !== undefined && m.mountPropagation !== 'None') {
    throw new Error(
      `volume "${m.name}" requested recursive read-only mode, but it is not compatible with propagation "${m.mountPropagation}"`,
    );
  }
  switch (mode) {
    case 'IfPossible':
      return runtimeSupportsRRO;
    case 'Enabled':
      if (!runtimeSupportsRRO)
        throw new Error(`volume "${m.name}" requested recursive read-only mode, but it is not supported by the runtime`);
      return true;
    default:
      throw new Error(`unknown recursive read-only mode "${mode}"`);
  }
}

// makeMounts makes a relative mountPath absolute before it becomes the CRI container path.
const absolute = (p: string) => (p.startsWith('/') ? p : `/${p}`);

/**
 * The CRI mounts with recursive_read_only set where the volumeMount resolves to it, as makeMounts
 * does per mount; throws "failed to resolve recursive read-only mode: ..." as makeMounts, which
 * fails the container's config. Mounts are matched by container path (unique within a container).
 */
export function withRecursiveReadOnly(c: Container, mounts: Mount[] | undefined, runtimeSupportsRRO: boolean): Mount[] | undefined {
  const recursive = new Set<string>();
  for (const m of c.volumeMounts ?? []) {
    let rro: boolean;
    try {
      rro = resolveRecursiveReadOnly(m, runtimeSupportsRRO);
    } catch (e) {
      throw new Error(`failed to resolve recursive read-only mode: ${(e as Error).message}`);
    }
    if (rro) recursive.add(absolute(m.mountPath));
  }
  if (!recursive.size) return mounts;
  return mounts?.map((m) =>
    m.containerPath !== undefined && recursive.has(absolute(m.containerPath)) ? { ...m, recursiveReadOnly: true } : m,
  );
}

/**
 * containerStatuses[].volumeMounts as upstream's convertToAPIContainerStatuses writes them (the CRI
 * does not know volume names): every volumeMount; a read-only one with its resolved mode, Enabled
 * or Disabled (Disabled too when it cannot be resolved: that container never starts anyway).
 */
export function volumeMountStatuses(c: Container, runtimeSupportsRRO: boolean): VolumeMountStatus[] {
  return (c.volumeMounts ?? []).map((m) => {
    const st: VolumeMountStatus = { name: m.name, mountPath: m.mountPath };
    if (!m.readOnly) return st;
    let rro = false;
    try {
      rro = resolveRecursiveReadOnly(m, runtimeSupportsRRO);
    } catch {
      // upstream logs it and reports Disabled
    }
    return { ...st, readOnly: true, recursiveReadOnly: rro ? 'Enabled' : 'Disabled' };
  });
}
