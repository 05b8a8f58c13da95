// computePodActions: what must change in the runtime to make a pod match its spec.
// Pure over (pod, runtime status); the sync executes the result. Mirrors upstream
// kuberuntime_manager.go's function of the same name, with init containers and
// sidecars (init containers with restartPolicy Always) as computeInitContainerActions.
import type { Container, Pod, ResourceRequirements } from 'kubernetes-types/core/v1.js';
import { type PodRuntimeStatus, type ContainerState, latest } from '../container/types.ts';
import { containerHash } from './hash.ts';
import { containerResize, effectiveResources } from '../resize/decide.ts';
import { podSpecResources } from '../resources/pod-resources.ts';
import { isSidecar } from '../podutil/podutil.ts';
import { containerShouldRestart, findMatchingRestartRule, shouldContainerBeRestarted } from './restart-policy.ts';

export interface PodActions {
  /** Stop what runs: everything before a new sandbox, or (without one) the sidecars of a pod that is done. */
  killPod: boolean;
  createSandbox: boolean;
  /** The sandbox to use, when kept. */
  sandboxId?: string;
  /** CRI attempt of the sandbox to create. */
  sandboxAttempt: number;
  /** Init containers to start, in spec order (a regular one only when all before it are done). */
  initContainersToStart: Start[];
  /** App containers to start, once the pod is initialized. */
  containersToStart: Start[];
  /** Ephemeral containers (kubectl debug) added since: each runs once, never restarted. */
  ephemeralContainersToStart: Start[];
  containersToKill: ContainerToKill[];
  /** In-place resize: running containers whose cgroup gets their allocated resources (CRI UpdateContainerResources). */
  containersToUpdate: Update[];
  /**
   * RestartAllContainers: every instance of every init and app container, killed if it runs and
   * removed, in this order; the containers whose exit triggered it last. Only then, nothing else.
   */
  containersToReset?: ContainerToReset[];
}
export interface ContainerToReset {
  id: string;
  name: string;
  /** It runs (or may): stop it first, without a grace period. */
  kill: boolean;
}
export interface Update {
  id: string;
  name: string;
  /** The allocated cpu and memory to apply (effective: pod-level limits for those the container does not set). */
  resources: ResourceRequirements;
  changed: ('cpu' | 'memory')[];
}
export interface Start {
  name: string;
  reason: string;
}
export interface ContainerToKill {
  id: string;
  name: string;
  reason: string;
  /** The Killing event's message, when it must say why (a failed probe); else "Stopping container X". */
  message?: string;
  /** The probe's terminationGracePeriodSeconds, which replaces the pod's for this kill. */
  gracePeriodSeconds?: number;
  /** The container restarts to get its new resources (resizePolicy RestartContainer). */
  resize?: boolean;
}

/**
 * What a running container instance runs with (cpu and memory, as API resources); undefined:
 * unknown, and nothing is resized. Absent: the pod's resources are never compared.
 */
export type ActualOf = (s: ContainerState) => ResourceRequirements | undefined;

/** What the prober knows of a running container instance (results of its liveness and startup probes). */
export interface ProbeHealth {
  liveness?: 'Success' | 'Failure' | 'Unknown';
  startup?: 'Success' | 'Failure' | 'Unknown';
}
/** Looks up an instance's probe states by container ID; absent: the pod is not probed. */
export type HealthOf = (containerId: string) => ProbeHealth | undefined;

/** Whether a container that exited should run again: its own restartPolicy and rules, else the pod's (restart-policy.ts). */
export function shouldRestart(pod: Pod, c: ContainerState): boolean {
  const spec = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].find((x) => x.name === c.name);
  return containerShouldRestart(spec ?? { name: c.name }, pod, c.exitCode ?? 0);
}

/**
 * Upstream's runOnce in computePodActions: a container that succeeded does not run again in a new
 * sandbox when its policy (its own, else the pod's) is OnFailure.
 */
const runOnce = (pod: Pod, c: Container) => (c.restartPolicy ?? pod.spec?.restartPolicy) === 'OnFailure';

const alive = (s: ContainerState | undefined) => s?.phase === 'running' || s?.phase === 'unknown';

/**
 * pod: with its allocated resources (src/resize), which running containers must get.
 * restartAllContainers: the pod restarts all its containers in place (restart-policy.ts allContainersRestarting).
 */
export function computePodActions(
  pod: Pod,
  status: PodRuntimeStatus,
  health?: HealthOf,
  actual?: ActualOf,
  restartAllContainers = false,
): PodActions {
  const spec = pod.spec?.containers ?? [];
  const inits = pod.spec?.initContainers ?? [];
  const sandbox = status.sandboxes[0];
  const actions: PodActions = {
    killPod: false,
    createSandbox: false,
    sandboxId: sandbox?.id,
    sandboxAttempt: 0,
    initContainersToStart: [],
    containersToStart: [],
    ephemeralContainersToStart: [],
    containersToKill: [],
    containersToUpdate: [],
  };
  const killAll = () => {
    actions.killPod = !!sandbox?.ready || status.containers.some((c) => alive(c));
  };

  // As upstream: the old containers go first, all of them, app containers before init
  // containers and the ones that triggered it last; the next sync starts from a clean slate.
  if (restartAllContainers) {
    actions.containersToReset = containersToReset(pod, status);
    return actions;
  }

  const sandboxOK = sandbox?.ready && (pod.spec?.hostNetwork || !!sandbox.ip);
  if (!sandboxOK) {
    // A Never pod that ran its containers does not get a new sandbox: it is done.
    if (sandbox && pod.spec?.restartPolicy === 'Never' && status.containers.length) {
      killAll();
      return actions;
    }
    // Neither does a pod whose containers all succeeded and run once (OnFailure).
    const succeeded = (c: Container) => {
      const s = latest(status, c.name);
      return s?.phase === 'exited' && s.exitCode === 0;
    };
    const toStart = spec.filter((c) => !(runOnce(pod, c) && succeeded(c)));
    if (sandbox && spec.length > 0 && toStart.length === 0) {
      killAll();
      return actions;
    }
    actions.killPod = !!sandbox;
    actions.createSandbox = true;
    actions.sandboxId = undefined;
    // Names are name_namespace_uid_attempt and stay reserved while a sandbox exists: never reuse one.
    actions.sandboxAttempt = sandbox ? Math.max(...status.sandboxes.map((s) => s.attempt)) + 1 : 0;
    const reason = sandbox ? 'pod sandbox changed' : 'not started yet';
    // Initialization starts over in a new sandbox.
    if (inits.length) {
      actions.initContainersToStart.push({ name: inits[0]!.name, reason });
      return actions;
    }
    for (const c of toStart) actions.containersToStart.push({ name: c.name, reason });
    return actions;
  }

  // As upstream, ephemeral containers start in a running sandbox whatever the pod's other
  // containers do, and only once: one that exited stays exited.
  for (const c of pod.spec?.ephemeralContainers ?? []) {
    if (!latest(status, c.name)) actions.ephemeralContainersToStart.push({ name: c.name, reason: 'not started yet' });
  }
  if (!initContainerActions(pod, status, actions, health, actual)) return actions;

  let keep = 0;
  for (const c of spec) {
    const s = latest(status, c.name);
    if (!s) {
      actions.containersToStart.push({ name: c.name, reason: 'not started yet' });
      continue;
    }
    if (alive(s)) {
      if (s.hash && s.hash !== containerHash(c)) {
        actions.containersToKill.push({ id: s.id, name: c.name, reason: 'Container spec hash changed' });
        actions.containersToStart.push({ name: c.name, reason: 'spec changed' });
      } else {
        const failed = failedProbe(c, s, health);
        if (!failed) {
          if (resize(pod, c, s, actions, actual) === 'restart')
            actions.containersToStart.push({ name: c.name, reason: 'resize requires restart' });
          else keep++;
          continue;
        }
        // As upstream: a container that failed liveness or startup is killed, and started
        // again unless its restartPolicy (its own, else the pod's) is Never; rules need an exit code.
        const restart = (c.restartPolicy ?? pod.spec?.restartPolicy ?? 'Always') !== 'Never';
        const message = `Container ${c.name} failed ${failed.toLowerCase()} probe${restart ? ', will be restarted' : ''}`;
        actions.containersToKill.push({ id: s.id, name: c.name, reason: message, message, ...probeGrace(c, failed) });
        if (restart) actions.containersToStart.push({ name: c.name, reason: message });
      }
      continue;
    }
    // created-but-never-started or exited: run a new instance if the policy says so
    if (shouldContainerBeRestarted(c, pod, status))
      actions.containersToStart.push({ name: c.name, reason: s.phase === 'created' ? 'never started' : 'restart' });
  }
  // Nothing runs and nothing will: the pod is done, and its sidecars must not keep it alive.
  if (keep === 0 && actions.containersToStart.length === 0) {
    killAll();
    actions.initContainersToStart = [];
    actions.ephemeralContainersToStart = [];
    actions.containersToKill = [];
    actions.containersToUpdate = [];
    return actions;
  }
  const known = new Set([...spec, ...inits, ...(pod.spec?.ephemeralContainers ?? [])].map((c) => c.name));
  for (const s of status.containers) {
    if (alive(s) && !known.has(s.name))
      actions.containersToKill.push({ id: s.id, name: s.name, reason: 'Container is not in the pod spec' });
  }
  return actions;
}

/**
 * Init container actions (upstream's computeInitContainerActions): regular init containers
 * run one at a time, each to success; a sidecar counts as done once it runs and is restarted
 * whenever it stops. Returns whether the pod is initialized.
 */
function initContainerActions(pod: Pod, status: PodRuntimeStatus, actions: PodActions, health?: HealthOf, actual?: ActualOf): boolean {
  const inits = pod.spec?.initContainers ?? [];
  if (!inits.length) return true;
  // An app container that was created or runs means initialization happened in this sandbox,
  // even if the init containers were garbage collected since.
  let initialized = (pod.spec?.containers ?? []).some((c) => {
    const s = latest(status, c.name);
    return s?.phase === 'created' || alive(s);
  });
  let previousDone = initialized;
  const starts: Start[] = [];
  const podRestartsOnFailure = (pod.spec?.restartPolicy ?? 'Always') !== 'Never';
  // Backwards: the last init container that ran says how far initialization got.
  for (let i = inits.length - 1; i >= 0; i--) {
    const c = inits[i]!;
    const s = latest(status, c.name);
    const last = i === inits.length - 1;
    if (!s) {
      if (previousDone && isSidecar(c)) starts.push({ name: c.name, reason: 'sidecar not running' });
      continue;
    }
    if (previousDone && !isSidecar(c)) continue; // done: only sidecars must keep running
    if (s.phase === 'created') {
      starts.push({ name: c.name, reason: 'never started' });
    } else if (s.phase === 'running' && !isSidecar(c)) {
      // The init container running now is resized in place too, or restarted when its
      // resizePolicy says so (InPlacePodVerticalScalingInitContainers, beta and on in 1.36).
      if (resize(pod, c, s, actions, actual) === 'restart') starts.push({ name: c.name, reason: 'resize requires restart' });
    } else if (s.phase === 'running') {
      // A sidecar with a startup probe counts as started only once it succeeded; one that
      // failed it (or its liveness probe) is restarted, as upstream's computeInitContainerActions.
      const startup = sidecarStartup(c, s, health);
      if (startup !== 'Success') {
        if (startup === 'Failure') {
          const message = `Init container ${c.name} failed startup probe`;
          actions.containersToKill.push({ id: s.id, name: c.name, reason: message, message, ...probeGrace(c, 'Startup') });
          starts.push({ name: c.name, reason: message });
        }
      } else {
        if (last) initialized = true;
        else if (!previousDone) starts.push({ name: inits[i + 1]!.name, reason: 'not started yet' });
        if (s.hash && s.hash !== containerHash(c)) {
          actions.containersToKill.push({ id: s.id, name: c.name, reason: `Init container ${c.name} definition changed` });
          starts.push({ name: c.name, reason: 'spec changed' });
        } else if (c.livenessProbe && health?.(s.id)?.liveness === 'Failure') {
          const message = `Init container ${c.name} failed liveness probe`;
          actions.containersToKill.push({ id: s.id, name: c.name, reason: message, message, ...probeGrace(c, 'Liveness') });
          starts.push({ name: c.name, reason: message });
        } else if (resize(pod, c, s, actions, actual) === 'restart') {
          starts.push({ name: c.name, reason: 'resize requires restart' });
        }
      }
    } else if (s.phase === 'exited') {
      if (isSidecar(c)) starts.push({ name: c.name, reason: 'restart' });
      else if (s.exitCode !== 0) {
        // A failed init container runs again if its policy and rules say so (else the pod's);
        // if not, the pod has failed.
        if (!shouldContainerBeRestarted(c, pod, status)) {
          actions.killPod = true;
          return false;
        }
        starts.push({ name: c.name, reason: 'restart' });
      } else if (last) initialized = true;
      else starts.push({ name: inits[i + 1]!.name, reason: 'not started yet' });
    } else {
      // unknown: make sure the old instance is gone before a new one starts. With no exit
      // code, only the restartPolicy (its own, else the pod's) decides, as upstream.
      const restartOnFailure = c.restartPolicy ? c.restartPolicy !== 'Never' : podRestartsOnFailure;
      if (!isSidecar(c) && !restartOnFailure) {
        actions.killPod = true;
        return false;
      }
      actions.containersToKill.push({
        id: s.id,
        name: c.name,
        reason: `Init container is in "unknown" state, try killing it before restart`,
      });
      starts.push({ name: c.name, reason: 'restart' });
    }
    previousDone = true;
  }
  if (!previousDone) starts.push({ name: inits[0]!.name, reason: 'not started yet' });
  actions.initContainersToStart = starts.reverse();
  return initialized;
}

/**
 * In-place resize of a running container (upstream's computePodResizeAction): an update of its
 * cgroup, or a kill when its resizePolicy asks for a restart (the caller starts it again). A
 * container without its own limits gets the pod's (spec.resources), so a pod-level resize
 * reaches it too.
 */
function resize(pod: Pod, c: Container, s: ContainerState, actions: PodActions, actual?: ActualOf): 'none' | 'update' | 'restart' {
  const now = s.phase === 'running' ? actual?.(s) : undefined;
  if (!now) return 'none';
  const podLevel = podSpecResources(pod);
  const r = containerResize(c, now, podLevel);
  if (r.action === 'none') return 'none';
  if (r.action === 'restart') {
    const message = `Container ${c.name} resize requires restart`;
    actions.containersToKill.push({ id: s.id, name: c.name, reason: message, message, resize: true });
    return 'restart';
  }
  actions.containersToUpdate.push({ id: s.id, name: c.name, resources: effectiveResources(c.resources, podLevel), changed: r.changed });
  return 'update';
}

/** Which probe a running container failed, if any (liveness first, as upstream). */
function failedProbe(c: Container, s: ContainerState, health?: HealthOf): 'Liveness' | 'Startup' | undefined {
  const h = health?.(s.id);
  if (c.livenessProbe && h?.liveness === 'Failure') return 'Liveness';
  if (c.startupProbe && h?.startup === 'Failure') return 'Startup';
  return undefined;
}

/** A sidecar's startup state: Success without a startup probe or without a prober; undefined while it has not run. */
function sidecarStartup(c: Container, s: ContainerState, health?: HealthOf): ProbeHealth['startup'] {
  if (!c.startupProbe || !health) return 'Success';
  return health(s.id)?.startup;
}

/** The probe-level terminationGracePeriodSeconds, which upstream uses when that probe kills. */
function probeGrace(c: Container, probe: 'Liveness' | 'Startup'): { gracePeriodSeconds?: number } {
  const g = (probe === 'Liveness' ? c.livenessProbe : c.startupProbe)?.terminationGracePeriodSeconds;
  return g !== undefined && g !== null ? { gracePeriodSeconds: g } : {};
}

/**
 * Upstream's getContainersToReset, for init and app containers alike: every instance (the old
 * ones too, so that the runtime holds none), with the instances whose exit matched a
 * RestartAllContainers rule apart; then ordered as upstream's computePodActions: app containers,
 * init containers, and the triggering app and init containers last.
 */
function containersToReset(pod: Pod, status: PodRuntimeStatus): ContainerToReset[] {
  const split = (containers: Container[]) => {
    const sources: ContainerToReset[] = [];
    const targets: ContainerToReset[] = [];
    for (const c of containers) {
      for (const s of status.containers.filter((x) => x.name === c.name)) {
        if (s.phase !== 'exited') targets.push({ id: s.id, name: c.name, kill: true });
        else if (findMatchingRestartRule(c, s.exitCode ?? 0)?.action === 'RestartAllContainers')
          sources.push({ id: s.id, name: c.name, kill: false });
        else targets.push({ id: s.id, name: c.name, kill: false });
      }
    }
    return { sources, targets };
  };
  const inits = split(pod.spec?.initContainers ?? []);
  const apps = split(pod.spec?.containers ?? []);
  return [...apps.targets, ...inits.targets, ...apps.sources, ...inits.sources];
}
