// When a pod's sync looks at it again, by what it waits on: every delay in one place, so that
// they stay consistent with each other and with upstream's pod workers (pod_workers.go's
// completeWork: a failed sync is tried again after backOffPeriod, a transient one after 1 s).
import type { Waiting } from '../container/types.ts';

/**
 * At once: RestartAllContainers' two syncs and the status between them; and the sync after one
 * that started a sidecar, which the next init or app container waits for. Upstream's generic
 * PLEG sees that start within its 1 s relist and wakes the pod; here the relist runs every 10 s
 * while the runtime's event stream is up, and starts (the kubelet's own doing) send no event
 * that relists, so the pod's app containers waited up to 10 s behind every sidecar.
 */
export const REQUEUE_NOW_MS = 0;

/**
 * The runtime's pod network is not ready: upstream's backOffOnTransientErrorPeriod (1 s), as
 * its SyncPod's NetworkNotReady error is transient; a CNI config usually shows within seconds.
 */
export const REQUEUE_NETWORK_MS = 1000;

/**
 * An image pull failed or backs off: the puller keeps its own back-off (upstream's
 * imageBackOffPeriod), so look soon, when the pull may be tried or the back-off ends.
 */
export const REQUEUE_PULL_FAILED_MS = 1000;

/** RunPodSandbox failed: sooner than backOffPeriod, since CNI setup fails while a plugin starts. */
export const REQUEUE_SANDBOX_MS = 2000;

/**
 * Upstream's backOffPeriod (kubelet.go, 10 s): a sync step failed (the sandbox config, DRA,
 * a container's config, creation or start, its postStart hook) or an image waits otherwise.
 */
export const REQUEUE_ERROR_MS = 10_000;

/**
 * A resize deferred or in progress is looked at again at least this often: upstream retries
 * deferred resizes when resources free up; a timer bounds it here (src/resize).
 */
export const REQUEUE_RESIZE_MS = 10_000;

/** When to look again at a container waiting on an image: soon while a pull fails or backs off. */
export const pullRetryMs = (w: Waiting) =>
  w.reason === 'ErrImagePull' || w.reason === 'ImagePullBackOff' ? REQUEUE_PULL_FAILED_MS : REQUEUE_ERROR_MS;

/** A pod with activeDeadlineSeconds syncs again just past it, so that the sync finds it exceeded (not a few ms early). */
export const REQUEUE_PAST_DEADLINE_MS = 10;
