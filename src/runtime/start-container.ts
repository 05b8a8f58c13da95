// Starting one container, as upstream's startContainer (kuberuntime_container.go): its crash
// back-off (doBackOff), its images, its config (generateContainerConfig: environment, mounts,
// security, devices), CreateContainer and StartContainer, then its postStart hook.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { calcRestartCountByLogDir } from '../container-logs/restart-count.ts';
import { formatDuration } from '../apiserver/duration.ts';
import { latest, type PodRuntimeStatus, type Waiting } from '../container/types.ts';
import type { DeviceRunOptions } from '../devices/allocation.ts';
import { podRef } from '../events/recorder.ts';
import { containerImageVolumes, type ImageVolumePull } from '../images/image-volumes.ts';

import type { ImageEvent, PullResult } from '../images/puller.ts';
import { effectiveResources } from '../resize/decide.ts';
import { podSpecResources } from '../resources/pod-resources.ts';
import type { CrashBackoff } from './crash-backoff.ts';
import { crashBackoffKey } from './crash-backoff.ts';
import { containerEnvironment } from './env.ts';
import type { EnvReads } from './env-sources.ts';
import { runHook } from './hooks.ts';
import { killContainer, podGraceSeconds } from './kill.ts';
import { linkLog } from './log-links.ts';
import { containerConfig, containerFieldPath, containerType, type ContainerInputs, type PodSandboxConfig } from './pod-config.ts';
import { requestsRecursiveReadOnly, withRecursiveReadOnly } from './recursive-read-only.ts';
import { pullRetryMs, REQUEUE_ERROR_MS } from './requeue.ts';
import { supportsRecursiveReadOnly } from './runtime-state.ts';
import { securityContextError } from './security-context.ts';
import { logRef } from '../podutil/podutil.ts';
import { statusMessage } from '../cri/error.ts';
import type { SyncContext } from './sync-context.ts';
import { sortPodIPs } from '../network/ips.ts';

/** What the containers started in one sync share. */
export interface StartScope {
  status: PodRuntimeStatus;
  sandboxId: string;
  sbConfig: PodSandboxConfig;
  /** Filled with the containers left waiting, and why. */
  waiting: Map<string, Waiting>;
  /** The pod's image volumes, pulled once in the sync when a first container needs them. */
  imageVolumes: () => Promise<ReadonlyMap<string, ImageVolumePull>>;
  /** ConfigMaps, Secrets and Services for the containers' environment: read once in the sync. */
  envReads: EnvReads;
  signal?: AbortSignal;
}

/** Starts one container, unless it waits on a back-off or its image; returns when to look again. */
export async function startContainer(ctx: SyncContext, pod: Pod, c: Container, s: StartScope): Promise<number | undefined> {
  const backoff = crashLoopBackOff(ctx, pod, c, s);
  if (backoff !== undefined) return backoff;
  const pulled = await pullImages(ctx, pod, c, s);
  if (typeof pulled === 'number') return pulled;
  const configured = await configure(ctx, pod, c, s, pulled);
  if (typeof configured === 'number') return configured;
  return createAndStart(ctx, pod, c, s, configured);
}

/**
 * As upstream's doBackOff: the newest exited instance decides, also when the latest one ran
 * until this sync killed it (a failed liveness probe), so that repeated kills back off too.
 * Keyed as upstream's GetBackoffKey (image and resources too): a new image starts a fresh back-off.
 */
function crashLoopBackOff(ctx: SyncContext, pod: Pod, c: Container, s: StartScope): number | undefined {
  const exited = s.status.containers.find((x) => x.name === c.name && x.phase === 'exited');
  if (!exited) return undefined;
  const key = crashBackoffKey(pod, c);
  const wait = crashBackoffRemaining(ctx.crashBackoff, key, exited.finishedAtNs);
  if (wait <= 0) return undefined;
  const podDesc = `${pod.metadata!.name}_${pod.metadata!.namespace}(${pod.metadata!.uid})`;
  const message = `back-off ${formatDuration(ctx.crashBackoff.get(key))} restarting failed container=${c.name} pod=${podDesc}`;
  s.waiting.set(c.name, { reason: 'CrashLoopBackOff', message });
  const event = `Back-off restarting failed container ${c.name} in pod ${podDesc}`;
  ctx.events.event(podRef(pod, containerFieldPath(pod, c.name)), 'Warning', 'BackOff', event);
  return wait;
}

/**
 * ms left of the container's crash back-off since it finished; when none, arms the next (doubled)
 * one, as upstream's doBackOff (IsInBackOffSince, else Next). Stale entries (an old image's key)
 * are dropped first, as upstream's HandlePodCleanups runs Backoff.GC, so the map stays bounded.
 */
function crashBackoffRemaining(backoff: CrashBackoff, key: string, finishedNs?: string): number {
  backoff.gc();
  const finished = finishedNs ? Number(BigInt(finishedNs) / 1_000_000n) : Date.now();
  if (backoff.isInBackOffSince(key, finished)) return Math.max(1, finished + backoff.get(key) - Date.now());
  backoff.next(key, finished);
  return 0;
}

type Pulled = Extract<PullResult, { imageRef: string }> & { imageVolumes: ReturnType<typeof containerImageVolumes>['specs'] };

/**
 * The image volumes it mounts, then its own image: a failed pull of either leaves it waiting
 * with the pull's reason and an "Error: <reason>" event, as upstream's toKubeContainerImageVolumes
 * and startContainer. Returns when to look again if it waits.
 */
async function pullImages(ctx: SyncContext, pod: Pod, c: Container, s: StartScope): Promise<Pulled | number> {
  const fieldPath = containerFieldPath(pod, c.name);
  const volumeImages = containerImageVolumes(c, await s.imageVolumes());
  if (volumeImages.failed) {
    for (const message of volumeImages.events) ctx.events.event(podRef(pod, fieldPath), 'Warning', 'Failed', message);
    s.waiting.set(c.name, volumeImages.failed);
    return pullRetryMs(volumeImages.failed);
  }
  const onEvent = (e: ImageEvent) => ctx.events.event(podRef(pod, e.onPod ? undefined : fieldPath), e.type, e.reason, e.message);
  const pulled = await ctx.images.ensure(c, `${pod.metadata!.uid}/${c.name}`, onEvent, pod, s.signal);
  if (pulled.waiting) {
    ctx.events.event(podRef(pod, fieldPath), 'Warning', 'Failed', `Error: ${pulled.waiting.reason}`);
    s.waiting.set(c.name, pulled.waiting);
    return pullRetryMs(pulled.waiting);
  }
  return { ...pulled, imageVolumes: volumeImages.specs };
}

type Configured = { attempt: number; inputs: ContainerInputs };

/**
 * Upstream's generateContainerConfig: the restart count, the environment and expanded command,
 * the mounts, the security context against the image's user, the devices. What cannot be made
 * leaves the container waiting (configError); returns when to look again then.
 */
async function configure(ctx: SyncContext, pod: Pod, c: Container, s: StartScope, pulled: Pulled): Promise<Configured | number> {
  // A container the runtime has no instance of (all removed: RestartAllContainers, or lost) goes
  // on counting from its log files, as upstream's calcRestartCountByLogDir.
  const prev = latest(s.status, c.name);
  const attempt = prev ? prev.attempt + 1 : restartCountFromLogs(ctx, pod, c.name, s.sbConfig);
  // A missing ConfigMap, Secret or key leaves the container waiting, and it is tried again.
  const resolved = await environment(ctx, pod, c, s);
  if ('error' in resolved) return configError(ctx, pod, c.name, s.waiting, resolved.error);
  // Volume mounts, /etc/hosts and the termination message file (src/volumes), as upstream's makeMounts.
  let mounts: Awaited<ReturnType<NonNullable<SyncContext['mounts']>['containerMounts']>> | undefined;
  let volumeDevices: ReturnType<NonNullable<SyncContext['mounts']>['containerDevices']> | undefined;
  try {
    mounts = await ctx.mounts?.containerMounts(pod, c, {
      podIPs: sortPodIPs(s.status.sandboxes.find((x) => x.id === s.sandboxId)?.ips ?? [], ctx.node.nodeIPs ?? []),
      clusterDomain: ctx.node.clusterDomain,
      hostnameOverride: ctx.node.hostnameOverride,
      env: resolved.env,
      imageVolumes: pulled.imageVolumes,
    });
    // recursiveReadOnly against what the pod's runtime handler supports (src/runtime/recursive-read-only.ts).
    if (requestsRecursiveReadOnly(c)) mounts = withRecursiveReadOnly(c, mounts, await supportsRecursiveReadOnly(ctx, pod));
    volumeDevices = ctx.mounts?.containerDevices(pod, c);
  } catch (e) {
    return configError(ctx, pod, c.name, s.waiting, (e as Error).message, (e as Error).cause);
  }
  // runAsNonRoot against the image's user, and a usable seccomp profile.
  const insecure = securityContextError(pod, c, pulled.user, ctx.node);
  if (insecure) return configError(ctx, pod, c.name, s.waiting, insecure);
  // The device plugins' Allocate (and PreStartContainer) for the container's devices, as upstream's GetDeviceRunContainerOptions.
  let devices: DeviceRunOptions | undefined;
  try {
    devices = await ctx.devices?.containerOptions(pod, c);
  } catch (e) {
    return configError(ctx, pod, c.name, s.waiting, (e as Error).message);
  }
  const inputs: ContainerInputs = {
    ...resolved,
    mounts,
    volumeDevices,
    imageUser: pulled.user,
    security: ctx.node,
    memoryCapacityBytes: ctx.node.memoryCapacity?.(),
    swap: ctx.node.swap,
    singleProcessOOMKill: ctx.node.singleProcessOOMKill,
    cfs: ctx.node.cfs,
    cpusetCpus: ctx.node.cpusetFor?.(pod, c),
    cpusetMems: ctx.node.cpusetMemsFor?.(pod, c),
    hugePageSizes: ctx.node.hugePageSizes,
    devices,
    // The same user namespace as the sandbox's (upstream's NamespacesForPod again).
    userNamespace: s.sbConfig.linux?.securityContext?.namespaceOptions?.usernsOptions ?? undefined,
  };
  return { attempt, inputs };
}

/** CreateContainer, StartContainer (with their events), then the postStart hook; returns when to look again if it failed. */
async function createAndStart(ctx: SyncContext, pod: Pod, c: Container, s: StartScope, { attempt, inputs }: Configured) {
  const name = c.name;
  const fieldPath = containerFieldPath(pod, name);
  let containerId: string | undefined;
  const type = containerType(pod, name);
  ctx.observe.container?.(type);
  try {
    const config = containerConfig(pod, c, attempt, inputs);
    ({ containerId } = await ctx.cri.createContainer({ podSandboxId: s.sandboxId, config, sandboxConfig: s.sbConfig }));
    ctx.resizer.noteActuated(pod.metadata!.uid!, containerId, effectiveResources(c.resources, podSpecResources(pod)));
    // Upstream's words (the container's name is in the event's fieldPath).
    ctx.events.event(podRef(pod, fieldPath), 'Normal', 'Created', 'Container created');
    await ctx.cri.startContainer({ containerId });
    ctx.events.event(podRef(pod, fieldPath), 'Normal', 'Started', 'Container started');
    ctx.log.info('Started container', { ...logRef(pod), container: name, containerID: containerId, attempt });
    linkLog(ctx, pod, name, containerId, `${s.sbConfig.logDirectory}/${config.logPath}`);
  } catch (e) {
    ctx.observe.container?.(type, e);
    // Upstream's startContainer: the runtime's status message alone, in the event and the waiting state.
    const message = statusMessage(e);
    s.waiting.set(name, { reason: containerId ? 'RunContainerError' : 'CreateContainerError', message });
    ctx.events.event(podRef(pod, fieldPath), 'Warning', 'Failed', `Error: ${message}`);
    return REQUEUE_ERROR_MS;
  }
  const postStart = c.lifecycle?.postStart;
  if (!postStart) return undefined;
  const target = { pod, container: c, containerId, podIP: s.status.sandboxes[0]?.ip };
  // The sync's signal: a pod being deleted ends a postStart sleep early, as upstream's SyncPod context does.
  const failed = await runHook(ctx, target, postStart, podGraceSeconds(pod), s.signal);
  if (!failed) return undefined;
  // As upstream's startContainer: the hook's message in the log and the waiting state, not in the
  // event (hooks.ts); then the container is killed as any other (killContainer: a Killing event,
  // its preStop hook, the pod's grace period) and starts again after a back-off.
  ctx.log.error('Failed to execute PostStartHook', { ...logRef(pod), containerName: name, containerID: containerId, err: failed });
  ctx.events.event(podRef(pod, fieldPath), 'Warning', 'FailedPostStartHook', 'PostStartHook failed');
  // A sync cancelled for the pod's termination leaves the kill to it (upstream's cancelled
  // context fails this kill at once).
  const deadline = Date.now() + podGraceSeconds(pod) * 1000;
  if (!s.signal?.aborted)
    await killContainer(ctx, pod, { id: containerId, name, phase: 'running' }, target.podIP, deadline, 'FailedPostStartHook');
  s.waiting.set(name, { reason: 'PostStartHookError', message: failed });
  return REQUEUE_ERROR_MS;
}

/**
 * A container whose config cannot be made (upstream's generateContainerConfig failing: a missing
 * ConfigMap or Secret, a volume mount, runAsNonRoot) waits in CreateContainerConfigError with a
 * Failed event, and is tried again later; upstream's SyncPod logs every such start failure.
 */
function configError(ctx: SyncContext, pod: Pod, name: string, waiting: Map<string, Waiting>, message: string, cause?: unknown): number {
  waiting.set(name, { reason: 'CreateContainerConfigError', message });
  ctx.events.event(podRef(pod, containerFieldPath(pod, name)), 'Warning', 'Failed', `Error: ${message}`);
  // (The cause, for the node's operator: the pod's status keeps upstream's words, which name no host path.)
  const detail = cause instanceof Error ? { cause: cause.message } : {};
  ctx.log.info('Cannot configure container', {
    ...logRef(pod),
    container: name,
    reason: 'CreateContainerConfigError',
    err: message,
    ...detail,
  });
  return REQUEUE_ERROR_MS;
}

/** makeEnvironment's inputs: objects from the apiserver, the pod's IPs from its sandbox, the node's IP. */
async function environment(ctx: SyncContext, pod: Pod, c: Container, s: StartScope) {
  const hostIPs = ctx.node.nodeIPs ?? [];
  const ips = sortPodIPs(s.status.sandboxes.find((x) => x.id === s.sandboxId)?.ips ?? [], hostIPs);
  // A host-network pod's IPs are the node's, as upstream's pod status shows them.
  const podIPs = ips.length ? ips : pod.spec?.hostNetwork ? hostIPs : [];
  return containerEnvironment(pod, c, { ...(await s.envReads(pod, c)), podIPs, hostIPs });
}

function restartCountFromLogs(ctx: SyncContext, pod: Pod, name: string, sbConfig: PodSandboxConfig): number {
  const dir = `${sbConfig.logDirectory}/${name}`;
  try {
    return calcRestartCountByLogDir(dir);
  } catch (e) {
    ctx.log.info('Cannot calculate restartCount from the log directory', { ...logRef(pod), logDir: dir, err: e });
    return 0;
  }
}
