// The node start-up SLI: how long from boot to the kubelet, to its first registration attempt, to
// the Node it created, to that Node's first Ready status. Upstream's basicNodeStartupLatencyTracker
// (pkg/kubelet/util/node_startup_latency_tracker.go): each phase is set once a run, and only by a
// kubelet that created its Node (a restart that finds its Node reports nothing, as upstream).

/** The phases in seconds, as the kubelet_node_startup_* gauges show them. */
export interface NodeStartupDurations {
  /** Boot to the kubelet's start (absent when the boot time is unknown). */
  preKubelet?: number;
  /** The kubelet's start to its first attempt to register. */
  preRegistration: number;
  /** The first attempt to the Node created. */
  registration: number;
}
export interface NodeReadyDurations {
  /** The Node created to its first status patch that says Ready. */
  postRegistration: number;
  /** Boot to that status (absent when the boot time is unknown). */
  total?: number;
}

export interface NodeStartupTracker {
  /** registerWithAPIServer begins: the first call is the one that counts. */
  attemptRegister(): void;
  /** The apiserver created the Node (not: it existed already). */
  registeredNew(): void;
  /** A status patch came back with Ready=True. */
  ready(): void;
}

export interface NodeStartupObserver {
  registered(d: NodeStartupDurations): void;
  ready(d: NodeReadyDurations): void;
}

export function nodeStartupTracker(
  o: { bootMs?: number; kubeletStartMs: number; now?: () => number },
  observe: NodeStartupObserver,
): NodeStartupTracker {
  const now = o.now ?? Date.now;
  let attemptMs: number | undefined;
  let registeredMs: number | undefined;
  let readyMs: number | undefined;
  const s = (ms: number) => ms / 1000;
  return {
    attemptRegister() {
      attemptMs ??= now();
    },
    registeredNew() {
      if (attemptMs === undefined || registeredMs !== undefined) return;
      registeredMs = now();
      observe.registered({
        preKubelet: o.bootMs === undefined ? undefined : s(o.kubeletStartMs - o.bootMs),
        preRegistration: s(attemptMs - o.kubeletStartMs),
        registration: s(registeredMs - attemptMs),
      });
    },
    ready() {
      if (registeredMs === undefined || readyMs !== undefined) return;
      readyMs = now();
      observe.ready({ postRegistration: s(readyMs - registeredMs), total: o.bootMs === undefined ? undefined : s(readyMs - o.bootMs) });
    },
  };
}
