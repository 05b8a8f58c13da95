// What a pod is, read from its own object: the bottom layer every other folder may import.
// Upstream keeps these in pkg/kubelet/types (IsStaticPod, IsMirrorPod, IsCriticalPod) and
// pkg/api/v1/pod (podutil); pure, no I/O.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';

/** Which source a pod came from: 'file' (staticPodPath), 'http' (staticPodURL) or 'api'. */
export const CONFIG_SOURCE = 'kubernetes.io/config.source';
/** When the kubelet first saw a pod (kubetypes.ConfigFirstSeenAnnotationKey). */
export const CONFIG_SEEN = 'kubernetes.io/config.seen';
/** A static pod's hash (its UID); its mirror carries it under CONFIG_MIRROR. */
export const CONFIG_HASH = 'kubernetes.io/config.hash';
export const CONFIG_MIRROR = 'kubernetes.io/config.mirror';
/** scheduling.SystemCriticalPriority: system-cluster-critical's value; system-node-critical is above it. */
export const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;

/** Upstream's kubetypes.IsStaticPod: pods from a file or URL source; they get mirror pods. */
export const isStaticPod = (pod: Pod) => ['file', 'http'].includes(pod.metadata?.annotations?.[CONFIG_SOURCE] ?? '');

/** Upstream's IsMirrorPod: the annotation's presence, whatever its value. */
export const isMirrorPod = (pod: Pod) => pod.metadata?.annotations?.[CONFIG_MIRROR] !== undefined;

/**
 * Upstream's kubetypes.IsCriticalPod: static and mirror pods (a static pod evicted is never
 * admitted again) and system-critical priorities. Never evicted, always admitted.
 */
export const isCriticalPod = (pod: Pod) => isStaticPod(pod) || isMirrorPod(pod) || (pod.spec?.priority ?? 0) >= SYSTEM_CRITICAL_PRIORITY;

/** An init container with restartPolicy Always runs beside the app containers (podutil.IsRestartableInitContainer). */
export const isSidecar = (c: Container) => c.restartPolicy === 'Always';

/** The init containers, then the app containers (upstream's VisitContainers with InitContainers|Containers: ephemeral ones aside). */
export const initAndAppContainers = (pod: Pod): Container[] => [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];

/**
 * Pod keys and names in code-unit order, as Go compares strings. Not localeCompare: ICU's
 * collation is slower, and its data is ~2 MB of the node binary's pages.
 */
export const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** upstream's format.Pod: name_namespace(uid), as its hook and security context errors name a pod. */
export const formatPod = (pod: Pod) => `${pod.metadata?.name}_${pod.metadata?.namespace ?? 'default'}(${pod.metadata?.uid})`;

/** namespace/name, as logs and events name a pod (upstream's klog.KObj). */
export const podKey = (pod: Pod) => `${pod.metadata?.namespace}/${pod.metadata?.name}`;

/** A pod in a log line: its key and UID, as upstream's klog.KObj(pod) with "podUID". */
export const logRef = (pod: Pod) => ({ pod: podKey(pod), podUID: pod.metadata!.uid! });
export type LogRef = ReturnType<typeof logRef>;
