// The composition root: builds each part from the options and connects them, in the order
// a pod travels: connections, the Node, the pod sources (src/sources/config.ts routes every
// pod), the pod workers and what they drive, then the node-level loops and the servers. It
// holds no state and decides nothing; the parts do.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Taint } from 'kubernetes-types/core/v1.js';
import { apiClient } from '../apiserver/client.ts';
import { loadKubeconfig } from '../apiserver/kubeconfig.ts';
import { clientCertificateRotation } from '../certificates/client-cert.ts';
import type { KubeletConfig } from '../config/kubelet-config.ts';
import { startLogRotation, criLogRuntime } from '../container-logs/rotation.ts';
import { ImageClient } from '../cri/image-client.ts';
import { RuntimeClient } from '../cri/runtime-client.ts';
import { eventRecorder } from '../events/recorder.ts';
import { startEvictionManager, type EvictionManager } from '../eviction/eviction-manager.ts';
import { parseThresholds } from '../eviction/thresholds.ts';
import { startCollector } from '../gc/collector.ts';
import { criGCRuntime, criImageGC } from '../gc/cri.ts';
import { withPodDirs } from '../pods/pod-dirs.ts';
import { startImageGC } from '../gc/images.ts';
import { apiSecretGetter } from '../images/pull-secrets.ts';
import { ImagePuller } from '../images/puller.ts';
import { PullSlots, pullLimit } from '../images/pull-slots.ts';
import { logger } from '../log/log.ts';
import { watchEventLoop } from '../log/event-loop.ts';
import { collectProcessMetrics, metrics, observeRuntimeOperation, registerPodGauges, registerVolumeStats } from '../metrics/metrics.ts';
import {
  eventedPlegMetrics,
  evictionMetrics,
  restClientMetrics,
  housekeepingMetrics,
  statsSampleMetrics,
  imageGCMetrics,
  logRotationMetrics,
  plegMetrics,
  pullMetrics,
  startupMetrics,
  statusMetrics,
  syncMetrics,
  workerMetrics,
  deviceMetrics,
  podResourcesMetrics,
  pluginManagerMetrics,
  nodeShutdownMetrics,
} from '../metrics/observers.ts';
import { ensureCniConfig } from '../network/cni-config.ts';
import { readResolvConf } from '../network/resolv-conf.ts';
import { nodeAgent } from '../node/agent.ts';
import { CurrentNode } from '../node/current-node.ts';
import { defaultNodeIP, filesystemStats, readHostFacts, thermalThrottlePaths } from '../node/host.ts';
import { leaseRenewer } from '../node/lease.ts';
import { probeRuntime } from '../node/runtime-health.ts';
import { makeRShared } from '../node/shared-mount.ts';
import { ensureSystemCgroups, type SystemCgroupsConfig } from '../node/system-cgroups.ts';
import { applyOwnOOMScoreAdj } from '../node/oom-score.ts';
import { setupKernelTunables } from '../node/kernel-tunables.ts';
import { declaredFeatures } from '../node/declared-features.ts';
import { nodeSwapAtStart } from '../node/swap.ts';
import { nodeShutdownManager } from '../nodeshutdown/manager.ts';
import { stateFile } from '../nodeshutdown/state-file.ts';
import { runtimeEvents } from '../pleg/cri-events.ts';
import { startPleg } from '../pleg/relist.ts';
import { isStaticPod, podKey } from '../podutil/podutil.ts';
import { podGauges } from '../pods/gauges.ts';
import { MirrorPods } from '../pods/mirror.ts';
import { StartupLatencyTracker } from '../pods/startup-latency.ts';
import { podSteps } from '../pods/steps.ts';
import { PodWorkers } from '../pods/workers.ts';
import { Prober } from '../prober/prober.ts';
import { PodResizer } from '../resize/pod-resizer.ts';
import { kubepodsCgroup } from '../resources/cgroup-layout.ts';
import { effectiveMaxPods, kubepodsLimits } from '../resources/node-allocatable.ts';
import { ensurePodCgroup, removePodCgroup } from '../resources/pod-cgroup.ts';
import { keepQosCgroups, updateQosCgroups } from '../resources/qos-cgroups.ts';
import { TokenBucket } from '../backoff/token-bucket.ts';
import { rateLimited } from '../apiserver/rate-limited.ts';
import { parseQuantity } from '../resources/quantity.ts';
import { cfsOf, singleProcessOOMKill } from '../resources/linux-resources.ts';
import { RuntimeView } from '../runtime/cri-runtime.ts';
import { apiEnvSource } from '../runtime/env-sources.ts';
import { serviceCache } from '../runtime/service-cache.ts';
import { withEnvFiles } from '../runtime/env-file-source.ts';
import { apiRuntimeHandler } from '../runtime/runtime-class.ts';
import { RuntimeHandlers } from '../runtime/runtime-handlers.ts';
import { PodSyncer } from '../pods/sync-pod.ts';
import { DeviceManager, runningContainersAtStart } from '../devices/manager.ts';
import { startPodResourcesServer } from '../devices/pod-resources.ts';
import { healthzServer } from '../server/local-healthz.ts';
import { kubeletApiServer, kubeletReadOnlyServer } from '../server/serve.ts';
import { appArmorHostError } from '../security/apparmor.ts';
import { apiserverSource } from '../sources/apiserver.ts';
import { PodConfig } from '../sources/config.ts';
import { fileSource } from '../sources/static-file.ts';
import { urlSource } from '../sources/static-url.ts';
import { sampleCache } from '../stats/cache.ts';
import { cgroupReader } from '../stats/cgroup.ts';
import { collectSample } from '../stats/collector.ts';
import { hostStats } from '../stats/host.ts';
import { criStatsSource } from '../stats/runtime-source.ts';
import { buildSummary } from '../stats/summary.ts';
import { volumeStatsSource } from '../stats/volumes.ts';
import { claimStatsSource } from '../stats/claim-volumes.ts';
import { StatusManager } from '../status/status-manager.ts';
import { VolumeManager } from '../volumes/volume-manager.ts';
import { apiClaimSources, apiVolumeSources } from '../volumes/sources.ts';
import { PersistentVolumes } from '../volumes/persistent.ts';
import { bindMount } from '../mount/mountinfo.ts';
import { CsiDrivers, CsiRegistrationHandler } from '../csi/drivers.ts';
import { nodeInfoManager } from '../csi/node-info-manager.ts';
import { CsiVolumes } from '../csi/volumes.ts';
import { PluginManager } from '../plugin-manager/manager.ts';
import { CSI_PLUGIN, DRA_PLUGIN } from '../plugin-manager/handler.ts';
import { DraPlugins } from '../dra/plugins.ts';
import { DraManager } from '../dra/manager.ts';
import { withClaimDevices } from '../dra/container.ts';
import { UserNamespaces } from '../userns/manager.ts';

export interface KubeletOptions {
  kubeconfig: string;
  /** --bootstrap-kubeconfig: asks for a new client certificate once the current one expired. */
  bootstrapKubeconfig?: string;
  config: KubeletConfig;
  nodeName: string;
  certDir: string;
  nodeIP?: string;
  runtimeEndpoint: string;
  rootDir: string;
  nodeLabels: Record<string, string>;
  taints: Taint[];
  cniConfDir: string;
  /** 'kubenet': write a bridge network for the Node's podCIDR when no add-on installed one (src/network). */
  networkPlugin: 'cni' | 'kubenet';
  /** kubeletCgroups, systemCgroups and --runtime-cgroups: the system containers (src/node/system-cgroups.ts). */
  systemCgroups: SystemCgroupsConfig;
}

// The Kubernetes release whose kubelet behaviour kubelet-ts implements.
export const KUBELET_VERSION = 'v1.36.3';

export async function runKubelet(o: KubeletOptions): Promise<{ stop(): Promise<void> }> {
  const log = logger('kubelet');
  const { config, nodeName, rootDir } = o;
  const nodeIP = o.nodeIP || defaultNodeIP();
  if (!nodeIP) throw new Error('no --node-ip given and no non-loopback IPv4 address found on this host');
  const oom = applyOwnOOMScoreAdj(config.oomScoreAdj);
  if (oom) log.info('Failed to ApplyOOMScoreAdj', { err: oom });
  mkdirSync(rootDir, { recursive: true });
  // Shared, so that Bidirectional and HostToContainer volumeMounts work (upstream's setupDataDirs fails
  // the start; here only those mounts would, so the kubelet runs on).
  try {
    if (makeRShared(resolve(rootDir))) log.info('Bind-mounted the root directory with shared mount propagation', { path: rootDir });
  } catch (e) {
    log.error('Error configuring root directory', { path: rootDir, err: e });
  }

  // Connections: the apiserver, and the runtime (fail at start with one clear line rather than run against none).
  // upstream's clients: the kube client waits within kubeAPIQPS/kubeAPIBurst; heartbeats (node
  // status, the Lease) go around that limit, events within their own (eventRecordQPS).
  const heartbeats = apiClient(loadKubeconfig(o.kubeconfig), {
    userAgent: `kubelet-ts/${KUBELET_VERSION} (linux) ${nodeName}`,
    observe: restClientMetrics,
  });
  const api = rateLimited(heartbeats, new TokenBucket(config.kubeAPIQPS, config.kubeAPIBurst));
  const cri = new RuntimeClient(o.runtimeEndpoint, { observer: observeRuntimeOperation });
  const images = new ImageClient(config.imageServiceEndpoint || o.runtimeEndpoint, { observer: observeRuntimeOperation });
  const version = await cri.version({});
  log.info('Container runtime initialized', {
    runtime: version.runtimeName,
    version: version.runtimeVersion,
    apiVersion: version.runtimeApiVersion,
  });
  metrics.nodeName.set({ node: nodeName }, 1);
  metrics.cgroupVersion.set(cgroupReader().version);
  collectProcessMetrics();
  watchEventLoop(log);
  const view = new RuntimeView(cri);
  // The runtime handlers as CRI Status lists them: the runtime probe keeps them, recursive read-only mounts read them.
  const runtimeHandlers = new RuntimeHandlers(() => cri.status({}));
  const events = eventRecorder(heartbeats, {
    host: nodeName,
    log: logger('events'),
    onDrop: () => metrics.eventsDropped.inc(),
    qps: config.eventRecordQPS,
    burst: config.eventBurst,
  });

  // The Node: one holder that the node agent keeps current and every other part reads.
  const node = new CurrentNode(nodeName);
  const host = readHostFacts();
  // Swap (src/node/swap.ts): no start with swap on unless failSwapOn is false, as upstream; the
  // containers' swap limits follow from it.
  const swap = nodeSwapAtStart({
    failSwapOn: config.failSwapOn,
    swapBehavior: config.memorySwap.swapBehavior,
    memoryCapacityBytes: host.memoryBytes,
    swapCapacityBytes: host.swapBytes ?? 0,
    log,
  });
  setupKernelTunables(config.protectKernelDefaults, log);
  // One process or the whole container per OOM kill; refused as upstream's validation does.
  const oomKill = singleProcessOOMKill(config.singleProcessOOMKill, swap.cgroupV2);
  const cfs = cfsOf(config.cpuCFSQuota, config.cpuCFSQuotaPeriodMs);
  if (config.enforceNodeAllocatable.includes('pods')) {
    try {
      ensurePodCgroup(kubepodsCgroup(config.cgroupRoot), kubepodsLimits(host, [config.kubeReserved, config.systemReserved]));
    } catch (e) {
      log.warn('Cannot limit the kubepods cgroup to node allocatable', { err: e });
    }
  }
  for (const err of ensureSystemCgroups(o.systemCgroups)) log.error('Failed to ensure system container', { err });

  // Device plugins (src/devices): registration on ROOT/device-plugins/kubelet.sock, their devices
  // in the Node's capacity, admission and Allocate at container creation. Containers running now
  // keep their devices while the sources are not yet listed (a restarted kubelet).
  // With ResourceHealthStatus (beta, on) a device's health change wakes the pods holding it.
  const resourceHealth = config.featureGates.ResourceHealthStatus !== false;
  const wakePods = (uids: string[]) => {
    for (const uid of uids) workers.wake(uid);
  };
  const devices = new DeviceManager({
    dir: join(rootDir, 'device-plugins'),
    log: logger('devicemanager'),
    activePods: () => workers.active().map((p) => p.metadata!.uid!),
    sourcesReady: () => source.synced(),
    runningAtStart: await runningContainersAtStart(cri),
    observe: deviceMetrics,
    podsChanged: resourceHealth ? wakePods : undefined,
  });
  await devices.start().catch((e) => log.error('Failed to start the device plugin manager', { err: e }));

  // Started once the sources run; admission and node status ask it before then.
  let eviction: EvictionManager | undefined;
  // Graceful node shutdown (src/nodeshutdown): off (nothing connected, nothing spawned) unless
  // shutdownGracePeriod or shutdownGracePeriodByPodPriority is set. Pods go through the
  // eviction path (workers.kill); the Node goes NotReady at once.
  const shutdown = nodeShutdownManager({
    config,
    // Loaded only when the manager is on: the D-Bus client costs memory on every node otherwise.
    connect: async () =>
      (await import('../nodeshutdown/logind.ts')).connectLogind({ onError: (msg, err) => logger('nodeshutdown').error(msg, { err }) }),
    state: stateFile(rootDir),
    pods: () => workers.running(),
    killPod: (pod, kill) => workers.kill(pod.metadata!.uid!, kill),
    syncNodeStatus: () => agent.poke(),
    events,
    node: { kind: 'Node', name: nodeName, uid: nodeName },
    log: logger('nodeshutdown'),
    observe: nodeShutdownMetrics,
  });

  // Pods: status to the apiserver (a static pod's to its mirror), the sync against the runtime,
  // probes, and one worker per pod that runs them through the lifecycle.
  const mirrors = new MirrorPods(
    api,
    () => node.owner(),
    logger('mirror_pods'),
    (uid) => workers.wake(uid),
    (fullName, exceptUID) => workers.staticPodActive(fullName, exceptUID),
  );
  const status = new StatusManager(api, logger('status'), {
    observe: statusMetrics,
    target: (pod) => (isStaticPod(pod) ? mirrors.mirror(pod) : (workers.latest(pod.metadata!.uid!) ?? pod)),
  });
  // Upstream's pod start-up SLI: creation to all containers running as the watch shows it, without image pulls.
  const startup = new StartupLatencyTracker(startupMetrics(log));
  // Plugins that register on ROOT/plugins_registry (src/plugin-manager): CSI drivers (src/csi),
  // whose node ID and topology go on the Node and its CSINode.
  const csiDrivers = new CsiDrivers();
  const csiNodeInfo = nodeInfoManager(api, nodeName);
  const plugins = new PluginManager({ rootDir, log: logger('plugin_manager'), observe: pluginManagerMetrics });
  plugins.addHandler(CSI_PLUGIN, new CsiRegistrationHandler({ drivers: csiDrivers, nodeInfo: csiNodeInfo, log: logger('csi') }));
  // DRA drivers (src/dra) register as "DRAPlugin"; the node's ResourceSlices of drivers not
  // registered (at start, and 30 s after one goes) are deleted. Claims are prepared before a
  // pod's sandbox and unprepared once its containers stopped.
  // Each plugin's health stream reports to the DRA manager (ResourceHealthStatus, beta and on).
  const draPlugins = new DraPlugins({
    api,
    nodeName,
    log: logger('dra'),
    health: resourceHealth ? { update: (d, r) => dra.update(d, r), ended: (d) => dra.ended(d), log: logger('dra') } : undefined,
  });
  plugins.addHandler(DRA_PLUGIN, draPlugins);
  const dra = new DraManager({
    rootDir,
    api,
    plugins: draPlugins,
    log: logger('dra'),
    activePods: () => workers.active().map((p) => p.metadata!.uid!),
    sourcesReady: () => source.synced(),
    podsChanged: wakePods,
  });
  draPlugins.start();
  dra.start();
  const volumeSources = apiVolumeSources(api, logger('volumes'));
  // The cluster's Services, listed and watched, for containers' service link variables.
  const services = serviceCache(api, logger('services'));
  // Claims and their PersistentVolumes: hostPath, local, CSI (src/volumes/persistent.ts).
  const persistent = new PersistentVolumes({
    rootDir,
    nodeName,
    sources: apiClaimSources(api),
    csi: new CsiVolumes({ rootDir, nodeName, drivers: csiDrivers, secret: apiSecretGetter(api), log: logger('csi') }),
    volumesAttached: () => (node.get()?.status?.volumesAttached ?? []).map((v) => v.name),
    // Pods start after the node agent exists: a new set of volumes in use goes out at once.
    inUseChanged: () => agent.poke(),
    bindMount,
    log: logger('volumes'),
  });
  const volumes = new VolumeManager({
    rootDir,
    sources: volumeSources,
    log: logger('volumes'),
    nodeAllocatable: () => node.allocatable(),
    persistent,
  });
  // User namespaces (src/userns): the kubelet's ID range from /etc, the pods' ranges read back from
  // ROOT/pods/UID/userns; a bad range or file fails the start, as upstream's MakeUserNsManager.
  const userns = UserNamespaces.load({ rootDir, maxPods: config.maxPods, log: logger('userns') });
  // The QoS cgroups' CPU weights follow the active pods (before each pod cgroup, and every minute).
  const updateQos = () => updateQosCgroups(config.cgroupRoot, workers.active());
  const syncer = new PodSyncer({
    runtime: cri,
    podCgroups: { updateQos, ensure: ensurePodCgroup, remove: removePodCgroup },
    view,
    events,
    log: logger('runtime'),
    images: new ImagePuller(images, {
      secrets: apiSecretGetter(api),
      log: logger('images'),
      observe: pullMetrics(startup),
      slots: new PullSlots(pullLimit(config.serializeImagePulls, config.maxParallelImagePulls)),
      limit: new TokenBucket(config.registryPullQPS, config.registryBurst),
    }),
    node: {
      podLogsDir: config.podLogsDir,
      clusterDomain: config.clusterDomain,
      clusterDNS: config.clusterDNS,
      hostDNS: readResolvConf(config.resolvConf),
      nodeIP,
      seccompDefault: config.seccompDefault,
      seccompProfileRoot: join(rootDir, 'seccomp'),
      hostMaskedPaths: thermalThrottlePaths(),
      memoryCapacity: () => parseQuantity(node.capacity()?.memory ?? ''),
      cgroupRoot: config.cgroupRoot,
      swap,
      singleProcessOOMKill: oomKill,
      cfs,
      podPidsLimit: config.podPidsLimit,
    },
    // EnvFiles: fileKeyRef reads files of the pod's volumes as set up.
    env: withEnvFiles(
      apiEnvSource(api, () => node.get(), services),
      (uid, name) => volumes.hostPath(uid, name),
      config.featureGates,
      logger('runtime'),
    ),
    volumes,
    resizer: new PodResizer({
      cri,
      view,
      events,
      log: logger('runtime'),
      allocatable: () => node.allocatable(),
      checkpointFile: join(rootDir, 'allocated_pods_state'),
      cgroupRoot: config.cgroupRoot,
      cfs,
      activePods: () => workers.active(),
    }),
    runtimeHandler: apiRuntimeHandler(api),
    runtimeHandlers,
    observe: syncMetrics,
    // The claims' CDI devices ahead of the device plugins' (upstream's GenerateRunContainerOptions).
    devices: { containerOptions: async (pod, c) => withClaimDevices(dra.cdiDevices(pod, c), await devices.containerOptions(pod, c)) },
    claims: dra,
    userns,
  });
  // Liveness, readiness and startup probes: a changed result syncs the pod again.
  const prober = new Prober({ cri, events, log: logger('prober'), onChange: (uid) => workers.wake(uid) });
  // Each pod gets ROOT/pods/UID before its first sandbox: the mark housekeeping goes by.
  const steps = withPodDirs(
    podSteps({
      api,
      view,
      syncer,
      status,
      events,
      nodeIP,
      node: () => node.get(),
      refreshNode: () => agent.refresh(),
      probes: prober,
      allowedUnsafeSysctls: config.allowedUnsafeSysctls,
      appArmorHostError: appArmorHostError(),
      admitUnderPressure: (pod) => eviction?.admit(pod) ?? { admit: true },
      admitShutdown: (pod) => shutdown.admit(pod),
      devices,
      claims: dra,
      // Device plugins' entries, then the claims', as upstream's containerManagerImpl.UpdateAllocatedResourcesStatus.
      resourcesStatus: resourceHealth ? (pod, s) => dra.allocatedResourcesStatus(pod, devices.allocatedResourcesStatus(pod, s)) : undefined,
    }),
    rootDir,
  );
  const workers = new PodWorkers(steps, logger('pod_workers'), {
    resyncMs: config.syncFrequencyMs,
    observe: workerMetrics,
    stopped: (pod) => void mirrors.reconcile(podKey(pod)),
  });
  registerPodGauges(() => podGauges(workers.snapshot(), isStaticPod));

  // PLEG: the relist wakes the workers of pods whose containers changed; the runtime's events
  // (CRI's container events, or containerd's task events on containerd 1.6) wake the relist
  // when an exit shows (upstream's EventedPLEG gate is off by default; featureGates
  // {EventedPLEG: false} leaves the 1 s relist alone, as the upstream kubelet runs).
  const pleg = startPleg(view, {
    log: logger('pleg'),
    observe: plegMetrics,
    onEvents: (evs) => {
      for (const uid of new Set(evs.map((e) => e.uid))) workers.wake(uid);
    },
  });
  const runtimeEventStream =
    config.featureGates.EventedPLEG === false
      ? undefined
      : runtimeEvents(o.runtimeEndpoint, {
          log: logger('pleg'),
          onEvent: (e) => pleg.runtimeEvent(e),
          onReconnect: () => pleg.eventStream(true),
          onDisconnect: () => pleg.eventStream(false),
          observe: eventedPlegMetrics,
        });

  // The Node object, its status and Lease, and the client certificate.
  const agent = nodeAgent(heartbeats, {
    nodeName,
    labels: o.nodeLabels,
    taints: o.taints,
    log: logger('node_status'),
    updateEveryMs: config.nodeStatusUpdateFrequencyMs,
    reportEveryMs: config.nodeStatusReportFrequencyMs,
    staticInputs: {
      host,
      nodeIP,
      hostname: nodeName,
      kubeletVersion: KUBELET_VERSION,
      kubeletPort: config.port,
      maxPods: effectiveMaxPods(config.maxPods, config.podsPerCore, host.cpuCores),
      reserved: [config.kubeReserved, config.systemReserved],
      evictionHard: config.evictionHard,
      declaredFeatures: declaredFeatures(config.featureGates),
    },
    fsCapacity: () => filesystemStats(rootDir).capacityBytes,
    pressure: () => eviction?.conditions() ?? [],
    shutdown: () => shutdown.shutdownStatus(),
    devices: () => devices.capacity(),
    volumes: { inUse: () => persistent.volumesInUse(), markReportedInUse: (names) => persistent.markReportedInUse(names) },
    probeRuntime: async () => {
      const r = await probeRuntime(cri, images, config.nodeStatusMaxImages, log, (h) => runtimeHandlers.set(h));
      return { ...r, health: { ...r.health, plegProblem: pleg.problem() } };
    },
    // Both features' gates (RecursiveReadOnlyMounts GA, UserNamespacesSupport beta) are on: always published.
    runtimeHandlers: () => runtimeHandlers.known(),
    onNode: (n) => node.set(n),
  });
  // A re-registered Node has a new UID: mirror pods are owned by it, and so is the CSINode.
  node.onNewUID(() => mirrors.reconcileAll());
  node.onNewUID(() => void csiNodeInfo.initialize().catch((e) => log.error('Failed to initialize the CSINode', { err: e })));
  plugins.start();
  // --network-plugin=kubenet: a bridge network for the podCIDR, unless an add-on installed one.
  if (o.networkPlugin === 'kubenet') {
    node.onNewPodCIDR((podCIDR) => {
      const action = ensureCniConfig(o.cniConfDir, podCIDR);
      log.info('Pod CIDR of the node', {
        podCIDR,
        cniConfig: action === 'foreign' ? 'left to the installed network add-on' : action === 'write' ? 'written' : 'unchanged',
      });
      agent.poke();
    });
  }
  const rotation = clientCertificateRotation(api, {
    kubeconfig: o.kubeconfig,
    bootstrapKubeconfig: o.bootstrapKubeconfig,
    certDir: o.certDir,
    nodeName,
    log: logger('certificate'),
  });
  // Nothing waits for the registration: static pods run while the apiserver is unreachable (on a
  // kubeadm control-plane node the apiserver is one of them), as upstream. The Lease gets the
  // Node as its owner once there is one.
  const lease = leaseRenewer(heartbeats, {
    nodeName,
    durationSeconds: config.nodeLeaseDurationSeconds,
    nodeUID: () => node.uid(),
    log: logger('lease'),
  });
  const mirrorBeat = mirrors.start();
  const statusBeat = status.start();

  // Pod sources: the apiserver (pods bound here and the mirrors of static pods), staticPodPath
  // and staticPodURL, merged and routed by PodConfig.
  const podConfig = new PodConfig({ pods: workers, mirrors, watch: startup, log: logger('config') });
  const source = apiserverSource(api, nodeName, podConfig.source('api'), logger('config'));
  const files = config.staticPodPath
    ? fileSource(config.staticPodPath, nodeName, podConfig.source('file'), logger('config'), config.fileCheckFrequencyMs)
    : undefined;
  const url = config.staticPodURL
    ? urlSource(
        config.staticPodURL,
        config.staticPodURLHeader,
        nodeName,
        podConfig.source('http'),
        logger('config'),
        config.httpCheckFrequencyMs,
      )
    : undefined;

  // Housekeeping (2 s) and container GC (1 min). The static pod dir is read once before
  // fileSource returns, so the apiserver's first list is all sources wait for.
  const qosCgroups = keepQosCgroups(updateQos, logger('qos'));
  const gc = startCollector({
    runtime: criGCRuntime(cri, () => view.pods(), config.podLogsDir),
    known: () => workers.states(),
    sourcesReady: () => source.synced(),
    rootDir,
    podLogsDir: config.podLogsDir,
    cgroupRoot: config.cgroupRoot,
    log: logger('gc'),
    observe: housekeepingMetrics,
    releaseVolumes: (uid) => persistent.release(uid),
    podDirRemoved: (uid) => userns.release(uid),
  });
  // Image GC between imageGCLowThresholdPercent and imageGCHighThresholdPercent.
  const imageGC = startImageGC({
    ...(await criImageGC(cri, images, () => view.pods(), rootDir)),
    policy: {
      highThresholdPercent: config.imageGCHighThresholdPercent,
      lowThresholdPercent: config.imageGCLowThresholdPercent,
      minAgeMs: config.imageMinimumGCAgeMs,
    },
    log: logger('image_gc'),
    observe: imageGCMetrics,
  });
  // One stats sample cache for the kubelet API and the eviction manager (CRI stats calls are slow).
  // The volumes' walks are cached across samples, so one source for the kubelet's life.
  const runtimeStats = criStatsSource(cri, images);
  const kubeletStartMs = Date.now() - process.uptime() * 1000;
  const statsLog = logger('stats');
  const volumeStats = volumeStatsSource({
    rootDir,
    onError: (path, err) => statsLog.v(4, 'Failed to calculate volume metrics', { path, err }),
  });
  // Claim volumes as their plugin measures them (src/stats/claim-volumes.ts).
  const claimStats = claimStatsSource({
    mounts: (uid) => persistent.claimMounts(uid),
    csi: (driver) => csiDrivers.client(driver),
    volumeHealth: config.featureGates.CSIVolumeHealth === true,
    events,
    onError: (volume, err) => statsLog.v(4, 'Failed to calculate volume metrics', { volume, err }),
  });
  const stats = sampleCache(
    () =>
      collectSample(runtimeStats, hostStats(), {
        rootDir,
        podLogsDir: config.podLogsDir,
        cgroupRoot: config.cgroupRoot,
        kubeletStartMs,
        systemCgroups: o.systemCgroups,
        volumes: volumeStats,
        claims: claimStats,
      }),
    { log: statsLog, observe: statsSampleMetrics },
  );
  // kubelet_volume_stats_*: the claim volumes of the Summary's pods.
  registerVolumeStats(async () => {
    const s = await stats.get();
    return buildSummary(nodeName, s.cur, s.prev).pods;
  });
  // Node pressure: conditions, reclaim, evictions (src/eviction).
  eviction = startEvictionManager({
    thresholds: parseThresholds(config),
    pressureTransitionPeriodMs: config.evictionPressureTransitionPeriodMs,
    maxPodGracePeriodSeconds: config.evictionMaxPodGracePeriod,
    summary: async (fresh) => {
      const s = await (fresh ? stats.fresh() : stats.get());
      return buildSummary(nodeName, s.cur, s.prev);
    },
    facts: () => ({ memoryCapacityBytes: host.memoryBytes, allocatableMemoryBytes: parseQuantity(node.allocatable()?.memory ?? '') }),
    pods: () => workers.running(),
    reclaim: { containers: () => gc.collect(), images: () => imageGC.collect(true) },
    evict: (e) =>
      workers.kill(e.pod.metadata!.uid!, {
        gracePeriodSeconds: e.gracePeriodSeconds,
        reason: e.reason,
        message: e.message,
        condition: e.condition,
      }),
    onConditions: () => agent.poke(),
    events,
    node: { kind: 'Node', name: nodeName, uid: nodeName },
    log: logger('eviction_manager'),
    observe: evictionMetrics,
  });
  // Container log rotation (containerLogMaxSize, validated with the config).
  const logRotation = startLogRotation({
    runtime: criLogRuntime(cri),
    podLogsDir: config.podLogsDir,
    log: logger('logs'),
    policy: { maxSize: parseQuantity(config.containerLogMaxSize)!, maxFiles: config.containerLogMaxFiles },
    workers: config.containerLogMaxWorkers,
    intervalMs: config.containerLogMonitorIntervalMs,
    observe: logRotationMetrics,
  });

  // Servers: the local healthz (:10248), the kubelet API (:10250) and, when readOnlyPort is set, its read-only port.
  const healthz = await healthzServer(config.healthzBindAddress, config.healthzPort, () => pleg.problem());
  const api10250 = await kubeletApiServer({
    config,
    certDir: o.certDir,
    nodeName,
    nodeIP,
    api,
    pods: () => workers.pods(),
    runtime: (uid) => view.pod(uid),
    cri,
    stats,
    runtimeStats,
    healthy: () => pleg.problem(),
  });
  const readOnly = await kubeletReadOnlyServer({ config, nodeName, pods: () => workers.pods(), stats, healthy: () => pleg.problem() });
  // The PodResources API on ROOT/pod-resources/kubelet.sock: the active pods' devices.
  const podResources = await startPodResourcesServer(
    join(rootDir, 'pod-resources'),
    {
      pods: () => workers.active(),
      containerDevices: (uid, c) => devices.containerDevices(uid, c),
      allocatableDevices: () => devices.allocatableDevices(),
    },
    podResourcesMetrics,
  ).catch((e) => log.error('Failed to start the PodResources API server', { err: e }));
  // As upstream's initializeRuntimeDependentModules: not critical, so a failure (no system bus,
  // no logind) is logged and the kubelet runs on without it.
  shutdown.start().catch((e) => log.error('Failed to start node shutdown manager', { err: e }));
  log.info('Started kubelet', { node: nodeName, nodeIP, version: KUBELET_VERSION });

  return {
    async stop() {
      // Pods keep running: a restarted kubelet adopts them from their CRI labels.
      for (const part of [
        mirrorBeat,
        statusBeat,
        services,
        volumeSources,
        files,
        url,
        qosCgroups,
        gc,
        imageGC,
        eviction,
        shutdown,
        stats,
        logRotation,
        runtimeEventStream,
        rotation,
        source,
        lease,
        agent,
        pleg,
        workers,
        prober,
        events,
        plugins,
        dra,
        draPlugins,
      ])
        part?.stop();
      healthz.close();
      api10250.close();
      readOnly?.close();
      podResources?.stop();
      await devices.stop();
      cri.close();
      images.close();
    },
  };
}
