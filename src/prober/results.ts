// The results cache: the published state of each probe of each container instance,
// read by the pod's status (ready, started) and by computePodActions (liveness, startup).
// A change that matters to the pod is reported, so its worker syncs it again.
import type { ProbeType, Result } from './state.ts';

interface Entry {
  uid: string;
  results: Partial<Record<ProbeType, Result>>;
}

export class ProbeResults {
  readonly #byContainer = new Map<string, Entry>();
  readonly #onChange: (uid: string, containerId: string, type: ProbeType, result: Result) => void;

  constructor(onChange: (uid: string, containerId: string, type: ProbeType, result: Result) => void) {
    this.#onChange = onChange;
  }

  /** initial: the worker's starting value, which the sync that started it already accounts for. */
  set(uid: string, containerId: string, type: ProbeType, result: Result, initial = false): void {
    let e = this.#byContainer.get(containerId);
    if (!e) this.#byContainer.set(containerId, (e = { uid, results: {} }));
    if (e.results[type] === result) return;
    e.results[type] = result;
    // As upstream's sync loop: readiness and startup changes show in the status; liveness only matters when it fails.
    if (!initial && (type !== 'Liveness' || result === 'Failure')) this.#onChange(uid, containerId, type, result);
  }

  get(containerId: string, type: ProbeType): Result | undefined {
    return this.#byContainer.get(containerId)?.results[type];
  }

  remove(containerId: string, type: ProbeType): void {
    const e = this.#byContainer.get(containerId);
    if (!e) return;
    delete e.results[type];
    if (!Object.keys(e.results).length) this.#byContainer.delete(containerId);
  }

  /** For the pod's status: undefined fields when the container has no result for that probe. */
  status(containerId: string): { ready?: boolean; started?: boolean } {
    const r = this.#byContainer.get(containerId)?.results;
    return { ...(r?.Readiness ? { ready: r.Readiness === 'Success' } : {}), ...(r?.Startup ? { started: r.Startup === 'Success' } : {}) };
  }

  /** For computePodActions: the liveness and startup states. */
  health(containerId: string): { liveness?: Result; startup?: Result } {
    const r = this.#byContainer.get(containerId)?.results;
    return { ...(r?.Liveness ? { liveness: r.Liveness } : {}), ...(r?.Startup ? { startup: r.Startup } : {}) };
  }
}
