// The container manager (upstream's pkg/kubelet/cm): the node's cgroups (kubepods held to node
// allocatable, the system containers, the QoS classes, one cgroup per pod), the node-wide
// container settings (OOM kill, CFS quota), the CPU manager, device plugins, DRA drivers and
// user namespaces, and the memory and topology managers.
import { cpus } from 'node:os';
import { featureEnabled } from '../features/gates.ts';
import { parseCPUSet } from '../cpumanager/cpuset.ts';
import { CPUManager, newPolicy, reservedQuantities, reservedSystemCPUs } from '../cpumanager/manager.ts';
import { discoverTopology, readSysfsTopology } from '../cpumanager/topology.ts';
import { readNUMAFacts } from '../memorymanager/machine.ts';
import { MemoryManager, newMemoryPolicy } from '../memorymanager/manager.ts';
import { type HintProvider, TopologyManager, topologyConfig } from '../topologymanager/manager.ts';
import { devicePluginsDir } from '../podutil/pod-dirs.ts';
import type { Container, Pod, PodStatus } from 'kubernetes-types/core/v1.js';
import type { ApiClient } from '../apiserver/client.ts';
import type { RuntimeClient } from '../cri/runtime-client.ts';
import { DeviceManager, runningContainersAtStart } from '../devices/manager.ts';
import { withClaimDevices } from '../dra/container.ts';
import { DraManager } from '../dra/manager.ts';
import { DraPlugins } from '../dra/plugins.ts';
import { logger, type Logger } from '../log/log.ts';
import { nodeRef, type Recorder } from '../events/recorder.ts';
import {
  cgroupManagerMetrics,
  cpuManagerMetrics,
  deviceMetrics,
  draMetrics,
  memoryManagerMetrics,
  topologyManagerMetrics,
} from './observers.ts';
import { registerClaimsInUse } from '../metrics/metrics.ts';
import type { PodManager } from '../pods/pod-manager.ts';
import { systemdOverDBus } from '../dbus/systemd.ts';
import { cgroupLayout, configuredCgroupPath, nodeAllocatableRoot } from '../resources/cgroup-layout.ts';
import { type NodeCgroups, timedCgroupManager } from '../resources/cgroup-manager.ts';
import { cfsOf, milliCPU, singleProcessOOMKill } from '../resources/linux-resources.ts';
import { allocatableMemoryBytes, enforcesPods, kubepodsLimits, reservedEnforcements } from '../resources/node-allocatable.ts';
import { keepQosCgroups, parseQOSReserved, updateQosCgroups } from '../resources/qos-cgroups.ts';
import { systemdCgroupManager } from '../resources/systemd-cgroups.ts';
import { UserNamespaces } from '../userns/manager.ts';
import type { HostSystem } from './host-system.ts';
import type { Host } from './node.ts';
import { allocatableEvictionHard, type KubeletOptions } from './options.ts';

export type ContainerManager = Awaited<ReturnType<typeof containerManager>>;

/** A resource manager's failure stops the start, worded as upstream's NewContainerManager and Start word it. */
function orStop<T>(what: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw new Error(`${what}: ${(e as Error).message}`);
  }
}

/**
 * GetNodeAllocatableReservation's memory types: kube and system reserved and the hard eviction
 * threshold of memory.available (a percentage of the capacity), each type's terms in order.
 */
export function memoryReservation(
  config: Pick<KubeletOptions['config'], 'systemReserved' | 'kubeReserved'>,
  evictionHard: Record<string, string>,
  memoryCapacity: number,
): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const r of [config.systemReserved, config.kubeReserved])
    for (const [t, q] of Object.entries(r)) if (t === 'memory' || t.startsWith('hugepages-')) out[t] = [...(out[t] ?? []), q];
  const hard = evictionHard['memory.available'];
  if (hard)
    out.memory = [
      ...(out.memory ?? []),
      hard.endsWith('%') ? String(Math.trunc((Number(hard.slice(0, -1)) / 100) * memoryCapacity)) : hard,
    ];
  return out;
}

/**
 * The node's CPUs as the CPU manager sees them (sysfs topology, reservedSystemCPUs checked against
 * it), and the reserved quantities with reservedSystemCPUs standing for the cpu, as upstream's run.
 */
export function nodeCPUs(config: KubeletOptions['config']) {
  let facts: ReturnType<typeof readSysfsTopology>;
  try {
    facts = readSysfsTopology();
  } catch (e) {
    // No CPU topology in /sys (a restricted container): each online CPU its own core, one socket.
    logger('cpumanager').warn('Cannot read the CPU topology from /sys; each CPU taken as a core of socket 0', { err: e });
    facts = { cpus: cpus().map((_, cpu) => ({ cpu, packageId: 0, coreId: cpu })), numaNodes: [] };
  }
  const topology = discoverTopology(facts.cpus, facts.numaNodes);
  const reservedCPUs = reservedSystemCPUs(config.reservedSystemCPUs, topology, parseCPUSet);
  const reserved = reservedQuantities(config.kubeReserved, config.systemReserved, reservedCPUs);
  // The static policy's reservation: kube + system reserved cpu, reservedSystemCPUs' count when set.
  const reservedMillicores = [reserved.kubeReserved, reserved.systemReserved].reduce((m, r) => m + milliCPU(r.cpu ?? 0), 0);
  return { topology, reservedCPUs, reserved, reservedMillicores };
}

/**
 * The topology, CPU and memory managers, started: the device, CPU and memory managers are the
 * topology manager's hint providers, and its admission is theirs (upstream's NewContainerManager order).
 */
function resourceManagers(
  o: KubeletOptions,
  d: {
    cri: RuntimeClient;
    host: Host;
    pods: PodManager;
    cpus: ReturnType<typeof nodeCPUs>;
    numa: ReturnType<typeof readNUMAFacts>;
    devices: HintProvider;
  },
) {
  const { config, rootDir } = o;
  const { pods, numa } = d;
  // The topology manager (src/topologymanager): its policy merges the device, CPU and memory
  // managers' NUMA hints at admission; a pod it cannot align is refused with TopologyAffinityError.
  const topology = new TopologyManager(
    topologyConfig(
      {
        policyName: config.topologyManagerPolicy,
        scopeName: config.topologyManagerScope,
        options: config.topologyManagerPolicyOptions,
        numa: { nodes: numa.nodes.map((n) => n.id), distances: numa.distances },
      },
      (msg) => logger('topologymanager').warn(msg),
    ),
    () => pods.active(),
    topologyManagerMetrics,
  );
  // The device manager first, as upstream: its devices are allocated aligned before the CPUs and memory.
  topology.addHintProvider(d.devices);

  // The CPU manager (src/cpumanager): cpu_manager_state restored and checked at start (a bad
  // policy, option or state stops the kubelet, as upstream); static pins Guaranteed pods' integer CPUs.
  const cpuManager = new CPUManager({
    rootDir,
    policy: orStop('failed to initialize cpu manager', () =>
      newPolicy({
        policyName: config.cpuManagerPolicy,
        policyOptions: config.cpuManagerPolicyOptions,
        reconcilePeriodMs: config.cpuManagerReconcilePeriodMs,
        topology: d.cpus.topology,
        reservedCPUs: d.cpus.reservedCPUs,
        reservedMillicores: d.cpus.reservedMillicores,
        topologyManagerPolicy: config.topologyManagerPolicy,
        gates: {
          alpha: featureEnabled(config.featureGates, 'CPUManagerPolicyAlphaOptions'),
          beta: featureEnabled(config.featureGates, 'CPUManagerPolicyBetaOptions'),
        },
      }),
    ),
    reconcilePeriodMs: config.cpuManagerReconcilePeriodMs,
    cri: d.cri,
    activePods: () => pods.active(),
    sourcesReady: () => pods.sourcesReady(),
    memsFor: (uid, name) => memoryManager.cpusetMems(uid, name),
    observe: cpuManagerMetrics,
    log: logger('cpumanager'),
  });
  topology.addHintProvider(cpuManager);

  // The memory manager (src/memorymanager): memory_manager_state restored and checked at start;
  // Static gives Guaranteed containers their memory and hugepages on NUMA nodes (cpuset.mems).
  // reservedMemory must add up to the node allocatable reservation, else the start stops.
  const memoryManager: MemoryManager = new MemoryManager({
    rootDir,
    policy: newMemoryPolicy(
      config.memoryManagerPolicy,
      numa.nodes,
      memoryReservation(config, allocatableEvictionHard(o), d.host.facts.memoryBytes),
      config.reservedMemory,
    ),
    activePods: () => pods.active(),
    sourcesReady: () => pods.sourcesReady(),
    observe: memoryManagerMetrics,
    log: logger('memorymanager'),
  });
  topology.addHintProvider(memoryManager);
  orStop('start cpu manager error', () => cpuManager.start());
  orStop('start memory manager error', () => memoryManager.start());
  return { topology, cpuManager, memoryManager };
}

/**
 * The cgroups pods run below, as upstream's setupNode makes them with cgroupsPerQOS: kubepods
 * (createNodeAllocatableCgroups), then the QoS cgroups kept up to date (the QoS container
 * manager's Start). Without cgroupsPerQOS neither (qosContainerManagerNoop): only a cgroupRoot
 * other than '/' gets the node's capacity as its limits, if it is there (enforceNodeAllocatableCgroups).
 */
async function podsCgroups(
  config: KubeletOptions['config'],
  host: Host,
  pods: PodManager,
  cgroups: NodeCgroups,
  node: { name: string; events: Recorder },
  log: Logger,
) {
  const root = nodeAllocatableRoot(cgroups.layout);
  // Each update of the node allocatable cgroup is an event on the Node, as upstream's
  // enforceNodeAllocatableCgroups records it.
  const enforced = () =>
    node.events.event(nodeRef(node.name), 'Normal', 'NodeAllocatableEnforced', 'Updated Node Allocatable limit across pods');
  const failed = (e: unknown) =>
    node.events.event(
      nodeRef(node.name),
      'Warning',
      'FailedNodeAllocatableEnforcement',
      `Failed to update Node Allocatable Limits "${root}": ${(e as Error).message}`,
    );
  if (!cgroups.layout.perQos) {
    if (!cgroups.layout.root.length) return { updateQos: undefined, stop() {} };
    try {
      if (cgroups.manager.read(root)) {
        await cgroups.manager.ensure(root, kubepodsLimits(host.facts, []));
        enforced();
      } else
        log.warn('Failed to update Node Allocatable Limits: cannot read cgroupRoot (it is not made without cgroupsPerQOS)', {
          cgroupRoot: root,
        });
    } catch (e) {
      log.warn('Failed to update Node Allocatable Limits', { cgroupRoot: root, err: e });
      failed(e);
    }
    return { updateQos: undefined, stop() {} };
  }
  // kubepods, held to node allocatable when enforceNodeAllocatable has "pods", else to the
  // node's capacity (upstream's createNodeAllocatableCgroups: the default CPU weight would starve pods).
  const reserved = enforcesPods(config.enforceNodeAllocatable) ? [config.kubeReserved, config.systemReserved] : [];
  try {
    await cgroups.manager.ensure(root, kubepodsLimits(host.facts, reserved));
    enforced();
  } catch (e) {
    log.warn('Cannot limit the kubepods cgroup to node allocatable', { err: e });
    failed(e);
  }
  // The QoS cgroups' CPU weights follow the active pods (before each pod cgroup, and every minute),
  // and with the QOSReserved gate their memory limits qosReserved's (as upstream, parsed either way).
  const reservation = featureEnabled(config.featureGates, 'QOSReserved')
    ? {
        allocatableMemoryBytes: allocatableMemoryBytes(host.facts.memoryBytes, [config.systemReserved, config.kubeReserved]),
        reserved: parseQOSReserved(config.qosReserved),
      }
    : undefined;
  if (!reservation && Object.keys(config.qosReserved).length)
    log.info('qosReserved is not applied: the QOSReserved feature gate is off', { qosReserved: config.qosReserved });
  const updateQos = () => updateQosCgroups(cgroups.layout, pods.active(), cgroups.manager, reservation);
  const keeper = keepQosCgroups(updateQos, logger('qos'));
  return { updateQos, stop: () => keeper.stop() };
}

/**
 * The reserved cgroups enforceNodeAllocatable names held to systemReserved and kubeReserved
 * (upstream's enforceNodeAllocatableCgroups after the kubepods one): each must exist already (the
 * kubelet does not make them), each success and failure is an Event on the Node, and the first
 * failure stops the start, as upstream's Start fails.
 */
async function enforceReserved(config: KubeletOptions['config'], nodeName: string, cgroups: NodeCgroups, events: Recorder, log: Logger) {
  const node = nodeRef(nodeName);
  for (const e of reservedEnforcements(config.enforceNodeAllocatable, config)) {
    const path = configuredCgroupPath(cgroups.layout.driver, e.cgroup);
    log.info('Enforcing limits on cgroup', { enforcement: e.key, cgroup: path, limits: e.limits });
    try {
      await cgroups.manager.setReserved(path, e.limits);
    } catch (err) {
      const message = `${e.failure}: ${(err as Error).message}`;
      events.event(node, 'Warning', 'FailedNodeAllocatableEnforcement', message);
      throw new Error(`Failed to start ContainerManager: ${message}`);
    }
    events.event(node, 'Normal', 'NodeAllocatableEnforced', e.success);
  }
}

export async function containerManager(
  o: KubeletOptions,
  d: {
    api: ApiClient;
    cri: RuntimeClient;
    host: Host;
    pods: PodManager;
    /** Wakes the workers of these pods (a device's or a claim's health changed). */
    wakePods: (uids: string[]) => void;
    cpus: ReturnType<typeof nodeCPUs>;
    system: HostSystem;
    events: Recorder;
    log: Logger;
  },
) {
  const { config, rootDir } = o;
  const { log, pods } = d;
  // The cgroups the kubelet owns, named and made as the driver in effect does (the runtime's, when it says).
  const cgroups: NodeCgroups = {
    layout: cgroupLayout(config.cgroupDriver, config.cgroupRoot, config.cgroupsPerQOS),
    manager: timedCgroupManager(
      config.cgroupDriver === 'systemd'
        ? systemdCgroupManager(systemdOverDBus(), undefined, { log: logger('cgroups') })
        : d.system.cgroupfs(),
      cgroupManagerMetrics,
    ),
  };
  const tiers = await podsCgroups(config, d.host, pods, cgroups, { name: o.nodeName, events: d.events }, log);
  await enforceReserved(config, o.nodeName, cgroups, d.events, log);
  for (const err of d.system.ensureSystemCgroups(o.systemCgroups)) log.error('Failed to ensure system container', { err });

  // Device plugins (src/devices): registration on ROOT/device-plugins/kubelet.sock, their devices
  // in the Node's capacity, NUMA hints and aligned devices at admission (a topology manager hint
  // provider), GetPreferredAllocation and Allocate at container creation. Containers running now
  // keep their devices while the sources are not yet listed (a restarted kubelet).
  // With ResourceHealthStatus (beta, on) a device's or claim's health change wakes the pods holding it.
  const resourceHealth = featureEnabled(config.featureGates, 'ResourceHealthStatus');
  const numa = readNUMAFacts(d.host.facts.memoryBytes);
  const devices = new DeviceManager({
    dir: devicePluginsDir(rootDir),
    numaNodes: numa.nodes.map((n) => n.id),
    log: logger('devicemanager'),
    activePods: () => pods.activeUIDs(),
    sourcesReady: () => pods.sourcesReady(),
    runningAtStart: await runningContainersAtStart(d.cri),
    observe: deviceMetrics,
    podsChanged: resourceHealth ? d.wakePods : undefined,
  });
  // Made before the CPU and memory managers (it is the first hint provider), started after them (upstream's Start order).
  const { topology, cpuManager, memoryManager } = resourceManagers(o, { ...d, numa, devices });
  await devices.start().catch((e) => log.error('Failed to start the device plugin manager', { err: e }));

  // DRA drivers (src/dra) register as "DRAPlugin" through the plugin manager; the node's
  // ResourceSlices of drivers not registered (at start, and 30 s after one goes) are deleted.
  // Claims are prepared before a pod's sandbox and unprepared once its containers stopped.
  // Each plugin's health stream reports to the DRA manager.
  const draPlugins: DraPlugins = new DraPlugins({
    api: d.api,
    nodeName: o.nodeName,
    log: logger('dra'),
    health: resourceHealth ? { update: (dev, r) => dra.update(dev, r), ended: (dev) => dra.ended(dev), log: logger('dra') } : undefined,
    observe: draMetrics.call,
  });
  const dra: DraManager = new DraManager({
    rootDir,
    api: d.api,
    plugins: draPlugins,
    log: logger('dra'),
    activePods: () => pods.activeUIDs(),
    sourcesReady: () => pods.sourcesReady(),
    podsChanged: d.wakePods,
    observe: draMetrics.operation,
  });
  registerClaimsInUse(() => dra.claimsInUse());
  draPlugins.start();
  dra.start();

  return {
    /** Upstream's NodeConfig parts that every container's resources follow. */
    settings: {
      cgroups: cgroups.layout,
      podPidsLimit: config.podPidsLimit,
      swap: d.host.swap,
      // One process or the whole container per OOM kill; refused as upstream's validation does.
      singleProcessOOMKill: singleProcessOOMKill(config.singleProcessOOMKill, d.host.swap.cgroupV2),
      cfs: cfsOf(config.cpuCFSQuota, config.cpuCFSQuotaPeriodMs),
      cpusetFor: (pod: Pod, c: Container) => cpuManager.cpusetFor(pod, c),
      cpusetMemsFor: (pod: Pod, c: Container) => memoryManager.cpusetMems(pod.metadata!.uid!, c.name),
    },
    cgroups,
    podCgroups: { updateQos: tiers.updateQos, ensure: cgroups.manager.ensure, remove: cgroups.manager.remove },
    cpuManager,
    memoryManager,
    /** Admission of the CPU and memory managers through the topology manager (upstream's topology admit handler). */
    topology,
    devices,
    dra,
    draPlugins,
    // User namespaces (src/userns): the kubelet's ID range from /etc, the pods' ranges read back from
    // ROOT/pods/UID/userns; a bad range or file fails the start, as upstream's MakeUserNsManager.
    userns: UserNamespaces.load({ rootDir, maxPods: config.maxPods, idsPerPod: config.userNamespaces.idsPerPod, log: logger('userns') }),
    /** The claims' CDI devices ahead of the device plugins' (upstream's GenerateRunContainerOptions). */
    containerOptions: async (pod: Pod, c: Container) => withClaimDevices(dra.cdiDevices(pod, c), await devices.containerOptions(pod, c)),
    /** Device plugins' entries, then the claims', as upstream's containerManagerImpl.UpdateAllocatedResourcesStatus. */
    resourcesStatus: resourceHealth
      ? (pod: Pod, s: PodStatus) => dra.allocatedResourcesStatus(pod, devices.allocatedResourcesStatus(pod, s))
      : undefined,
    async stop() {
      tiers.stop();
      cpuManager.stop();
      memoryManager.stop();
      dra.stop();
      draPlugins.stop();
      await devices.stop();
    },
  };
}
