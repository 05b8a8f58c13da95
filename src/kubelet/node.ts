// The node: the host prepared for pods (its facts, swap, kernel settings, the root directory's
// mount propagation, the kubelet's own OOM score) and, once every part it reports on is built,
// the Node object kept current (upstream's node status loop and Lease) with the client
// certificate rotated. CurrentNode, built first, is what every other part reads of the Node.
import { clientCertificateMetrics, heapTrimMetrics, nodeStartupMetrics } from './observers.ts';
import { CGROUP_V1_DEPRECATED, cgroupV1Refused } from '../resources/linux-resources.ts';
import { nodeRef, type Recorder } from '../events/recorder.ts';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ApiClient } from '../apiserver/client.ts';
import { clientCertificateRotation } from '../certificates/client-cert.ts';
import type { ImageClient } from '../cri/image-client.ts';
import type { RuntimeClient } from '../cri/runtime-client.ts';
import { logger, type Logger } from '../log/log.ts';
import { watchEventLoop } from '../log/event-loop.ts';
import { collectProcessMetrics, metrics } from '../metrics/metrics.ts';
import { featureSeries } from '../features/gates.ts';
import { startHeapTrim } from '../process/heap-trim.ts';
import { BRIDGE_NAME, cniConfigLogFields, ensureCniConfig } from '../network/cni-config.ts';
import { dedupKeeper, effectiveHairpinMode } from '../network/hairpin.ts';
import { startUtilChains } from '../network/iptables-util.ts';
import { podCIDRUpdater } from '../network/pod-cidr.ts';
import { nodeAgent, type NodeAgent, type NodeAgentOptions } from '../node/agent.ts';
import type { CurrentNode } from '../node/current-node.ts';
import { declaredFeatures } from '../node/declared-features.ts';
import { filesystemStats, hostAddresses, readHostFacts, type HostFacts } from '../node/host.ts';
import { nodeIPs as selectNodeIPs, parseNodeIPArgument } from '../network/ips.ts';
import { leaseRenewer } from '../node/lease.ts';
import { nodeStartupTracker } from '../node/startup-latency.ts';
import { memcgNotificationRefused } from '../eviction/memcg-notification.ts';
import { imageListCache, probeRuntime } from '../node/runtime-health.ts';
import { nodeSwapAtStart } from '../node/swap.ts';
import type { NodeSwap } from '../resources/swap.ts';
import { effectiveMaxPods } from '../resources/node-allocatable.ts';
import type { RuntimeState } from '../runtime/runtime-state.ts';
import { cgroupReader } from '../stats/cgroup.ts';
import type { HostSystem } from './host-system.ts';
import { KUBELET_VERSION, allocatableEvictionHard, type KubeletOptions } from './options.ts';

export interface Host {
  /** The node's IPs, the primary first (src/network/ips.ts). */
  nodeIPs: string[];
  facts: HostFacts;
  swap: NodeSwap;
  /** The cgroup hierarchy's version, read once at start. */
  cgroupVersion: 1 | 2;
}

// The process's own metrics, event-loop watch and heap trim: once per process, however many kubelets it
// runs (hollow nodes: prom-client refuses a second registration of the process metrics).
let processWatched = false;
function processWatches(log: Logger) {
  if (processWatched) return;
  processWatched = true;
  collectProcessMetrics();
  watchEventLoop(log);
  startHeapTrim(heapTrimMetrics);
}

/** Upstream's setupDataDirs and the host checks of its NewMainKubelet, before any part starts. */
export function prepareHost(o: KubeletOptions, log: Logger, system: HostSystem): Host {
  const { config, rootDir } = o;
  // failCgroupV1: false is what a cgroup v1 host needs, as for the upstream kubelet (metrics.cgroupVersion's reader).
  const cgroupVersion = cgroupReader().version;
  const cgroupV2 = cgroupVersion === 2;
  const v1Refused = cgroupV1Refused(config.failCgroupV1, cgroupV2) ?? memcgNotificationRefused(config.kernelMemcgNotification, cgroupV2);
  if (v1Refused) throw new Error(v1Refused);
  // --node-ip as upstream's ParseNodeIPArgument reads it: what is no IP is left out, with a word.
  const given = parseNodeIPArgument(o.nodeIP);
  if (given.invalid.length) log.info('Could not parse some node IP(s), ignoring them', { IPs: given.invalid });
  const nodeIPs = selectNodeIPs(given.ips, hostAddresses());
  const oom = system.applyOwnOOMScoreAdj(config.oomScoreAdj);
  if (oom) log.info('Failed to ApplyOOMScoreAdj', { err: oom });
  mkdirSync(rootDir, { recursive: true });
  // Shared, so that Bidirectional and HostToContainer volumeMounts work (upstream's setupDataDirs fails
  // the start; here only those mounts would, so the kubelet runs on).
  try {
    if (system.makeRShared(resolve(rootDir))) log.info('Bind-mounted the root directory with shared mount propagation', { path: rootDir });
  } catch (e) {
    log.error('Error configuring root directory', { path: rootDir, err: e });
  }
  metrics.nodeName.set({ node: o.nodeName }, 1);
  metrics.cgroupVersion.set(cgroupVersion);
  processWatches(log);
  const facts = readHostFacts(o.hostIdFiles);
  // component-base's version metric: the release kubelet-ts implements, built by Node.js (no Go, no commit of upstream's).
  const [major, minor] = KUBELET_VERSION.slice(1).split('.');
  metrics.buildInfo.set(
    {
      build_date: '',
      compiler: 'node',
      git_commit: '',
      git_tree_state: '',
      git_version: KUBELET_VERSION,
      go_version: process.version,
      major,
      minor,
      platform: `linux/${facts.architecture}`,
    },
    1,
  );
  for (const f of featureSeries(o.config.featureGates)) metrics.featureEnabled.set({ name: f.name, stage: f.stage }, f.enabled ? 1 : 0);
  // Swap (src/node/swap.ts): no start with swap on unless failSwapOn is false, as upstream; the
  // containers' swap limits follow from it.
  const swap = nodeSwapAtStart({
    failSwapOn: config.failSwapOn,
    swapBehavior: config.memorySwap.swapBehavior,
    memoryCapacityBytes: facts.memoryBytes,
    swapCapacityBytes: facts.swapBytes ?? 0,
    log,
  });
  system.setupKernelTunables(config.protectKernelDefaults, log);
  return { nodeIPs, facts, swap, cgroupVersion };
}

/** What the node status reports on, from the parts that know it. */
export type NodeReports = Pick<NodeAgentOptions, 'pressure' | 'shutdown' | 'devices' | 'volumes'> & {
  /** The PLEG's problem, if any: the runtime is then not healthy (upstream's PLEG health check). */
  plegProblem(): string | undefined;
};

/**
 * The node status' reports wired to the parts that know them: the eviction manager's pressure,
 * the shutdown manager's problem, the device plugins' capacity, the volumes in use and the PLEG's
 * health (upstream's setNodeStatusFuncs hands the same parts to its status setters).
 */
export function nodeReports(
  loops: { eviction: { conditions(): string[] }; shutdown: { shutdownStatus(): string | undefined } },
  cm: { devices: { capacity(): ReturnType<NonNullable<NodeReports['devices']>> } },
  vol: { volumesInUse(): string[]; markReportedInUse(names: string[]): void },
  lifecycle: { pleg: { problem(): string | undefined } },
): NodeReports {
  return {
    pressure: () => loops.eviction.conditions(),
    shutdown: () => loops.shutdown.shutdownStatus(),
    devices: () => cm.devices.capacity(),
    volumes: { inUse: () => vol.volumesInUse(), markReportedInUse: (n) => vol.markReportedInUse(n) },
    plegProblem: () => lifecycle.pleg.problem(),
  };
}

export interface NodeStatus {
  agent: NodeAgent;
  stop(): void;
}

/** The Node object, its status and Lease, and the client certificate (upstream's syncNodeStatus, nodeLeaseController, certificate manager). */
export function nodeStatus(
  o: KubeletOptions,
  d: {
    heartbeats: ApiClient;
    api: ApiClient;
    cri: RuntimeClient;
    images: ImageClient;
    runtimeState: RuntimeState;
    host: Host;
    node: CurrentNode;
    reports: NodeReports;
    system: Pick<HostSystem, 'setOpenFilesLimit'>;
    events: Recorder;
  },
): NodeStatus {
  const { config, nodeName } = o;
  const log = logger('kubelet');
  const ref = nodeRef(nodeName);
  // Upstream's BirthCry, and its cgroupVersionCheck's warning on a cgroup v1 host (failCgroupV1: false).
  d.events.event(ref, 'Normal', 'Starting', 'Starting kubelet.');
  if (d.host.cgroupVersion === 1) d.events.event(ref, 'Warning', 'CgroupV1', CGROUP_V1_DEPRECATED);
  const listImages = imageListCache(d.images);
  const agent = nodeAgent(d.heartbeats, {
    nodeName,
    labels: o.nodeLabels,
    taints: o.taints,
    log: logger('node_status'),
    updateEveryMs: config.nodeStatusUpdateFrequencyMs,
    reportEveryMs: config.nodeStatusReportFrequencyMs,
    staticInputs: {
      host: d.host.facts,
      nodeIPs: d.host.nodeIPs,
      cloud: { external: o.cloudProvider === 'external', providerID: config.providerID, nodeIPSpecified: !!o.nodeIP },
      hostname: nodeName,
      kubeletVersion: KUBELET_VERSION,
      kubeletPort: config.port,
      maxPods: effectiveMaxPods(config.maxPods, config.podsPerCore, d.host.facts.cpuCores),
      reserved: [config.kubeReserved, config.systemReserved],
      evictionHard: allocatableEvictionHard(o),
      localStorageCapacityIsolation: config.localStorageCapacityIsolation,
      declaredFeatures: declaredFeatures(config.featureGates),
    },
    fsCapacity: () => filesystemStats(o.rootDir).capacityBytes,
    ...d.reports,
    probeRuntime: async () => {
      const r = await probeRuntime(d.cri, listImages, config.nodeStatusMaxImages, log, (st, ready) => d.runtimeState.probed(st, ready));
      return { ...r, health: { ...r.health, plegProblem: d.reports.plegProblem() } };
    },
    // Both features' gates (RecursiveReadOnlyMounts GA, UserNamespacesSupport beta) are on: always published.
    runtimeHandlers: () => d.runtimeState.known(),
    onNode: (n) => d.node.set(n),
    event: (e) => d.events.event(ref, e.type, e.reason, e.message),
    register: config.registerNode,
    controllerAttachDetach: config.enableControllerAttachDetach,
    startup: nodeStartupTracker(
      { bootMs: d.host.facts.bootTimeMs, kubeletStartMs: Date.now() - process.uptime() * 1000 },
      nodeStartupMetrics,
    ),
  });
  // The pod CIDR to the runtime: the config's at start, then the Node's (upstream's updatePodCIDR).
  const runtimePodCIDR = podCIDRUpdater(d.cri, log);
  void runtimePodCIDR(config.podCIDR);
  d.node.onNewPodCIDR((cidr) => void runtimePodCIDR(cidr));
  // --network-plugin=kubenet: a bridge network for the podCIDR, unless an add-on installed one.
  // maxOpenFiles, once every part is built, as upstream's RunKubelet before startKubelet (so a start
  // refused earlier, the runtime unreachable say, says that one line only).
  const nofile = d.system.setOpenFilesLimit(config.maxOpenFiles);
  if (nofile) log.error('Failed to set rlimit on max file handles', { maxOpenFiles: config.maxOpenFiles, err: nofile });
  // makeIPTablesUtilChains: the hint and KUBE-FIREWALL chains other components rely on, as upstream's Run.
  const utilChains = config.makeIPTablesUtilChains ? startUtilChains(logger('iptables')) : undefined;
  // hairpinMode sets the bridge's hairpin or promiscuous mode; a promiscuous bridge gets kubenet's
  // ebtables dedup rules, looked at each 10 s (the bridge appears with the first pod).
  let dedup: NodeJS.Timeout | undefined;
  if (o.networkPlugin === 'kubenet') {
    const hairpin = effectiveHairpinMode(config.hairpinMode, o.networkPlugin);
    const keepDedup = hairpin === 'promiscuous-bridge' ? dedupKeeper(BRIDGE_NAME, logger('kubenet')) : undefined;
    d.node.onNewPodCIDR((podCIDR) => {
      const action = ensureCniConfig(o.cniConfDir, podCIDR, hairpin);
      log.info('Pod CIDR of the node', { ...cniConfigLogFields(podCIDR, action), hairpinMode: hairpin });
      agent.poke();
      clearInterval(dedup);
      if (keepDedup && action !== 'foreign') {
        void keepDedup(podCIDR);
        dedup = setInterval(() => void keepDedup(podCIDR), 10_000);
        dedup.unref();
      }
    });
  }
  // rotateCertificates (kubeadm sets it): without it the bootstrapped certificate is used until
  // it expires, and no client certificate series is served (upstream's buildKubeletClientConfig).
  const rotation = config.rotateCertificates
    ? clientCertificateRotation(d.api, {
        kubeconfig: o.kubeconfig,
        bootstrapKubeconfig: o.bootstrapKubeconfig,
        certDir: o.certDir,
        nodeName,
        log: logger('certificate'),
        observe: clientCertificateMetrics(),
      })
    : undefined;
  // Nothing waits for the registration: static pods run while the apiserver is unreachable (on a
  // kubeadm control-plane node the apiserver is one of them), as upstream. The Lease gets the
  // Node as its owner once there is one.
  const lease = leaseRenewer(d.heartbeats, {
    nodeName,
    durationSeconds: config.nodeLeaseDurationSeconds,
    nodeUID: () => d.node.uid(),
    log: logger('lease'),
  });
  return {
    agent,
    stop() {
      clearInterval(dedup);
      utilChains?.stop();
      rotation?.stop();
      lease.stop();
      agent.stop();
    },
  };
}
