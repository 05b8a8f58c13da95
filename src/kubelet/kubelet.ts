// The composition root: names the kubelet's subsystems and builds them in the order a pod
// travels, each from the options and the parts built before it. It holds no state: the pod
// manager and CurrentNode, built first, are what every part reads; the two parts called before
// they are built (the pod workers, the node status) are named Late bindings.
//
// A pod's way: connections -> container manager (cgroups, CPU manager, devices, DRA) -> volumes ->
// pod lifecycle (sources -> pod workers -> SyncPod -> src/runtime -> CRI) -> node status.
import type { PodWorkers } from '../pods/workers.ts';
import { logger } from '../log/log.ts';
import { CurrentNode } from '../node/current-node.ts';
import { PodManager } from '../pods/pod-manager.ts';
import { connect } from './connections.ts';
import { containerManager, nodeCPUs } from './container-manager.ts';
import { type HostSystem, realHost } from './host-system.ts';
import { Late } from './late.ts';
import { nodeLoops } from './loops.ts';
import { nodeReports, nodeStatus, prepareHost, type NodeStatus } from './node.ts';
import { effectiveOptions, KUBELET_VERSION, stopAll, type KubeletOptions } from './options.ts';
import { podLifecycle } from './pod-lifecycle.ts';
import { kubeletServers } from './servers.ts';
import { machineIdentity, statsProvider } from './stats.ts';
import { volumesAndPlugins } from './volumes.ts';

/** `system`: what of the host the kubelet changes; the real one but for hollow nodes (src/hollow). */
export async function runKubelet(given: KubeletOptions, system: HostSystem = realHost): Promise<{ stop(): Promise<void> }> {
  const log = logger('kubelet');
  const pods = new PodManager();
  const node = new CurrentNode(given.nodeName);
  const workers = new Late<PodWorkers>('the pod workers');
  const status = new Late<NodeStatus>('the node status');
  const wakePods = (uids: string[]) => {
    for (const uid of uids) workers.get().wake(uid);
  };
  const pokeNodeStatus = () => status.get().agent.poke();

  const host = prepareHost(given, log, system);
  const conn = await connect(given, log);
  const cpus = nodeCPUs(given.config);
  const o = effectiveOptions(given, conn, cpus.reserved);
  const cm = await containerManager(o, { ...conn, host, pods, wakePods, cpus, system, log });
  const vol = volumesAndPlugins(o, {
    api: conn.api,
    node,
    draPlugins: cm.draPlugins,
    inUseChanged: pokeNodeStatus,
    events: conn.events,
    mounts: system,
    log,
  });
  const stats = statsProvider(o, {
    ...conn,
    machine: machineIdentity(host.facts, cpus.topology),
    cgroups: cm.cgroups,
    persistent: vol.persistent,
    volumes: vol.volumes,
    csiDrivers: vol.csiDrivers,
  });
  const loops = await nodeLoops(o, {
    ...conn,
    host,
    node,
    pods,
    volumes: vol,
    userns: cm.userns,
    cgroups: cm.cgroups,
    stats,
    kill: (uid, kill) => workers.get().kill(uid, kill),
    poke: pokeNodeStatus,
  });
  const lifecycle = podLifecycle(o, {
    ...conn,
    host,
    node,
    pods,
    cm,
    volumes: vol.volumes,
    loops,
    workers,
    refreshNode: () => status.get().agent.refresh(),
  });
  status.set(nodeStatus(o, { ...conn, host, node, system, reports: nodeReports(loops, cm, vol, lifecycle) }));
  vol.startPlugins();
  lifecycle.startSources();
  const servers = await kubeletServers(o, {
    ...conn,
    host,
    pods,
    stats,
    devices: cm.devices,
    cpus: cm.cpuManager,
    memory: cm.memoryManager,
    healthy: () => lifecycle.pleg.problem(),
    log,
  });
  // As upstream's initializeRuntimeDependentModules: not critical, so a failure (no system bus,
  // no logind) is logged and the kubelet runs on without it.
  loops.shutdown.start().catch((e) => log.error('Failed to start node shutdown manager', { err: e }));
  log.info('Started kubelet', { node: o.nodeName, nodeIPs: host.nodeIPs, version: KUBELET_VERSION });

  // Pods keep running: a restarted kubelet adopts them from their CRI labels.
  return { stop: () => stopAll([servers, loops, stats, lifecycle, status.get(), vol, cm, conn]) };
}
