// The kubelet's servers: the local healthz (:10248), the kubelet API (:10250, unless enableServer is false) and, when
// readOnlyPort is set, its read-only port, and the PodResources API on
// ROOT/pod-resources/kubelet.sock. They only read: pods from the pod manager, the runtime
// from its view, stats from the sample cache.
import { podResourcesDir } from '../podutil/pod-dirs.ts';
import type { ApiClient } from '../apiserver/client.ts';
import type { RuntimeClient } from '../cri/runtime-client.ts';
import type { CPUManager } from '../cpumanager/manager.ts';
import type { MemoryManager } from '../memorymanager/manager.ts';
import type { DeviceManager } from '../devices/manager.ts';
import { startPodResourcesServer } from '../devices/pod-resources.ts';
import type { Logger } from '../log/log.ts';
import { podResourcesMetrics } from './observers.ts';
import type { PodManager } from '../pods/pod-manager.ts';
import type { RuntimeView } from '../runtime/cri-runtime.ts';
import { healthzServer } from '../server/local-healthz.ts';
import { kubeletApiServer, kubeletReadOnlyServer } from '../server/serve.ts';
import type { Host } from './node.ts';
import { KUBELET_VERSION, type KubeletOptions } from './options.ts';
import type { Stats } from './stats.ts';
import { OTELRESTFUL_SCOPE, type Tracing } from '../tracing/tracing.ts';

export async function kubeletServers(
  o: KubeletOptions,
  d: {
    api: ApiClient;
    cri: RuntimeClient;
    view: RuntimeView;
    host: Host;
    pods: PodManager;
    stats: Stats;
    devices: DeviceManager;
    cpus: CPUManager;
    memory: MemoryManager;
    /** The PLEG's problem, if any: /healthz fails with it. */
    healthy: () => string | undefined;
    log: Logger;
    tracing: Tracing;
  },
) {
  const { config, nodeName } = o;
  const pods = () => d.pods.pods();
  const tracer = d.tracing.tracer(OTELRESTFUL_SCOPE);
  const healthz = await healthzServer(config.healthzBindAddress, config.healthzPort, d.healthy);
  const api = await kubeletApiServer({
    config,
    certDir: o.certDir,
    nodeName,
    nodeIPs: d.host.nodeIPs,
    api: d.api,
    pods,
    runtime: (uid) => d.view.current(uid),
    cri: d.cri,
    stats: d.stats.cache,
    runtimeStats: d.stats.runtimeStats,
    healthy: d.healthy,
    kubeletVersion: KUBELET_VERSION,
    flagz: o.flagz,
    tracer,
  });
  const readOnly = await kubeletReadOnlyServer({ config, nodeName, pods, stats: d.stats.cache, healthy: d.healthy, tracer });
  // The active pods' devices, exclusive CPUs and memory.
  const podResources = await startPodResourcesServer(
    podResourcesDir(o.rootDir),
    {
      pods: () => d.pods.active(),
      containerDevices: (uid, c) => d.devices.containerDevices(uid, c),
      allocatableDevices: () => d.devices.allocatableDevices(),
      containerCPUs: (uid, c) => d.cpus.exclusiveCPUs(uid, c),
      allocatableCPUs: () => d.cpus.allocatableCPUs(),
      containerMemory: (uid, c) => d.memory.memory(uid, c),
      allocatableMemory: () => d.memory.allocatable(),
    },
    podResourcesMetrics,
  ).catch((e) => d.log.error('Failed to start the PodResources API server', { err: e }));
  return {
    stop() {
      healthz.close();
      api.close();
      readOnly?.close();
      podResources?.stop();
    },
  };
}
