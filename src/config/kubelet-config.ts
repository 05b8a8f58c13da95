// KubeletConfiguration (kubelet.config.k8s.io/v1beta1): the file named by --config, with
// upstream field names and defaults. Unknown fields and wrong types are errors naming
// the field path, as upstream's strict decoding does.
import { parse } from 'yaml';
import { goDuration, parseDuration } from './duration.ts';
import { serverTLS } from './tls-options.ts';
import { parseQuantity } from '../resources/quantity.ts';
import { parseThresholds } from '../eviction/thresholds.ts';
import { isSignal } from '../eviction/types.ts';
import { shutdownConfigError, type ShutdownGracePeriodByPodPriority } from '../nodeshutdown/periods.ts';

export interface KubeletConfig {
  staticPodPath: string;
  staticPodURL: string;
  staticPodURLHeader: Record<string, string[]>;
  syncFrequencyMs: number;
  fileCheckFrequencyMs: number;
  httpCheckFrequencyMs: number;
  featureGates: Record<string, boolean>;
  clusterDomain: string;
  clusterDNS: string[];
  cgroupDriver: 'cgroupfs' | 'systemd';
  cgroupRoot: string;
  nodeStatusUpdateFrequencyMs: number;
  nodeStatusReportFrequencyMs: number;
  nodeLeaseDurationSeconds: number;
  nodeStatusMaxImages: number;
  maxPods: number;
  /** Pods per CPU core (0: no limit but maxPods). */
  podsPerCore: number;
  /** pids.max of each pod's cgroup (src/resources/pod-cgroup.ts); -1: no limit. */
  podPidsLimit: number;
  /** CFS quota for the cpu limits of containers and pod cgroups (src/resources/linux-resources.ts CFS); false: none enforced. */
  cpuCFSQuota: boolean;
  /** The CFS period of those quotas (cpu.cfs_period_us), 1 ms to 1 s. */
  cpuCFSQuotaPeriodMs: number;
  /** One image pull at a time (upstream's default); false: at most maxParallelImagePulls (unset: no limit). src/images/pull-slots.ts. */
  serializeImagePulls: boolean;
  maxParallelImagePulls?: number;
  /** Refuse to start when the kernel's settings differ from upstream's, instead of writing them (src/node/kernel-tunables.ts). */
  protectKernelDefaults: boolean;
  /** The kubelet's own oom_score_adj (src/node/oom-score.ts). */
  oomScoreAdj: number;
  /** The event client's limit (src/events/recorder.ts): events per second, and at once; 0 qps: no limit. */
  eventRecordQPS: number;
  eventBurst: number;
  /** The kubelet's apiserver requests per second, and at once (src/apiserver/rate-limited.ts); 0 qps: no limit. */
  kubeAPIQPS: number;
  kubeAPIBurst: number;
  /** Image pulls begun per second, and at once (src/images/puller.ts); 0 qps: no limit. */
  registryPullQPS: number;
  registryBurst: number;
  /** The :10250 server's lowest TLS version and its TLS 1.2 suites, in Go's names (src/config/tls-options.ts). */
  tlsMinVersion: string;
  tlsCipherSuites: string[];
  healthzPort: number;
  healthzBindAddress: string;
  port: number;
  /** The read-only port (plain HTTP, no auth, src/server/read-only.ts); 0 serves none. */
  readOnlyPort: number;
  podLogsDir: string;
  /** Container log rotation (src/container-logs): a quantity such as 10Mi; negative turns rotation off. */
  containerLogMaxSize: string;
  containerLogMaxFiles: number;
  containerLogMaxWorkers: number;
  containerLogMonitorIntervalMs: number;
  runtimeRequestTimeoutMs: number;
  registerNode: boolean;
  registerWithTaints: { key: string; value?: string; effect: string }[];
  containerRuntimeEndpoint: string;
  imageServiceEndpoint: string;
  resolvConf: string;
  evictionHard: Record<string, string>;
  /** Eviction (src/eviction): soft thresholds with their grace periods, minimum reclaim, and the condition hysteresis. */
  evictionSoft: Record<string, string>;
  evictionSoftGracePeriod: Record<string, string>;
  evictionMinimumReclaim: Record<string, string>;
  evictionPressureTransitionPeriodMs: number;
  evictionMaxPodGracePeriod: number;
  enforceNodeAllocatable: string[];
  /** Image garbage collection (src/gc/images.ts). */
  imageGCHighThresholdPercent: number;
  imageGCLowThresholdPercent: number;
  imageMinimumGCAgeMs: number;
  systemReserved: Record<string, string>;
  kubeReserved: Record<string, string>;
  address: string;
  tlsCertFile: string;
  tlsPrivateKeyFile: string;
  serverTLSBootstrap: boolean;
  authentication: { x509ClientCAFile: string; webhookEnabled: boolean; webhookCacheTTLMs: number; anonymousEnabled: boolean };
  authorization: { mode: 'AlwaysAllow' | 'Webhook'; cacheAuthorizedTTLMs: number; cacheUnauthorizedTTLMs: number };
  /** Sysctls (or prefixes ending in *) pods may set beyond the safe ones. */
  allowedUnsafeSysctls: string[];
  /** RuntimeDefault instead of Unconfined for containers that name no seccomp profile. */
  seccompDefault: boolean;
  /** System containers (src/node/system-cgroups.ts): the kubelet's cgroup, and the one for the root cgroup's other processes. */
  kubeletCgroups: string;
  systemCgroups: string;
  /** /logs/ (src/server/system-logs.ts); false answers it with 405. */
  enableSystemLogHandler: boolean;
  /** The node log query on /logs/ (src/server/node-logs.ts, NodeLogQuery); needs enableSystemLogHandler. */
  enableSystemLogQuery: boolean;
  /** Refuse to start while swap is on (src/node/swap.ts). */
  failSwapOn: boolean;
  /**
   * Unset: on cgroup v2 an OOM kill takes the whole container (memory.oom.group), on v1 one
   * process (src/resources/linux-resources.ts singleProcessOOMKill); false is refused on v1.
   */
  singleProcessOOMKill?: boolean;
  /** Swap for containers (src/resources/swap.ts): NoSwap ('' too) or LimitedSwap. */
  memorySwap: { swapBehavior: string };
  /** Graceful node shutdown (src/nodeshutdown): 0 and no list (the default) leave it off. */
  shutdownGracePeriodMs: number;
  shutdownGracePeriodCriticalPodsMs: number;
  shutdownGracePeriodByPodPriority: ShutdownGracePeriodByPodPriority[];
}

export const defaults: KubeletConfig = {
  staticPodPath: '',
  staticPodURL: '',
  staticPodURLHeader: {},
  syncFrequencyMs: 60_000,
  fileCheckFrequencyMs: 20_000,
  httpCheckFrequencyMs: 20_000,
  featureGates: {},
  clusterDomain: '',
  clusterDNS: [],
  cgroupDriver: 'cgroupfs',
  cgroupRoot: '/',
  nodeStatusUpdateFrequencyMs: 10_000,
  nodeStatusReportFrequencyMs: 300_000,
  nodeLeaseDurationSeconds: 40,
  nodeStatusMaxImages: 50,
  maxPods: 110,
  podPidsLimit: -1,
  cpuCFSQuota: true,
  cpuCFSQuotaPeriodMs: 100,
  oomScoreAdj: -999,
  eventRecordQPS: 50,
  eventBurst: 100,
  registryPullQPS: 5,
  registryBurst: 10,
  kubeAPIQPS: 50,
  kubeAPIBurst: 100,
  protectKernelDefaults: false,
  serializeImagePulls: true,
  tlsMinVersion: '',
  tlsCipherSuites: [],
  podsPerCore: 0,
  healthzPort: 10248,
  healthzBindAddress: '127.0.0.1',
  port: 10250,
  readOnlyPort: 0,
  podLogsDir: '/var/log/pods',
  containerLogMaxSize: '10Mi',
  containerLogMaxFiles: 5,
  containerLogMaxWorkers: 1,
  containerLogMonitorIntervalMs: 10_000,
  runtimeRequestTimeoutMs: 120_000,
  registerNode: true,
  registerWithTaints: [],
  containerRuntimeEndpoint: 'unix:///run/containerd/containerd.sock',
  imageServiceEndpoint: '',
  resolvConf: '/etc/resolv.conf',
  evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '10%', 'nodefs.inodesFree': '5%', 'imagefs.available': '15%' },
  evictionSoft: {},
  evictionSoftGracePeriod: {},
  evictionMinimumReclaim: {},
  evictionPressureTransitionPeriodMs: 300_000,
  evictionMaxPodGracePeriod: 0,
  enforceNodeAllocatable: ['pods'],
  imageGCHighThresholdPercent: 85,
  imageGCLowThresholdPercent: 80,
  imageMinimumGCAgeMs: 120_000,
  systemReserved: {},
  kubeReserved: {},
  address: '0.0.0.0',
  tlsCertFile: '',
  tlsPrivateKeyFile: '',
  serverTLSBootstrap: false,
  authentication: { x509ClientCAFile: '', webhookEnabled: true, webhookCacheTTLMs: 120_000, anonymousEnabled: false },
  authorization: { mode: 'Webhook', cacheAuthorizedTTLMs: 300_000, cacheUnauthorizedTTLMs: 30_000 },
  allowedUnsafeSysctls: [],
  seccompDefault: false,
  kubeletCgroups: '',
  systemCgroups: '',
  enableSystemLogHandler: true,
  enableSystemLogQuery: false,
  failSwapOn: true,
  memorySwap: { swapBehavior: '' },
  shutdownGracePeriodMs: 0,
  shutdownGracePeriodCriticalPodsMs: 0,
  shutdownGracePeriodByPodPriority: [],
};

type Kind =
  | 'string'
  | 'int'
  | 'number'
  | 'bool'
  | 'duration'
  | 'strings'
  | 'stringMap'
  | 'stringsMap'
  | 'boolMap'
  | 'object'
  | 'list'
  | 'authentication'
  | 'authorization'
  | 'memorySwap'
  | 'shutdownPeriods';
const accepted = (kind: Kind, names: string) => Object.fromEntries(names.split(/\s+/).map((n) => [n, [kind] as [Kind]]));
// Fields read today map to a KubeletConfig key; the rest of upstream's fields are
// accepted (a kubeadm-written file carries many of them) and take effect as features land.
const fields: Record<string, [Kind, (keyof KubeletConfig)?]> = {
  staticPodPath: ['string', 'staticPodPath'],
  staticPodURL: ['string', 'staticPodURL'],
  staticPodURLHeader: ['stringsMap', 'staticPodURLHeader'],
  httpCheckFrequency: ['duration', 'httpCheckFrequencyMs'],
  featureGates: ['boolMap', 'featureGates'],
  syncFrequency: ['duration', 'syncFrequencyMs'],
  fileCheckFrequency: ['duration', 'fileCheckFrequencyMs'],
  clusterDomain: ['string', 'clusterDomain'],
  clusterDNS: ['strings', 'clusterDNS'],
  cgroupDriver: ['string', 'cgroupDriver'],
  cgroupRoot: ['string', 'cgroupRoot'],
  nodeStatusUpdateFrequency: ['duration', 'nodeStatusUpdateFrequencyMs'],
  nodeStatusReportFrequency: ['duration', 'nodeStatusReportFrequencyMs'],
  nodeLeaseDurationSeconds: ['int', 'nodeLeaseDurationSeconds'],
  nodeStatusMaxImages: ['int', 'nodeStatusMaxImages'],
  maxPods: ['int', 'maxPods'],
  podPidsLimit: ['int', 'podPidsLimit'],
  cpuCFSQuota: ['bool', 'cpuCFSQuota'],
  cpuCFSQuotaPeriod: ['duration', 'cpuCFSQuotaPeriodMs'],
  oomScoreAdj: ['int', 'oomScoreAdj'],
  eventRecordQPS: ['int', 'eventRecordQPS'],
  eventBurst: ['int', 'eventBurst'],
  registryPullQPS: ['int', 'registryPullQPS'],
  registryBurst: ['int', 'registryBurst'],
  kubeAPIQPS: ['int', 'kubeAPIQPS'],
  kubeAPIBurst: ['int', 'kubeAPIBurst'],
  protectKernelDefaults: ['bool', 'protectKernelDefaults'],
  serializeImagePulls: ['bool', 'serializeImagePulls'],
  maxParallelImagePulls: ['int', 'maxParallelImagePulls'],
  tlsMinVersion: ['string', 'tlsMinVersion'],
  tlsCipherSuites: ['strings', 'tlsCipherSuites'],
  podsPerCore: ['int', 'podsPerCore'],
  healthzPort: ['int', 'healthzPort'],
  healthzBindAddress: ['string', 'healthzBindAddress'],
  port: ['int', 'port'],
  readOnlyPort: ['int', 'readOnlyPort'],
  podLogsDir: ['string', 'podLogsDir'],
  containerLogMaxSize: ['string', 'containerLogMaxSize'],
  containerLogMaxFiles: ['int', 'containerLogMaxFiles'],
  containerLogMaxWorkers: ['int', 'containerLogMaxWorkers'],
  containerLogMonitorInterval: ['duration', 'containerLogMonitorIntervalMs'],
  runtimeRequestTimeout: ['duration', 'runtimeRequestTimeoutMs'],
  registerNode: ['bool', 'registerNode'],
  registerWithTaints: ['list', 'registerWithTaints'],
  containerRuntimeEndpoint: ['string', 'containerRuntimeEndpoint'],
  imageServiceEndpoint: ['string', 'imageServiceEndpoint'],
  resolvConf: ['string', 'resolvConf'],
  evictionHard: ['stringMap', 'evictionHard'],
  evictionSoft: ['stringMap', 'evictionSoft'],
  evictionSoftGracePeriod: ['stringMap', 'evictionSoftGracePeriod'],
  evictionMinimumReclaim: ['stringMap', 'evictionMinimumReclaim'],
  evictionPressureTransitionPeriod: ['duration', 'evictionPressureTransitionPeriodMs'],
  evictionMaxPodGracePeriod: ['int', 'evictionMaxPodGracePeriod'],
  enforceNodeAllocatable: ['strings', 'enforceNodeAllocatable'],
  imageGCHighThresholdPercent: ['int', 'imageGCHighThresholdPercent'],
  imageGCLowThresholdPercent: ['int', 'imageGCLowThresholdPercent'],
  imageMinimumGCAge: ['duration', 'imageMinimumGCAgeMs'],
  systemReserved: ['stringMap', 'systemReserved'],
  kubeReserved: ['stringMap', 'kubeReserved'],
  address: ['string', 'address'],
  tlsCertFile: ['string', 'tlsCertFile'],
  tlsPrivateKeyFile: ['string', 'tlsPrivateKeyFile'],
  serverTLSBootstrap: ['bool', 'serverTLSBootstrap'],
  authentication: ['authentication', 'authentication'],
  authorization: ['authorization', 'authorization'],
  allowedUnsafeSysctls: ['strings', 'allowedUnsafeSysctls'],
  seccompDefault: ['bool', 'seccompDefault'],
  kubeletCgroups: ['string', 'kubeletCgroups'],
  systemCgroups: ['string', 'systemCgroups'],
  enableSystemLogHandler: ['bool', 'enableSystemLogHandler'],
  enableSystemLogQuery: ['bool', 'enableSystemLogQuery'],
  failSwapOn: ['bool', 'failSwapOn'],
  singleProcessOOMKill: ['bool', 'singleProcessOOMKill'],
  memorySwap: ['memorySwap', 'memorySwap'],
  shutdownGracePeriod: ['duration', 'shutdownGracePeriodMs'],
  shutdownGracePeriodCriticalPods: ['duration', 'shutdownGracePeriodCriticalPodsMs'],
  shutdownGracePeriodByPodPriority: ['shutdownPeriods', 'shutdownGracePeriodByPodPriority'],
  // Upstream's other fields: type-checked now, in effect as their features land.
  ...accepted(
    'bool',
    `enableServer rotateCertificates enableDebuggingHandlers enableContentionProfiling cgroupsPerQOS runOnce mergeDefaultEvictionSettings enableControllerAttachDetach makeIPTablesUtilChains kernelMemcgNotification enableProfilingHandler enableDebugFlagsHandler localStorageCapacityIsolation failCgroupV1`,
  ),
  ...accepted('int', `maxOpenFiles iptablesMasqueradeBit iptablesDropBit`),
  ...accepted('number', `memoryThrottlingFactor`),
  ...accepted('duration', `streamingConnectionIdleTimeout imageMaximumGCAge volumeStatsAggPeriod cpuManagerReconcilePeriod`),
  ...accepted(
    'string',
    `imagePullCredentialsVerificationPolicy cpuManagerPolicy memoryManagerPolicy topologyManagerPolicy topologyManagerScope hairpinMode podCIDR contentType configMapAndSecretChangeDetectionStrategy reservedSystemCPUs showHiddenMetricsForVersion systemReservedCgroup kubeReservedCgroup volumePluginDir providerID`,
  ),
  ...accepted('strings', `preloadedImagesVerificationAllowlist`),
  ...accepted('stringMap', `cpuManagerPolicyOptions topologyManagerPolicyOptions qosReserved`),
  ...accepted('list', `reservedMemory`),
  ...accepted('object', `logging crashLoopBackOff tracing userNamespaces`),
};

export class ConfigError extends Error {}

function convert(path: string, kind: Kind, v: unknown): unknown {
  const bad = (want: string) => new ConfigError(`${path}: expected ${want}, got ${JSON.stringify(v)}`);
  switch (kind) {
    case 'string':
      if (typeof v !== 'string') throw bad('a string');
      return v;
    case 'int':
      if (!Number.isInteger(v)) throw bad('an integer');
      return v;
    case 'number':
      if (typeof v !== 'number') throw bad('a number');
      return v;
    case 'bool':
      if (typeof v !== 'boolean') throw bad('true or false');
      return v;
    case 'duration': {
      const ms = typeof v === 'string' ? parseDuration(v) : undefined;
      if (ms === undefined || ms < 0) throw bad('a duration such as "10s" or "1m0s"');
      return ms;
    }
    case 'strings':
      if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) throw bad('a list of strings');
      return v;
    case 'stringMap':
      if (!v || typeof v !== 'object' || Array.isArray(v) || Object.values(v).some((s) => typeof s !== 'string'))
        throw bad('a map of strings');
      return v;
    case 'stringsMap':
      if (
        !v ||
        typeof v !== 'object' ||
        Array.isArray(v) ||
        Object.values(v).some((l) => !Array.isArray(l) || l.some((s) => typeof s !== 'string'))
      )
        throw bad('a map of string lists');
      return v;
    case 'boolMap':
      if (!v || typeof v !== 'object' || Array.isArray(v) || Object.values(v).some((b) => typeof b !== 'boolean'))
        throw bad('a map of true/false');
      return v;
    case 'list':
      if (!Array.isArray(v)) throw bad('a list');
      return v;
    case 'object':
      if (!v || typeof v !== 'object' || Array.isArray(v)) throw bad('a mapping');
      return v;
    case 'authentication': {
      const a = nested(path, v, {
        x509: { clientCAFile: 'string' },
        webhook: { enabled: 'bool', cacheTTL: 'duration' },
        anonymous: { enabled: 'bool' },
      });
      const d = defaults.authentication;
      return {
        x509ClientCAFile: a['x509.clientCAFile'] || d.x509ClientCAFile,
        webhookEnabled: a['webhook.enabled'] ?? d.webhookEnabled,
        webhookCacheTTLMs: a['webhook.cacheTTL'] || d.webhookCacheTTLMs,
        anonymousEnabled: a['anonymous.enabled'] ?? d.anonymousEnabled,
      };
    }
    case 'authorization': {
      const a = nested(path, v, { mode: 'string', webhook: { cacheAuthorizedTTL: 'duration', cacheUnauthorizedTTL: 'duration' } });
      const d = defaults.authorization;
      const mode = a.mode ?? d.mode;
      if (mode !== 'AlwaysAllow' && mode !== 'Webhook')
        throw new ConfigError(`${path}.mode: expected AlwaysAllow or Webhook, got ${JSON.stringify(mode)}`);
      return {
        // A zero TTL is "unset" (kubeadm writes 0s): upstream's defaults apply.
        mode,
        cacheAuthorizedTTLMs: a['webhook.cacheAuthorizedTTL'] || d.cacheAuthorizedTTLMs,
        cacheUnauthorizedTTLMs: a['webhook.cacheUnauthorizedTTL'] || d.cacheUnauthorizedTTLMs,
      };
    }
    case 'memorySwap':
      return { swapBehavior: nested(path, v, { swapBehavior: 'string' }).swapBehavior ?? defaults.memorySwap.swapBehavior };
    case 'shutdownPeriods':
      if (!Array.isArray(v)) throw bad('a list');
      // Each entry strictly, as upstream's decoding: both fields integers, no others.
      return v.map((e, i) => {
        const f = nested(`${path}[${i}]`, e, { priority: 'int', shutdownGracePeriodSeconds: 'int' });
        return { priority: (f.priority as number) ?? 0, shutdownGracePeriodSeconds: (f.shutdownGracePeriodSeconds as number) ?? 0 };
      });
  }
}

type Schema = { [k: string]: Kind | Schema };
/** Flattens a nested section into "a.b" keys, converting each leaf and refusing unknown keys. */
function nested(path: string, v: unknown, schema: Schema): Record<string, unknown> {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new ConfigError(`${path}: expected a mapping, got ${JSON.stringify(v)}`);
  const out: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(v)) {
    const sub = schema[k];
    if (!sub) throw new ConfigError(`${path}: unknown field "${k}"`);
    if (typeof sub === 'string') out[k] = convert(`${path}.${k}`, sub, val);
    else for (const [kk, vv] of Object.entries(nested(`${path}.${k}`, val, sub))) out[`${k}.${kk}`] = vv;
  }
  return out;
}

/** upstream's SetDefaults_KubeletConfiguration: these take their default when 0 (`if obj.X == 0`). */
const ZERO_IS_UNSET = new Set([
  'port',
  'registryBurst',
  'eventBurst',
  'nodeLeaseDurationSeconds',
  'maxPods',
  'maxOpenFiles',
  'kubeAPIBurst',
]);

/** Pure: parses a KubeletConfiguration document over the defaults. */
export function parseKubeletConfig(text: string, source = 'config'): KubeletConfig {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (e) {
    throw new ConfigError(`${source}: invalid YAML: ${(e as Error).message}`);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new ConfigError(`${source}: not a KubeletConfiguration mapping`);
  const { apiVersion, kind, ...rest } = doc as Record<string, unknown>;
  if (kind !== 'KubeletConfiguration') throw new ConfigError(`${source}: kind: expected KubeletConfiguration, got ${JSON.stringify(kind)}`);
  if (apiVersion !== 'kubelet.config.k8s.io/v1beta1' && apiVersion !== 'kubelet.config.k8s.io/v1') {
    throw new ConfigError(`${source}: apiVersion: expected kubelet.config.k8s.io/v1beta1, got ${JSON.stringify(apiVersion)}`);
  }
  const out: Record<string, unknown> = { ...defaults };
  for (const [name, value] of Object.entries(rest)) {
    const spec = fields[name];
    if (!spec) throw new ConfigError(`${source}: unknown field "${name}"`);
    const converted = convert(name, spec[0], value);
    // As upstream's defaulting: an empty string or zero duration (what kubeadm writes for
    // "unset", e.g. containerRuntimeEndpoint: "") takes the default, and so does a zero in the
    // int fields SetDefaults_KubeletConfiguration defaults on 0.
    const unset = value === null || value === '' || (converted === 0 && (spec[0] === 'duration' || ZERO_IS_UNSET.has(name)));
    if (spec[1] && !unset) out[spec[1]] = converted;
  }
  const cfg = out as unknown as KubeletConfig;
  const problem = invalidValue(cfg, rest);
  if (problem) throw new ConfigError(`${source}: ${problem}`);
  return cfg;
}

/** Pure: the first value upstream's ValidateKubeletConfiguration would refuse, as "field: reason". */
export function invalidValue(c: KubeletConfig, raw: Record<string, unknown>): string | undefined {
  const int = (f: string) => raw[f] as number | undefined;
  const checks: [boolean, string][] = [
    [
      c.cgroupDriver !== 'cgroupfs' && c.cgroupDriver !== 'systemd',
      `cgroupDriver: expected cgroupfs or systemd, got ${JSON.stringify(c.cgroupDriver)}`,
    ],
    [c.maxPods <= 0, 'maxPods: must be positive'],
    [c.port < 1 || c.port > 65535, `port: ${c.port} must be between 1 and 65535`],
    [c.healthzPort < 0 || c.healthzPort > 65535, `healthzPort: ${c.healthzPort} must be between 0 and 65535, inclusive`],
    [c.readOnlyPort < 0 || c.readOnlyPort > 65535, `readOnlyPort: ${c.readOnlyPort} must be between 0 and 65535, inclusive`],
    [c.nodeLeaseDurationSeconds <= 0, 'nodeLeaseDurationSeconds: must be greater than 0'],
    [c.nodeStatusMaxImages < -1, 'nodeStatusMaxImages: must be -1 (no limit) or more'],
    [
      (int('imageGCHighThresholdPercent') ?? 85) < 0 || (int('imageGCHighThresholdPercent') ?? 85) > 100,
      'imageGCHighThresholdPercent: must be between 0 and 100, inclusive',
    ],
    [
      (int('imageGCLowThresholdPercent') ?? 80) < 0 || (int('imageGCLowThresholdPercent') ?? 80) > 100,
      'imageGCLowThresholdPercent: must be between 0 and 100, inclusive',
    ],
    [
      (int('imageGCLowThresholdPercent') ?? 80) >= (int('imageGCHighThresholdPercent') ?? 85),
      'imageGCLowThresholdPercent: must be less than imageGCHighThresholdPercent',
    ],
    [c.podPidsLimit < -1, 'podPidsLimit: must be -1 (no limit) or more'],
    // CustomCPUCFSQuotaPeriod is GA (on) in v1.36: off, only the default period is allowed.
    [
      c.featureGates.CustomCPUCFSQuotaPeriod === false && c.cpuCFSQuotaPeriodMs !== 100,
      `invalid configuration: cpuCFSQuotaPeriod (--cpu-cfs-quota-period) ${goDuration(c.cpuCFSQuotaPeriodMs)} requires feature gate CustomCPUCFSQuotaPeriod`,
    ],
    [
      c.featureGates.CustomCPUCFSQuotaPeriod !== false && (c.cpuCFSQuotaPeriodMs < 1 || c.cpuCFSQuotaPeriodMs > 1000),
      `invalid configuration: cpuCFSQuotaPeriod (--cpu-cfs-quota-period) ${goDuration(c.cpuCFSQuotaPeriodMs)} must be between 1ms and 1sec, inclusive`,
    ],
    [(c.maxParallelImagePulls ?? 1) < 1, `maxParallelImagePulls: ${c.maxParallelImagePulls} must be a positive number`],
    [
      c.serializeImagePulls && (c.maxParallelImagePulls ?? 1) > 1,
      'maxParallelImagePulls: cannot be larger than 1 unless serializeImagePulls is set to false',
    ],
    [c.kubeAPIBurst < 0, `kubeAPIBurst (--kube-api-burst) ${c.kubeAPIBurst} must not be a negative number`],
    [c.kubeAPIQPS < 0, `kubeAPIQPS (--kube-api-qps) ${c.kubeAPIQPS} must not be a negative number`],
    [c.registryBurst < 0, `registryBurst (--registry-burst) ${c.registryBurst} must not be a negative number`],
    [c.registryPullQPS < 0, `registryPullQPS (--registry-qps) ${c.registryPullQPS} must not be a negative number`],
    [c.eventBurst < 0, `eventBurst (--event-burst) ${c.eventBurst} must not be a negative number`],
    [c.eventRecordQPS < 0, `eventRecordQPS (--event-qps) ${c.eventRecordQPS} must not be a negative number`],
    [c.oomScoreAdj < -1000 || c.oomScoreAdj > 1000, `oomScoreAdj: ${c.oomScoreAdj} must be between -1000 and 1000, inclusive`],
    // Upstream's container log checks (ValidateKubeletConfiguration, NewContainerLogManager).
    [parseQuantity(c.containerLogMaxSize) === undefined, `containerLogMaxSize: ${JSON.stringify(c.containerLogMaxSize)} is not a quantity`],
    [c.containerLogMaxFiles <= 1, `containerLogMaxFiles: ${c.containerLogMaxFiles} must be greater than 1`],
    [c.containerLogMaxWorkers < 1, `containerLogMaxWorkers: ${c.containerLogMaxWorkers} must be greater than or equal to 1`],
    [c.containerLogMonitorIntervalMs < 3000, 'containerLogMonitorInterval: must be a positive time duration greater than or equal to 3s'],
    [
      c.nodeStatusReportFrequencyMs < c.nodeStatusUpdateFrequencyMs && raw.nodeStatusReportFrequency !== undefined,
      'nodeStatusReportFrequency: must not be shorter than nodeStatusUpdateFrequency',
    ],
    // Upstream's ValidateKubeletConfiguration on the node log query.
    [
      c.enableSystemLogQuery && c.featureGates.NodeLogQuery === false,
      'enableSystemLogQuery: NodeLogQuery feature gate is required for enableSystemLogQuery',
    ],
    [
      c.enableSystemLogQuery && !c.enableSystemLogHandler,
      'enableSystemLogQuery: enableSystemLogHandler is required for enableSystemLogQuery',
    ],
  ];
  for (const [bad, why] of checks) if (bad) return why;
  // What upstream's server.go refuses at start (cliflag.TLSVersion, cliflag.TLSCipherSuites).
  for (const [field, check] of [
    ['tlsMinVersion', () => serverTLS(c.tlsMinVersion, [])],
    ['tlsCipherSuites', () => serverTLS('', c.tlsCipherSuites)],
  ] as const) {
    try {
      check();
    } catch (e) {
      return `${field}: ${(e as Error).message}`;
    }
  }
  // Upstream's ValidateKubeletConfiguration on graceful node shutdown.
  const shutdown = shutdownConfigError(c);
  if (shutdown) return shutdown;
  // Upstream's ValidateKubeletConfiguration (NodeSwap is GA).
  if (!['', 'NoSwap', 'LimitedSwap'].includes(c.memorySwap.swapBehavior))
    return `memorySwap.swapBehavior: ${JSON.stringify(c.memorySwap.swapBehavior)} must be one of: "", "LimitedSwap" or "NoSwap"`;
  for (const m of ['evictionHard', 'evictionSoft'] as const) {
    const unknown = Object.keys((raw[m] as Record<string, string> | undefined) ?? {}).find((k) => !isSignal(k));
    if (unknown) return `${m}: unknown eviction signal "${unknown}"`;
  }
  // Upstream parses the thresholds at start-up: a bad quantity or a soft threshold without a grace period stops it.
  try {
    parseThresholds(c);
  } catch (e) {
    return `eviction thresholds: ${(e as Error).message}`;
  }
  return undefined;
}
