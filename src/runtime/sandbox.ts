// A pod's sandbox: its config (upstream's generatePodSandboxConfig, with the pod's user
// namespace) and its creation (createPodSandbox, kuberuntime_sandbox.go), with what upstream's
// SyncPod does just before it: the network checked, the DRA claims prepared, the pod cgroup.
import { mkdirSync } from 'node:fs';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { podRef } from '../events/recorder.ts';
import { REQUEUE_ERROR_MS, REQUEUE_NETWORK_MS, REQUEUE_SANDBOX_MS } from './requeue.ts';
import { sandboxConfig, type PodSandboxConfig } from './pod-config.ts';
import type { LogRef } from '../podutil/podutil.ts';
import type { SyncContext } from './sync-context.ts';
import { goErrorText } from '../cri/error.ts';

/** Why a sandbox could not be had: when to look again, and whether the runtime changed meanwhile. */
export interface SandboxFailure {
  requeueAfterMs: number;
  changed?: boolean;
}

/**
 * Upstream's generatePodSandboxConfig, with a hostUsers: false pod's IDs (NamespacesForPod) or
 * the refusal of its handler or of a full range; undefined when it fails: createPodSandbox
 * fails on it, a FailedCreatePodSandBox event, and the pod stays Pending.
 */
export async function podSandboxConfig(
  ctx: SyncContext,
  pod: Pod,
  attempt: number,
  userNamespaced: boolean,
  ref: LogRef,
): Promise<PodSandboxConfig | undefined> {
  try {
    const userns = await ctx.userns?.forPod(pod, async () => ({
      handler: pod.spec?.runtimeClassName ? await ctx.runtimeHandler(pod.spec.runtimeClassName) : '',
      handlers: await ctx.runtimeState.list(),
    }));
    return sandboxConfig(pod, attempt, ctx.node, userns);
  } catch (e) {
    if (userNamespaced) ctx.observe.userNamespacedPod?.(true);
    ctx.events.event(podRef(pod), 'Warning', 'FailedCreatePodSandBox', `Failed to create pod sandbox: ${(e as Error).message}`);
    ctx.log.error('Failed to generate sandbox config for pod', { ...ref, err: e });
    return undefined;
  }
}

/**
 * A new sandbox for the pod, as upstream's SyncPod step 4: not while the runtime's pod network
 * is not ready (a sandbox that fails then keeps its name reserved in containerd); the pod's
 * ResourceClaims prepared (PrepareDynamicResources); its log directory and cgroup made; then
 * RunPodSandbox with the RuntimeClass's handler. Returns the sandbox's ID, or why not.
 */
export async function createSandbox(
  ctx: SyncContext,
  pod: Pod,
  config: PodSandboxConfig,
  attempt: number,
  userNamespaced: boolean,
  ref: LogRef,
): Promise<{ id: string } | SandboxFailure> {
  const notReady = pod.spec?.hostNetwork ? undefined : await ctx.runtimeState.networkError();
  if (notReady) {
    ctx.events.event(podRef(pod), 'Warning', 'NetworkNotReady', `network is not ready: ${notReady}`);
    return { requeueAfterMs: REQUEUE_NETWORK_MS };
  }
  try {
    await ctx.claims?.prepareResources(pod);
  } catch (e) {
    const message = `Failed to prepare dynamic resources: ${(e as Error).message}`;
    ctx.events.event(podRef(pod), 'Warning', 'FailedPrepareDynamicResources', message);
    ctx.log.error('Failed to prepare dynamic resources', { ...ref, err: e });
    return { requeueAfterMs: REQUEUE_ERROR_MS };
  }
  mkdirSync(config.logDirectory!, { recursive: true });
  await ctx.podLevel.ensurePodCgroup(pod);
  ctx.resizer.notePodActuated(pod);
  let runtimeHandler = '';
  let started: number | undefined;
  try {
    // A pod asking for a RuntimeClass runs with its handler or not at all: never silently with the default one.
    if (pod.spec?.runtimeClassName) runtimeHandler = await ctx.runtimeHandler(pod.spec.runtimeClassName);
    started = performance.now();
    const id = (await ctx.cri.runPodSandbox({ config, runtimeHandler })).podSandboxId;
    ctx.observe.sandbox?.(runtimeHandler, (performance.now() - started) / 1000);
    ctx.log.info('Created pod sandbox', { ...ref, sandboxID: id, attempt, runtimeHandler });
    return { id };
  } catch (e) {
    ctx.observe.sandbox?.(runtimeHandler, started === undefined ? undefined : (performance.now() - started) / 1000, e);
    if (userNamespaced) ctx.observe.userNamespacedPod?.(true);
    // Upstream's SyncPod prints RunPodSandbox's error with %v: grpc-go's "rpc error: code = ... desc = ...".
    ctx.events.event(podRef(pod), 'Warning', 'FailedCreatePodSandBox', `Failed to create pod sandbox: ${goErrorText(e)}`);
    ctx.log.error('Failed to create pod sandbox', { ...ref, err: e });
    return { requeueAfterMs: REQUEUE_SANDBOX_MS, changed: true };
  }
}
