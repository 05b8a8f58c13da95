// The composition root: builds each part from the options and wires them together.
// It decides nothing about pods or nodes; the parts do.
import { loadKubeconfig } from '../apiserver/kubeconfig.ts';
import { apiClient } from '../apiserver/client.ts';
import type { KubeletConfig } from '../config/kubelet-config.ts';
import { RuntimeClient } from '../cri/runtime-client.ts';
import { ImageClient } from '../cri/image-client.ts';
import { eventRecorder } from '../events/recorder.ts';
import { ImagePuller } from '../images/puller.ts';
import { apiSecretGetter } from '../images/pull-secrets.ts';
import { logger } from '../log/log.ts';
import { collectProcessMetrics, metrics, observeRuntimeOperation, registerPodGauges } from '../metrics/metrics.ts';
import { evictionMetrics, pullMetrics, startupMetrics, statusMetrics, syncMetrics, workerMetrics } from '../metrics/observers.ts';
import { ensureCniConfig } from '../network/cni-config.ts';
import { readResolvConf } from '../network/resolv-conf.ts';
import { defaultNodeIP, filesystemStats, readHostFacts } from '../node/host.ts';
import { leaseRenewer } from '../node/lease.ts';
import { nodeAgent } from '../node/agent.ts';
import { probeRuntime } from '../node/runtime-health.ts';
import { countRunning, startPleg } from '../pleg/relist.ts';
import { containerdEvents, wakesRelist } from '../pleg/containerd-events.ts';
import { podSteps } from '../pods/steps.ts';
import { PodWorkers } from '../pods/workers.ts';
import { podGauges } from '../pods/gauges.ts';
import { StartupLatencyTracker } from '../pods/startup-latency.ts';
import { RuntimeView } from '../runtime/cri-runtime.ts';
import { PodSyncer } from '../runtime/sync.ts';
import { Prober } from '../prober/prober.ts';
import { apiEnvSource } from '../runtime/env-sources.ts';
import { apiRuntimeHandler } from '../runtime/runtime-class.ts';
import { VolumeManager } from '../volumes/volume-manager.ts';
import { apiVolumeSources } from '../volumes/sources.ts';
import { apiserverSource } from '../sources/apiserver.ts';
import { fileSource } from '../sources/static-file.ts';
import { urlSource } from '../sources/static-url.ts';
import { MirrorPods } from '../pods/mirror.ts';
import { jittered } from '../backoff/backoff.ts';
import { StatusManager } from '../status/status-manager.ts';
import { healthzServer } from '../server/local-healthz.ts';
import { kubeletApiServer } from '../server/serve.ts';
import { clientCertificateRotation } from '../certificates/client-cert.ts';
import { startCollector } from '../gc/collector.ts';
import { criGCRuntime, criImageGC } from '../gc/cri.ts';
import { withPodDirs } from '../gc/disk.ts';
import { criLogRuntime, startLogRotation } from '../container-logs/rotation.ts';
import { parseQuantity } from '../resources/quantity.ts';
import { sampleCache } from '../stats/cache.ts';
import { cgroupReader } from '../stats/cgroup.ts';
import { collectSample } from '../stats/collector.ts';
import { volumeStatsSource } from '../stats/volumes.ts';
import { hostStats } from '../stats/host.ts';
import { criStatsSource } from '../stats/runtime-source.ts';
import { buildSummary } from '../stats/summary.ts';
import { startEvictionManager, type EvictionManager } from '../eviction/eviction-manager.ts';
import { parseThresholds } from '../eviction/thresholds.ts';
import { startImageGC } from '../gc/images.ts';
import { KUBEPODS_CGROUP, effectiveMaxPods, kubepodsLimits } from '../resources/node-allocatable.ts';
import { ensurePodCgroup } from '../resources/pod-cgroup.ts';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Node, Pod, Taint } from 'kubernetes-types/core/v1.js';
import { isMirrorPod, isStaticPod } from '../podutil/podutil.ts';

export interface KubeletOptions {
  kubeconfig: string;
  config: KubeletConfig;
  nodeName: string;
  certDir: string;
  nodeIP?: string;
  runtimeEndpoint: string;
  rootDir: string;
  nodeLabels: Record<string, string>;
  taints: Taint[];
  cniConfDir: string;
}


// The Kubernetes release whose kubelet behaviour kubelet-ts implements.
export const KUBELET_VERSION = 'v1.36.3';

export async function runKubelet(o: KubeletOptions): Promise<{ stop(): Promise<void> }> {
  const log = logger('kubelet');
  const nodeName = o.nodeName;
  const nodeIP = o.nodeIP || defaultNodeIP();
  if (!nodeIP) throw new Error('no --node-ip given and no non-loopback IPv4 address found on this host');
  mkdirSync(o.rootDir, { recursive: true });

  const api = apiClient(loadKubeconfig(o.kubeconfig), { userAgent: `kubelet-ts/${KUBELET_VERSION} (linux) ${nodeName}` });
  const cri = new RuntimeClient(o.runtimeEndpoint, { observer: observeRuntimeOperation });
  const images = new ImageClient(o.config.imageServiceEndpoint || o.runtimeEndpoint, { observer: observeRuntimeOperation });
  // Fail at start with one clear line rather than run against no runtime.
  const version = await cri.version({});
  log.info('Container runtime initialized', { runtime: version.runtimeName, version: version.runtimeVersion, apiVersion: version.runtimeApiVersion });
  metrics.nodeName.set({ node: nodeName }, 1);
  metrics.cgroupVersion.set(cgroupReader().version);
  collectProcessMetrics();

  const view = new RuntimeView(cri);
  const events = eventRecorder(api, { host: nodeName, log: logger('events'), onDrop: () => metrics.eventsDropped.inc() });
  let nodeUID: string | undefined;
  const mirrors = new MirrorPods(api, () => (nodeUID ? { name: nodeName, uid: nodeUID } : undefined), logger('mirror_pods'), (uid) => workers.wake(uid));
  const status = new StatusManager(api, logger('status'), {
    observe: statusMetrics,
    target: (pod) => (isStaticPod(pod) ? mirrors.mirrorUID(pod) : pod.metadata!.uid),
  });
  // Upstream's pod start-up SLI: creation to all containers running as the watch shows it, without image pulls.
  const startup = new StartupLatencyTracker(startupMetrics(log));
  const syncer = new PodSyncer({
    cri, view, images: new ImagePuller(images, { secrets: apiSecretGetter(api), log: logger('images'), observe: pullMetrics(startup) }), events, log: logger('runtime'),
    node: { podLogsDir: o.config.podLogsDir, clusterDomain: o.config.clusterDomain, clusterDNS: o.config.clusterDNS, hostDNS: readResolvConf(o.config.resolvConf), nodeIP,
      seccompDefault: o.config.seccompDefault, seccompProfileRoot: join(o.rootDir, 'seccomp'), memoryCapacity: () => parseQuantity(currentNode?.status?.capacity?.memory ?? '') },
    env: apiEnvSource(api, () => currentNode),
    volumes: new VolumeManager({ rootDir: o.rootDir, sources: apiVolumeSources(api), log: logger('volumes'), nodeAllocatable: () => currentNode?.status?.allocatable }),
    resize: {
      allocatable: () => currentNode?.status?.allocatable, checkpointFile: join(o.rootDir, 'allocated_pods_state'),
      activePods: () => { const st = workers.states(); return workers.pods().filter((p) => ['syncing', 'terminating'].includes(st.get(p.metadata!.uid!)?.state ?? '')); },
    },
    runtimeHandler: apiRuntimeHandler(api), observe: syncMetrics,
  });
  let currentNode: Node | undefined;
  // Started once the node is registered; admission and node status ask it before then.
  let eviction: EvictionManager | undefined;
  // Each pod gets ROOT/pods/UID before its first sandbox: the mark housekeeping goes by.
  // Liveness, readiness and startup probes: a changed result syncs the pod again.
  const prober = new Prober({ cri, events, log: logger('prober'), onChange: (uid) => workers.wake(uid) });
  const workers = new PodWorkers(withPodDirs(podSteps({ api, view, syncer, status, events, nodeIP, node: () => currentNode, probes: prober, allowedUnsafeSysctls: o.config.allowedUnsafeSysctls, admitUnderPressure: (pod) => eviction?.admit(pod) ?? { admit: true } }), o.rootDir), logger('pod_workers'), {
    resyncMs: o.config.syncFrequencyMs,
    observe: workerMetrics,
  });
  registerPodGauges(() => podGauges(workers.snapshot(), isStaticPod));
  const pleg = startPleg(view, {
    log: logger('pleg'),
    onEvents: (evs) => { for (const uid of new Set(evs.map((e) => e.uid))) workers.wake(uid); },
    observe: (d, i) => {
      metrics.plegRelistDuration.observe(d);
      if (i) metrics.plegRelistInterval.observe(i);
      metrics.plegLastSeen.set(Date.now() / 1000);
      const { pods, containers } = countRunning(pleg.pods());
      metrics.runningPods.set(pods);
      metrics.runningContainers.set({ container_state: 'running' }, containers);
    },
  });

  // Evented PLEG: containerd's task events wake the relist at once. On by default here
  // (upstream's EventedPLEG gate is off by default); featureGates {EventedPLEG: false}
  // leaves the 1 s relist alone, as the upstream kubelet runs.
  const taskEvents = o.config.featureGates.EventedPLEG === false ? undefined : containerdEvents(o.runtimeEndpoint, {
    log: logger('pleg'), onEvent: (e) => { if (wakesRelist(e)) pleg.kick(); }, onReconnect: () => pleg.kick(),
    observe: (ok) => (ok ? metrics.eventedPlegConnectionSuccess : metrics.eventedPlegConnectionError).inc(),
  });

  let podCIDR: string | undefined;
  const host = readHostFacts();
  if (o.config.enforceNodeAllocatable.includes('pods')) {
    try { ensurePodCgroup(KUBEPODS_CGROUP, kubepodsLimits(host, [o.config.kubeReserved, o.config.systemReserved])); } catch (e) {
      log.warn('Cannot limit the kubepods cgroup to node allocatable', { err: e });
    }
  }
  const agent = nodeAgent(api, {
    nodeName, labels: o.nodeLabels, taints: o.taints, log: logger('node_status'),
    updateEveryMs: o.config.nodeStatusUpdateFrequencyMs, reportEveryMs: o.config.nodeStatusReportFrequencyMs,
    staticInputs: {
      host, nodeIP, hostname: nodeName, kubeletVersion: KUBELET_VERSION, kubeletPort: o.config.port, maxPods: effectiveMaxPods(o.config.maxPods, o.config.podsPerCore, host.cpuCores),
      reserved: [o.config.kubeReserved, o.config.systemReserved], evictionHard: o.config.evictionHard,
    },
    fsCapacity: () => filesystemStats(o.rootDir).capacityBytes,
    pressure: () => eviction?.conditions() ?? [],
    probeRuntime: async () => {
      const r = await probeRuntime(cri, images, o.config.nodeStatusMaxImages, log);
      return { ...r, health: { ...r.health, plegProblem: pleg.problem() } };
    },
    onNode: (node) => {
      currentNode = node;
      // The owner of the Lease and of mirror pods: the Node as it is now (a re-registered Node has a new UID).
      if (node.metadata?.uid && node.metadata.uid !== nodeUID) { nodeUID = node.metadata.uid; mirrors.reconcileAll(); }
      const cidr = node.spec?.podCIDR;
      if (!cidr || cidr === podCIDR) return;
      podCIDR = cidr;
      const action = ensureCniConfig(o.cniConfDir, cidr);
      log.info('Pod CIDR of the node', { podCIDR: cidr, cniConfig: action === 'foreign' ? 'left to the installed network add-on' : action === 'write' ? 'written' : 'unchanged' });
      agent.poke();
    },
  });

  const rotation = clientCertificateRotation(api, { kubeconfig: o.kubeconfig, certDir: o.certDir, nodeName, log: logger('certificate') });
  await agent.registered;
  const lease = leaseRenewer(api, { nodeName, durationSeconds: o.config.nodeLeaseDurationSeconds, nodeUID: () => nodeUID, log: logger('lease') });
  // Two pod sources: the apiserver (whose mirror pods only mirror static pods) and staticPodPath.
  const source = apiserverSource(api, nodeName, {
    update: (pod) => {
      if (isMirrorPod(pod)) return mirrors.observe(pod);
      startup.observedOnWatch(pod);
      workers.update(pod.metadata!.uid!, pod);
    },
    remove: (uid) => { startup.forget(uid); if (!mirrors.forget(uid)) workers.update(uid, undefined); },
  }, logger('config'));
  // Static pods (from staticPodPath and staticPodURL) run with a mirror pod each.
  const staticSink = {
    update: (pod: Pod) => { workers.update(pod.metadata!.uid!, pod); mirrors.setStatic(pod); },
    remove: (uid: string) => { workers.update(uid, undefined); mirrors.removeStatic(uid); },
  };
  const files = o.config.staticPodPath ? fileSource(o.config.staticPodPath, nodeName, staticSink, logger('config'), o.config.fileCheckFrequencyMs) : undefined;
  const url = o.config.staticPodURL
    ? urlSource(o.config.staticPodURL, o.config.staticPodURLHeader, nodeName, staticSink, logger('config'), o.config.httpCheckFrequencyMs)
    : undefined;
  // Mirrors lost to a failed call or a deletion are recreated on this beat.
  const mirrorBeat = setInterval(() => mirrors.reconcileAll(), jittered(10_000, 0.2));
  // Housekeeping (2 s) and container GC (1 min). The static pod dir is read once before
  // fileSource returns, so the apiserver's first list is all sources wait for.
  const gc = startCollector({
    runtime: criGCRuntime(cri, () => view.pods(), o.config.podLogsDir), known: () => workers.states(), sourcesReady: () => source.synced(),
    rootDir: o.rootDir, podLogsDir: o.config.podLogsDir, log: logger('gc'),
    observe: {
      duration: (loop, s) => metrics.housekeepingDuration.observe({ loop }, s),
      removed: (kind, n) => metrics.garbageCollected.inc({ kind }, n),
      orphan: () => metrics.orphanedRuntimePods.inc(),
      error: (loop) => metrics.housekeepingErrors.inc({ loop }),
    },
  });
  // One stats sample cache for the kubelet API and the eviction manager (CRI stats calls are slow).
  const runtimeStats = criStatsSource(cri, images);
  const kubeletStartMs = Date.now() - process.uptime() * 1000;
  const statsLog = logger('stats');
  // The volumes' walks are cached across samples, so one source for the kubelet's life.
  const volumeStats = volumeStatsSource({ rootDir: o.rootDir, onError: (path, err) => statsLog.v(4, 'Failed to calculate volume metrics', { path, err }) });
  const stats = sampleCache(() => collectSample(runtimeStats, hostStats(), { rootDir: o.rootDir, podLogsDir: o.config.podLogsDir, kubeletStartMs, volumes: volumeStats }), { log: statsLog });
  // Image GC between imageGCLowThresholdPercent and imageGCHighThresholdPercent.
  const imageGC = startImageGC({
    ...await criImageGC(cri, images, () => view.pods(), o.rootDir),
    policy: { highThresholdPercent: o.config.imageGCHighThresholdPercent, lowThresholdPercent: o.config.imageGCLowThresholdPercent, minAgeMs: o.config.imageMinimumGCAgeMs },
    log: logger('image_gc'), observe: { removed: (n) => metrics.imageGarbageCollected.inc({ reason: 'space' }, n), error: () => metrics.imageGCErrors.inc() },
  });
  // Node pressure: conditions, reclaim, evictions (src/eviction).
  eviction = startEvictionManager({
    thresholds: parseThresholds(o.config), pressureTransitionPeriodMs: o.config.evictionPressureTransitionPeriodMs,
    maxPodGracePeriodSeconds: o.config.evictionMaxPodGracePeriod,
    summary: async (fresh) => { const s = await (fresh ? stats.fresh() : stats.get()); return buildSummary(nodeName, s.cur, s.prev); },
    facts: () => ({ memoryCapacityBytes: host.memoryBytes, allocatableMemoryBytes: parseQuantity(currentNode?.status?.allocatable?.memory ?? '') }),
    pods: () => workers.running(),
    reclaim: { containers: () => gc.collect(), images: () => imageGC.collect(true) },
    evict: (e) => workers.kill(e.pod.metadata!.uid!, { gracePeriodSeconds: e.gracePeriodSeconds, reason: e.reason, message: e.message, condition: e.condition }),
    onConditions: () => agent.poke(),
    events, node: { kind: 'Node', name: nodeName, uid: nodeName }, log: logger('eviction_manager'),
    observe: evictionMetrics,
  });
  // Container log rotation (containerLogMaxSize, validated with the config).
  const logRotation = startLogRotation({
    runtime: criLogRuntime(cri), podLogsDir: o.config.podLogsDir, log: logger('logs'),
    policy: { maxSize: parseQuantity(o.config.containerLogMaxSize)!, maxFiles: o.config.containerLogMaxFiles },
    workers: o.config.containerLogMaxWorkers, intervalMs: o.config.containerLogMonitorIntervalMs,
    observe: (result) => metrics.containerLogRotations.inc({ result }),
  });
  const healthz = await healthzServer(o.config.healthzBindAddress, o.config.healthzPort, () => pleg.problem());
  const api10250 = await kubeletApiServer({
    config: o.config, certDir: o.certDir, nodeName, nodeIP, api, pods: () => workers.pods(), runtime: (uid) => view.pod(uid), cri,
    stats, runtimeStats, healthy: () => pleg.problem(),
  });
  log.info('Started kubelet', { node: nodeName, nodeIP, version: KUBELET_VERSION });

  return {
    async stop() {
      // Pods keep running: a restarted kubelet adopts them from their CRI labels.
      clearInterval(mirrorBeat); files?.stop(); url?.stop(); gc.stop(); imageGC.stop(); eviction.stop(); stats.stop(); logRotation.stop();
      taskEvents?.stop(); rotation.stop(); source.stop(); lease.stop(); agent.stop(); pleg.stop(); workers.stop(); prober.stop(); events.stop();
      healthz.close(); api10250.close();
      cri.close(); images.close();
    },
  };
}
