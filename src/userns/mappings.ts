// A pod's user namespace as upstream keeps and sends it (pkg/kubelet/userns/userns_manager.go):
// the ROOT/pods/UID/userns file's JSON (userNamespace, idMapping), its checks when read back
// (parseUserNsFileAndRecord), the CRI UserNamespace of GetOrCreateUserNamespaceMappings, and
// the refusal when the pod's runtime handler cannot do it (HandlerSupportsUserNamespaces). Pure.
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { UserNamespace } from '../cri/generated/runtime/v1/UserNamespace.ts';

/** Upstream's idMapping, in its JSON field order. */
interface IdMapping {
  hostId: number;
  containerId: number;
  length: number;
}

/** The file's text for a pod's range: container IDs 0.. mapped to host IDs firstID.., the same for groups (as json.Marshal writes it). */
export function mappingsFileContent(firstID: number, length: number): string {
  const m: IdMapping = { hostId: firstID, containerId: 0, length };
  return JSON.stringify({ uidMappings: [m], gidMappings: [m] });
}

/** parseUserNsFileAndRecord's checks: the file is one we wrote (one mapping, the same for groups, root mapped); the range it holds. */
export function parseMappingsFile(text: string): { hostId: number; length: number } {
  let f: { uidMappings?: Partial<IdMapping>[] | null; gidMappings?: Partial<IdMapping>[] | null };
  try {
    f = JSON.parse(text);
  } catch (e) {
    throw new Error(`invalid user namespace mappings file: ${(e as Error).message}`);
  }
  const uids = f?.uidMappings ?? [];
  const gids = f?.gidMappings ?? [];
  if (uids.length !== 1) throw new Error('invalid user namespace configuration: no more than one mapping allowed.');
  if (uids.length !== gids.length) throw new Error('invalid user namespace configuration: GID and UID mappings should be identical.');
  // Go's zero values for fields the file leaves out.
  const [u, g] = [uids[0]!, gids[0]!].map((m) => ({ hostId: m.hostId ?? 0, containerId: m.containerId ?? 0, length: m.length ?? 0 }));
  if (u!.hostId !== g!.hostId || u!.containerId !== g!.containerId || u!.length !== g!.length)
    throw new Error('invalid user namespace configuration: GID and UID mapping should be identical');
  // Some runtimes assume root is mapped, and we never write a file without it.
  if (u!.containerId !== 0) throw new Error('invalid user namespace configuration: UID 0 must be mapped');
  if (g!.containerId !== 0) throw new Error('invalid user namespace configuration: GID 0 must be mapped');
  return { hostId: u!.hostId, length: u!.length };
}

/** GetOrCreateUserNamespaceMappings' answer for a pod with its own range: mode POD, container IDs 0.. on host IDs firstID... */
export function podUserNamespace(firstID: number, length: number): UserNamespace {
  const m = { hostId: firstID, containerId: 0, length };
  return { mode: 'POD', uids: [m], gids: [{ ...m }] };
}

/** The user namespace of the node, for every pod but those with hostUsers: false (the feature is GA and locked on in 1.36). */
export const NODE_USER_NAMESPACE: UserNamespace = { mode: 'NODE' };

/** Whether the pod asks for a user namespace of its own. */
export const wantsUserNamespace = (pod: Pod) => pod.spec?.hostUsers === false;

/** A runtime handler as CRI Status lists it ('' is the default handler). */
export interface HandlerFeatures {
  name: string;
  features?: { userNamespaces?: boolean } | null;
}

/**
 * Why a hostUsers: false pod cannot run on its handler, with GetOrCreateUserNamespaceMappings'
 * words, or undefined when it can. HandlerSupportsUserNamespaces: a runtime that lists no handlers
 * (containerd 1.6) supports none; one that lists others but not this one does not know it.
 */
export function userNamespacesRefusal(runtimeHandler: string, handlers: readonly HandlerFeatures[]): string | undefined {
  const h = handlers.find((x) => x.name === runtimeHandler);
  if (h?.features?.userNamespaces === true) return undefined;
  const msg = runtimeHandler
    ? `can't set \`spec.hostUsers: false\`, RuntimeClass handler "${runtimeHandler}" does not support user namespaces`
    : "can't set `spec.hostUsers: false`, runtime does not support user namespaces";
  return handlers.length > 0 && !h ? `${msg}: the handler "${runtimeHandler}" is not known` : msg;
}
