// Registers the Node and keeps its status: computed every nodeStatusUpdateFrequency,
// sent when it changed, when someone else changed a condition of it, or when
// nodeStatusReportFrequency has passed (the Lease is the heartbeat). A deleted Node is
// registered again. With registerNode: false (register false) nothing creates the Node, as
// upstream's syncNodeStatus skips registerWithAPIServer: the status goes to a Node someone else
// made, once it exists, and a missing one is an error of the status update, retried.
import type { Node, NodeAddress, NodeStatus, ContainerImage, Taint } from 'kubernetes-types/core/v1.js';
import { type ApiClient, isAlreadyExists, isNotFound } from '../apiserver/client.ts';
import { backoff, jittered, sleep } from '../backoff/backoff.ts';
import { reflector } from '../apiserver/reflector.ts';
import type { Logger } from '../log/log.ts';
import {
  conditionsOverwritten,
  CONTROLLER_MANAGED_ATTACH,
  nodeForRegistration,
  nodeStatus,
  nodeStatusEvents,
  type NodeEvent,
  nodeStatusPatch,
  statusChanged,
  type RuntimeHealth,
  type StatusInputs,
} from './status.ts';
import { apiPath } from '../apiserver/paths.ts';
import type { NodeStartupTracker } from './startup-latency.ts';

export interface NodeAgentOptions {
  nodeName: string;
  labels: Record<string, string>;
  taints: Taint[];
  updateEveryMs: number;
  reportEveryMs: number;
  /** Everything in StatusInputs that does not change while the kubelet runs. */
  staticInputs: Omit<
    StatusInputs,
    'runtime' | 'images' | 'now' | 'fs' | 'pressure' | 'devices' | 'volumesInUse' | 'shutdown' | 'existingAddresses'
  >;
  fsCapacity: () => number;
  /** The eviction manager's pressure conditions (MemoryPressure, DiskPressure, PIDPressure). */
  pressure?: () => string[];
  /** The node shutdown manager's problem for the Ready condition (src/nodeshutdown). */
  shutdown?: () => string | undefined;
  /** The device plugin resources' capacity and allocatable (src/devices). */
  devices?: () => StatusInputs['devices'];
  /** The volumes in use (src/volumes/persistent.ts), and whom to tell once a status carrying them was accepted. */
  volumes?: { inUse(): string[]; markReportedInUse(names: string[]): void };
  probeRuntime: () => Promise<{ health: RuntimeHealth; images: ContainerImage[] }>;
  /** The runtime's handlers as CRI Status last listed them (src/runtime/runtime-state.ts). */
  runtimeHandlers?: () => StatusInputs['runtimeHandlers'];
  onNode: (node: Node) => void;
  /** Records an event on the Node (nodeStatusEvents). */
  event?: (e: NodeEvent) => void;
  log: Logger;
  /** enableControllerAttachDetach (default true): the Node's controller-managed-attach-detach annotation, set or removed. */
  controllerAttachDetach?: boolean;
  /** registerNode: create the Node (and again when it is deleted); false leaves that to others. Default true. */
  register?: boolean;
  /** The node start-up SLI: told of the run's first registration and of the first Ready status. */
  startup?: NodeStartupTracker;
}

export interface NodeAgent {
  /** Computes the status now and sends it if it changed (e.g. right after the runtime recovers). */
  poke(): void;
  /** Reads the Node from the apiserver now, past the watch (upstream's getNodeAnyWay without its cache). */
  refresh(): Promise<void>;
  stop(): void;
}

export function nodeAgent(api: ApiClient, o: NodeAgentOptions): NodeAgent {
  const abort = new AbortController();
  const registers = o.register ?? true;
  const path = apiPath({ resource: 'nodes', name: o.nodeName });
  let lastSent: NodeStatus | undefined;
  let lastSentAt = 0;
  let lastComputed: NodeStatus | undefined;
  let wake: (() => void) | undefined;
  /** The Node's addresses as last seen from the apiserver (an external cloud controller sets them). */
  let existingAddresses: NodeAddress[] | undefined;
  /** The Node as the apiserver last showed it, which upstream's setters compare with. */
  let seenNode: Node | undefined;
  let lastUnschedulable = false;
  let rebooted = false;
  const onNode = (node: Node) => {
    existingAddresses = node.status?.addresses;
    seenNode = node;
    o.onNode(node);
  };

  // Only the run's first registration is the start-up SLI's: a Node deleted later and created
  // again is not a node starting (upstream registers once a run).
  let registeredOnce = false;
  async function register(): Promise<Node> {
    const startup = registeredOnce ? undefined : o.startup;
    registeredOnce = true;
    startup?.attemptRegister();
    const retry = backoff(100, 7000);
    const { cloud, nodeIPs } = o.staticInputs;
    const cmad = o.controllerAttachDetach ?? true;
    const want = nodeForRegistration(
      o.nodeName,
      o.staticInputs.host.architecture,
      o.labels,
      o.taints,
      cloud && { ...cloud, nodeIPs },
      cmad,
    );
    for (;;) {
      try {
        const node = await api.create<Node>(apiPath({ resource: 'nodes' }), want);
        startup?.registeredNew();
        o.log.info('Successfully registered node', { node: o.nodeName });
        return node;
      } catch (e) {
        if (isAlreadyExists(e)) {
          // A restart, or a Node created by someone else: adopt it, making sure our labels are on it
          // and the attach annotation says who attaches (reconcileCMADAnnotationWithExistingNode).
          const metadata = { labels: want.metadata!.labels, annotations: { [CONTROLLER_MANAGED_ATTACH]: cmad ? 'true' : null } };
          const node = await api.patch<Node>(path, { metadata }, 'merge').catch(() => undefined);
          if (node) {
            o.log.info('Node was previously registered', { node: o.nodeName });
            return node;
          }
        }
        const wait = retry.next();
        o.log.warn('Unable to register node with API server', { node: o.nodeName, err: e, retryInMs: wait });
        await sleep(wait, abort.signal);
        if (abort.signal.aborted) throw new Error('stopped');
      }
    }
  }

  async function syncStatus() {
    const { health, images } = await o.probeRuntime();
    const status = nodeStatus(
      {
        ...o.staticInputs,
        existingAddresses,
        fs: { capacityBytes: o.fsCapacity() },
        runtime: health,
        images,
        now: new Date(),
        pressure: o.pressure?.() ?? [],
        devices: o.devices?.(),
        volumesInUse: o.volumes?.inUse(),
        shutdown: o.shutdown?.(),
        runtimeHandlers: o.runtimeHandlers?.(),
      },
      lastComputed,
    );
    lastComputed = status;
    for (const e of nodeStatusEvents(
      o.nodeName,
      { status: seenNode?.status, unschedulable: seenNode?.spec?.unschedulable },
      status,
      lastUnschedulable,
    )) {
      // Upstream records one reboot a run (rebootEvent.Do).
      if (e.reason === 'Rebooted' && rebooted) continue;
      rebooted ||= e.reason === 'Rebooted';
      o.event?.(e);
    }
    lastUnschedulable = !!seenNode?.spec?.unschedulable;
    const due = Date.now() - lastSentAt >= o.reportEveryMs;
    if (!statusChanged(lastSent, status) && !due) return;
    try {
      const node = await api.patch<Node>(`${path}/status`, nodeStatusPatch(status), 'strategic');
      lastSent = status;
      lastSentAt = Date.now();
      if (status.volumesInUse) o.volumes?.markReportedInUse(status.volumesInUse);
      // upstream's patchNodeStatus: the Ready condition as the apiserver returned it.
      if (node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) o.startup?.ready();
      onNode(node);
    } catch (e) {
      // registerNode false: a missing Node is the status update's error, retried (upstream's updateNodeStatus).
      if (!isNotFound(e) || !registers) throw e;
      await reregister();
    }
  }

  // One watch on our Node: the podCIDR the controller-manager assigns arrives this way,
  // and a deleted Node is registered again at once.
  let reregistering = false;
  const reregister = async () => {
    if (reregistering || abort.signal.aborted || !registers) return;
    reregistering = true;
    o.log.warn('Node object is gone, registering it again', { node: o.nodeName });
    try {
      lastSent = undefined;
      onNode(await register());
    } catch {
      /* stopped */
    } finally {
      reregistering = false;
    }
  };
  // The Node as the apiserver shows it: a condition of ours overwritten there is sent again now.
  const seen = (node: Node) => {
    if (conditionsOverwritten(lastSent, node.status)) {
      lastSent = undefined;
      wake?.();
    }
    onNode(node);
  };
  let watch: { stop(): void } | undefined;
  // registerNode false: straight to the watch and the status loop; the Node arrives by the watch.
  (registers ? register() : Promise.resolve(undefined)).then(
    async (node) => {
      if (node) onNode(node);
      watch = reflector<Node>(
        api,
        apiPath({ resource: 'nodes' }, { fieldSelector: `metadata.name=${o.nodeName}` }),
        'node',
        {
          list: (items) => (items[0] ? seen(items[0]) : void reregister()),
          event: (type, n) => (type === 'DELETED' ? void reregister() : seen(n)),
        },
        o.log,
      );
      const retry = backoff(1000, o.updateEveryMs);
      while (!abort.signal.aborted) {
        let wait = jittered(o.updateEveryMs, 0.04);
        try {
          await syncStatus();
          retry.reset();
        } catch (e) {
          wait = retry.next();
          o.log.warn('Error updating node status, will retry', { node: o.nodeName, err: e, retryInMs: wait });
        }
        await new Promise<void>((r) => {
          wake = r;
          sleep(wait, abort.signal).then(r);
        });
      }
    },
    () => {},
  );
  return {
    poke: () => wake?.(),
    refresh: async () => seen(await api.get<Node>(path)),
    stop: () => {
      abort.abort();
      watch?.stop();
    },
  };
}
