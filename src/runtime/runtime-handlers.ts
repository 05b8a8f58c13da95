// The runtime's handlers and their features as CRI Status last listed them: upstream's
// runtimeState.setRuntimeHandlers and runtimeHandlers (pkg/kubelet/runtime.go), which
// updateRuntimeUp sets at start and on every runtime probe. A container's recursive read-only
// check (runtimeClassSupportsRecursiveReadOnlyMounts) and a hostUsers: false pod's user namespace
// (HandlerSupportsUserNamespaces, src/userns) read them here instead of calling Status.
import type { Pod } from 'kubernetes-types/core/v1.js';
import { type RuntimeHandlerInfo, runtimeHandlerSupportsRecursiveReadOnlyMounts } from './recursive-read-only.ts';
import type { Logger } from '../log/log.ts';
import { logRef } from '../podutil/podutil.ts';

export class RuntimeHandlers {
  #handlers: readonly RuntimeHandlerInfo[] | undefined;
  readonly #status: () => Promise<{ runtimeHandlers?: RuntimeHandlerInfo[] | null }>;

  /** status: CRI Status, read once if a container asks before any probe has listed the handlers. */
  constructor(status: () => Promise<{ runtimeHandlers?: RuntimeHandlerInfo[] | null }>) {
    this.#status = status;
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
}

/**
 * Upstream's runtimeClassSupportsRecursiveReadOnlyMounts: the pod's handler as CRI Status last listed it.
 * Asked only for containers that request it; a failed lookup is unsupported, as upstream logs and goes on.
 */
export async function supportsRecursiveReadOnly(
  ctx: { runtimeHandler(runtimeClassName: string): Promise<string>; runtimeHandlers: RuntimeHandlers; log: Logger },
  pod: Pod,
): Promise<boolean> {
  try {
    const handler = pod.spec?.runtimeClassName ? await ctx.runtimeHandler(pod.spec.runtimeClassName) : '';
    return runtimeHandlerSupportsRecursiveReadOnlyMounts(handler, await ctx.runtimeHandlers.list());
  } catch (e) {
    ctx.log.warn('Cannot tell whether the runtime handler supports recursive read-only mounts', { ...logRef(pod), err: e });
    return false;
  }
}
