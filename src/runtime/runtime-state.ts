// What the runtime's probes last said, for the pod syncs: upstream's runtimeState
// (pkg/kubelet/runtime.go), which updateRuntimeUp sets at start and on every runtime probe.
// - The runtime's handlers and their features (setRuntimeHandlers): a container's recursive
//   read-only check (runtimeClassSupportsRecursiveReadOnlyMounts) and a hostUsers: false pod's
//   user namespace (HandlerSupportsUserNamespaces, src/userns) read them here.
// - Whether the pod network is ready (setNetworkState, networkErrors): a sandbox is not created
//   while it is not (SyncPod's check), without a Status call of its own for each pod.
import type { Pod } from 'kubernetes-types/core/v1.js';
import { type RuntimeHandlerInfo, runtimeHandlerSupportsRecursiveReadOnlyMounts } from './recursive-read-only.ts';
import type { Logger } from '../log/log.ts';
import { logRef } from '../podutil/podutil.ts';

/** The part of a CRI Status answer the state is made of. */
export interface RuntimeStatusAnswer {
  runtimeHandlers?: RuntimeHandlerInfo[] | null;
  status?: { conditions: { type: string; status: boolean; reason: string; message: string }[] } | null;
}

/** Pure: the network's error from a Status answer (upstream's networkErrors text), '' when NetworkReady is true. */
function networkErrorOf(st: RuntimeStatusAnswer): string {
  const net = st.status?.conditions.find((c) => c.type === 'NetworkReady');
  return net?.status
    ? ''
    : `container runtime network not ready: NetworkReady=false reason:${net?.reason ?? ''} message:${net?.message ?? ''}`;
}

export class RuntimeState {
  #handlers: readonly RuntimeHandlerInfo[] | undefined;
  /** The last probe's answer about the network: undefined before any, '' when ready. */
  #network: string | undefined;
  readonly #status: () => Promise<RuntimeStatusAnswer>;

  /** status: CRI Status, read when a sync asks before any probe has answered. */
  constructor(status: () => Promise<RuntimeStatusAnswer>) {
    this.#status = status;
  }

  /**
   * What a runtime probe's Status said, as upstream's updateRuntimeUp sets it: the network's state
   * from any answer, the handlers only from a runtime that is ready.
   */
  probed(st: RuntimeStatusAnswer, runtimeReady: boolean): void {
    this.#network = networkErrorOf(st);
    if (runtimeReady) this.set(st.runtimeHandlers);
  }

  /** What CRI Status listed (upstream's setRuntimeHandlers, from updateRuntimeUp). */
  set(handlers: readonly RuntimeHandlerInfo[] | null | undefined): void {
    this.#handlers = handlers ?? [];
  }

  /** The handlers last listed, undefined before the first list. */
  known(): readonly RuntimeHandlerInfo[] | undefined {
    return this.#handlers;
  }

  /** The handlers last listed; a failed first read rejects and is tried again on the next call. */
  async list(): Promise<readonly RuntimeHandlerInfo[]> {
    if (!this.#handlers) this.set((await this.#status()).runtimeHandlers);
    return this.#handlers ?? [];
  }

  /**
   * Why the pod network is not ready, undefined when it is (upstream's runtimeState.networkErrors).
   * Ready as the last probe saw it answers at once; not ready, or not probed yet, asks Status now,
   * so that a sandbox waits no probe period (10 s) once the network has come up.
   */
  async networkError(): Promise<string | undefined> {
    if (this.#network === '') return undefined;
    this.#network = networkErrorOf(await this.#status());
    return this.#network || undefined;
  }
}

/**
 * Upstream's runtimeClassSupportsRecursiveReadOnlyMounts: the pod's handler as CRI Status last listed it.
 * Asked only for containers that request it; a failed lookup is unsupported, as upstream logs and goes on.
 */
export async function supportsRecursiveReadOnly(
  ctx: { runtimeHandler(runtimeClassName: string): Promise<string>; runtimeState: RuntimeState; log: Logger },
  pod: Pod,
): Promise<boolean> {
  try {
    const handler = pod.spec?.runtimeClassName ? await ctx.runtimeHandler(pod.spec.runtimeClassName) : '';
    return runtimeHandlerSupportsRecursiveReadOnlyMounts(handler, await ctx.runtimeState.list());
  } catch (e) {
    ctx.log.warn('Cannot tell whether the runtime handler supports recursive read-only mounts', { ...logRef(pod), err: e });
    return false;
  }
}
