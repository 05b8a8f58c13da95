// KubeletConfiguration (kubelet.config.k8s.io/v1beta1): the file named by --config, with
// upstream field names and defaults. Unknown fields and wrong types are errors naming the
// field path, as upstream's strict decoding does.
//
// FIELDS is the one list of the fields kubelet-ts maps: each row gives the field's codec
// (YAML/JSON form in, the v1beta1 form /configz writes out), its default
// (SetDefaults_KubeletConfiguration), its own checks (ValidateKubeletConfiguration) and whether
// anything reads it yet. The KubeletConfig type, `defaults`, parsing and /configz all derive
// from it, so a new field is one row. The YAML name is the row's key, but a duration's key ends
// in Ms (syncFrequencyMs reads syncFrequency).
import { isDeepStrictEqual } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { goDuration } from '../apiserver/duration.ts';
import { serverTLS } from './tls-options.ts';
import { featureEnabled } from '../features/gates.ts';
import { parseQuantity } from '../resources/quantity.ts';
import { invalidEnforcement } from '../resources/node-allocatable.ts';
import { parseThresholds } from '../eviction/thresholds.ts';
import { isSignal } from '../eviction/types.ts';
import { shutdownConfigError, type ShutdownGracePeriodByPodPriority } from '../nodeshutdown/periods.ts';
import {
  type Codec,
  ConfigError,
  bool,
  boolMap,
  duration,
  int,
  list,
  nested,
  num,
  object,
  omitEmptyStrings,
  str,
  stringMap,
  strings,
  stringsMap,
} from './codecs.ts';

export { ConfigError };

interface Field<T> {
  codec: Codec<T>;
  /** SetDefaults_KubeletConfiguration's value; undefined leaves the property out (an unset pointer). */
  default: T;
  /**
   * false: parsed and validated but read by nothing in kubelet-ts, so setting it changes nothing.
   * What a later change needs to refuse (or warn about) fields that are silently ignored.
   */
  inEffect: boolean;
  /** SetDefaults_KubeletConfiguration defaults this int when 0 (`if obj.X == 0`), as an unset field. */
  zeroIsUnset?: boolean;
  /** A non-pointer int or bool with omitempty in upstream's v1beta1 type: /configz leaves 0 and false out. */
  omitEmpty?: boolean;
  /** ValidateKubeletConfiguration on this field alone: the refusal as "field: reason". */
  check?: (v: T) => string | undefined;
}

type Options<T> = Partial<Omit<Field<T>, 'codec' | 'default'>>;
const field = <T>(codec: Codec<T>, dflt: NoInfer<T>, o: Options<T> = {}): Field<T> => ({ codec, default: dflt, inEffect: true, ...o });
/** An optional field (a pointer upstream leaves nil): absent unless set. */
const optional = <T>(codec: Codec<T>, o: Options<T | undefined> = {}) => field<T | undefined>(codec as Codec<T | undefined>, undefined, o);
const between = (name: string, lo: number, hi: number) => (v: number) =>
  v < lo || v > hi ? `${name}: ${v} must be between ${lo} and ${hi}, inclusive` : undefined;
const notNegative = (name: string, flag: string) => (v: number) =>
  v < 0 ? `${name} (--${flag}) ${v} must not be a negative number` : undefined;

type Taint = { key: string; value?: string; effect: string };
type Authentication = { x509ClientCAFile: string; webhookEnabled: boolean; webhookCacheTTLMs: number; anonymousEnabled: boolean };
type Authorization = { mode: 'AlwaysAllow' | 'Webhook'; cacheAuthorizedTTLMs: number; cacheUnauthorizedTTLMs: number };

// KubeletAuthentication, flattened; a zero TTL is "unset" (kubeadm writes 0s): the default applies.
const authentication: Codec<Authentication> = {
  decode(path, v, d) {
    const a = nested(path, v, {
      x509: { clientCAFile: str },
      webhook: { enabled: bool, cacheTTL: duration },
      anonymous: { enabled: bool },
    });
    return {
      x509ClientCAFile: (a['x509.clientCAFile'] as string) || d.x509ClientCAFile,
      webhookEnabled: (a['webhook.enabled'] as boolean | undefined) ?? d.webhookEnabled,
      webhookCacheTTLMs: (a['webhook.cacheTTL'] as number) || d.webhookCacheTTLMs,
      anonymousEnabled: (a['anonymous.enabled'] as boolean | undefined) ?? d.anonymousEnabled,
    };
  },
  encode: (a) => ({
    x509: omitEmptyStrings({ clientCAFile: a.x509ClientCAFile }),
    webhook: { enabled: a.webhookEnabled, cacheTTL: goDuration(a.webhookCacheTTLMs) },
    anonymous: { enabled: a.anonymousEnabled },
  }),
};

const authorization: Codec<Authorization> = {
  decode(path, v, d) {
    const a = nested(path, v, { mode: str, webhook: { cacheAuthorizedTTL: duration, cacheUnauthorizedTTL: duration } });
    const mode = (a.mode as string | undefined) ?? d.mode;
    if (mode !== 'AlwaysAllow' && mode !== 'Webhook')
      throw new ConfigError(`${path}.mode: expected AlwaysAllow or Webhook, got ${JSON.stringify(mode)}`);
    return {
      mode,
      cacheAuthorizedTTLMs: (a['webhook.cacheAuthorizedTTL'] as number) || d.cacheAuthorizedTTLMs,
      cacheUnauthorizedTTLMs: (a['webhook.cacheUnauthorizedTTL'] as number) || d.cacheUnauthorizedTTLMs,
    };
  },
  encode: (a) => ({
    mode: a.mode,
    webhook: { cacheAuthorizedTTL: goDuration(a.cacheAuthorizedTTLMs), cacheUnauthorizedTTL: goDuration(a.cacheUnauthorizedTTLMs) },
  }),
};

const memorySwap: Codec<{ swapBehavior: string }> = {
  decode: (path, v, d) => ({ swapBehavior: (nested(path, v, { swapBehavior: str }).swapBehavior as string | undefined) ?? d.swapBehavior }),
  encode: (m) => omitEmptyStrings(m),
};

// Each entry strictly, as upstream's decoding: both fields integers, no others.
const shutdownPeriods: Codec<ShutdownGracePeriodByPodPriority[]> = {
  decode(path, v) {
    if (!Array.isArray(v)) throw new ConfigError(`${path}: expected a list, got ${JSON.stringify(v)}`);
    return v.map((e, i) => {
      const f = nested(`${path}[${i}]`, e, { priority: int, shutdownGracePeriodSeconds: int });
      return { priority: (f.priority as number) ?? 0, shutdownGracePeriodSeconds: (f.shutdownGracePeriodSeconds as number) ?? 0 };
    });
  },
  encode: (l) => l,
};

// In the order of upstream's v1beta1 KubeletConfiguration struct, which /configz keeps.
export const FIELDS = {
  staticPodPath: field(str, ''),
  podLogsDir: field(str, '/var/log/pods'),
  syncFrequencyMs: field(duration, 60_000),
  fileCheckFrequencyMs: field(duration, 20_000),
  httpCheckFrequencyMs: field(duration, 20_000),
  staticPodURL: field(str, ''),
  staticPodURLHeader: field(stringsMap, {}),
  address: field(str, '0.0.0.0'),
  port: field(int, 10250, {
    zeroIsUnset: true,
    omitEmpty: true,
    check: (v) => (v < 1 || v > 65535 ? `port: ${v} must be between 1 and 65535` : undefined),
  }),
  /** The read-only port (plain HTTP, no auth, src/server/read-only.ts); 0 serves none. */
  readOnlyPort: field(int, 0, { omitEmpty: true, check: between('readOnlyPort', 0, 65535) }),
  tlsCertFile: field(str, ''),
  tlsPrivateKeyFile: field(str, ''),
  /** The :10250 server's TLS 1.2 suites and lowest TLS version, in Go's names (src/config/tls-options.ts); refused as upstream's server.go does at start. */
  tlsCipherSuites: field(strings, [], { check: (v) => tlsError('tlsCipherSuites', () => serverTLS('', v)) }),
  tlsMinVersion: field(str, '', { check: (v) => tlsError('tlsMinVersion', () => serverTLS(v, [])) }),
  // omitempty upstream, but /configz has always shown false here.
  serverTLSBootstrap: field(bool, false),
  authentication: field(authentication, {
    x509ClientCAFile: '',
    webhookEnabled: true,
    webhookCacheTTLMs: 120_000,
    anonymousEnabled: false,
  }),
  authorization: field(authorization, { mode: 'Webhook', cacheAuthorizedTTLMs: 300_000, cacheUnauthorizedTTLMs: 30_000 }),
  /** Image pulls begun per second, and at once (src/images/puller.ts); 0 qps: no limit. */
  registryPullQPS: field(int, 5, { check: notNegative('registryPullQPS', 'registry-qps') }),
  registryBurst: field(int, 10, { zeroIsUnset: true, omitEmpty: true, check: notNegative('registryBurst', 'registry-burst') }),
  /** The event client's limit (src/events/recorder.ts): events per second, and at once; 0 qps: no limit. */
  eventRecordQPS: field(int, 50, { check: notNegative('eventRecordQPS', 'event-qps') }),
  eventBurst: field(int, 100, { zeroIsUnset: true, omitEmpty: true, check: notNegative('eventBurst', 'event-burst') }),
  healthzPort: field(int, 10248, { check: between('healthzPort', 0, 65535) }),
  healthzBindAddress: field(str, '127.0.0.1'),
  /** The kubelet's own oom_score_adj (src/node/oom-score.ts). */
  oomScoreAdj: field(int, -999, { check: between('oomScoreAdj', -1000, 1000) }),
  clusterDomain: field(str, ''),
  clusterDNS: field(strings, []),
  nodeStatusUpdateFrequencyMs: field(duration, 10_000),
  nodeStatusReportFrequencyMs: field(duration, 300_000),
  nodeLeaseDurationSeconds: field(int, 40, {
    zeroIsUnset: true,
    omitEmpty: true,
    check: (v) => (v <= 0 ? 'nodeLeaseDurationSeconds: must be greater than 0' : undefined),
  }),
  /** Image garbage collection (src/gc/images.ts). */
  imageMinimumGCAgeMs: field(duration, 120_000),
  imageGCHighThresholdPercent: field(int, 85, { check: percent('imageGCHighThresholdPercent') }),
  imageGCLowThresholdPercent: field(int, 80, { check: percent('imageGCLowThresholdPercent') }),
  /** System containers (src/node/system-cgroups.ts): the kubelet's cgroup, and the one for the root cgroup's other processes. */
  kubeletCgroups: field(str, ''),
  systemCgroups: field(str, ''),
  cgroupRoot: field(str, '/'),
  // The runtime's driver wins when CRI RuntimeConfig answers (src/resources/cgroup-driver.ts); systemd is refused at start so far.
  cgroupDriver: field(str as Codec<'cgroupfs' | 'systemd'>, 'cgroupfs', {
    check: (v) =>
      v !== 'cgroupfs' && v !== 'systemd' ? `cgroupDriver: expected cgroupfs or systemd, got ${JSON.stringify(v)}` : undefined,
  }),
  /**
   * Unset: on cgroup v2 an OOM kill takes the whole container (memory.oom.group), on v1 one
   * process (src/resources/linux-resources.ts singleProcessOOMKill); false is refused on v1.
   */
  singleProcessOOMKill: optional(bool),
  // Read by nothing: CRI calls take their own deadlines.
  /** The deadline of the CRI calls that change state (src/cri/connection.ts). */
  runtimeRequestTimeoutMs: field(duration, 120_000),
  maxPods: field(int, 110, { zeroIsUnset: true, omitEmpty: true, check: (v) => (v <= 0 ? 'maxPods: must be positive' : undefined) }),
  /** pids.max of each pod's cgroup (src/resources/pod-cgroup.ts); -1: no limit. */
  podPidsLimit: field(int, -1, { check: (v) => (v < -1 ? 'podPidsLimit: must be -1 (no limit) or more' : undefined) }),
  resolvConf: field(str, '/etc/resolv.conf'),
  /** CFS quota for the cpu limits of containers and pod cgroups (src/resources/linux-resources.ts CFS); false: none enforced. */
  cpuCFSQuota: field(bool, true),
  /** The CFS period of those quotas (cpu.cfs_period_us), 1 ms to 1 s; checked with CustomCPUCFSQuotaPeriod below. */
  cpuCFSQuotaPeriodMs: field(duration, 100),
  nodeStatusMaxImages: field(int, 50, { check: (v) => (v < -1 ? 'nodeStatusMaxImages: must be -1 (no limit) or more' : undefined) }),
  /** The kubelet's apiserver requests per second, and at once (src/apiserver/rate-limited.ts); 0 qps: no limit. */
  kubeAPIQPS: field(int, 50, { check: notNegative('kubeAPIQPS', 'kube-api-qps') }),
  kubeAPIBurst: field(int, 100, { zeroIsUnset: true, omitEmpty: true, check: notNegative('kubeAPIBurst', 'kube-api-burst') }),
  /** One image pull at a time (upstream's default); false: at most maxParallelImagePulls (unset: no limit). src/images/pull-slots.ts. */
  serializeImagePulls: field(bool, true),
  maxParallelImagePulls: optional(int, {
    check: (v) => (v !== undefined && v < 1 ? `maxParallelImagePulls: ${v} must be a positive number` : undefined),
  }),
  evictionHard: field(
    stringMap,
    { 'memory.available': '100Mi', 'nodefs.available': '10%', 'nodefs.inodesFree': '5%', 'imagefs.available': '15%' },
    {
      check: signals('evictionHard'),
    },
  ),
  /** Eviction (src/eviction): soft thresholds with their grace periods, minimum reclaim, and the condition hysteresis. */
  evictionSoft: field(stringMap, {}, { check: signals('evictionSoft') }),
  evictionSoftGracePeriod: field(stringMap, {}),
  evictionPressureTransitionPeriodMs: field(duration, 300_000),
  evictionMaxPodGracePeriod: field(int, 0, { omitEmpty: true }),
  evictionMinimumReclaim: field(stringMap, {}),
  /** Pods per CPU core (0: no limit but maxPods). */
  podsPerCore: field(int, 0, { omitEmpty: true }),
  /** Refuse to start when the kernel's settings differ from upstream's, instead of writing them (src/node/kernel-tunables.ts). */
  protectKernelDefaults: field(bool, false, { omitEmpty: true }),
  featureGates: field(boolMap, {}),
  /** Refuse to start while swap is on (src/node/swap.ts). */
  failSwapOn: field(bool, true),
  /** Swap for containers (src/resources/swap.ts): NoSwap ('' too) or LimitedSwap. NodeSwap is GA. */
  memorySwap: field(
    memorySwap,
    { swapBehavior: '' },
    {
      check: (v) =>
        ['', 'NoSwap', 'LimitedSwap'].includes(v.swapBehavior)
          ? undefined
          : `memorySwap.swapBehavior: ${JSON.stringify(v.swapBehavior)} must be one of: "", "LimitedSwap" or "NoSwap"`,
    },
  ),
  /** Container log rotation (src/container-logs): a quantity such as 10Mi; negative turns rotation off. NewContainerLogManager's checks too. */
  containerLogMaxSize: field(str, '10Mi', {
    check: (v) => (parseQuantity(v) === undefined ? `containerLogMaxSize: ${JSON.stringify(v)} is not a quantity` : undefined),
  }),
  containerLogMaxFiles: field(int, 5, { check: (v) => (v <= 1 ? `containerLogMaxFiles: ${v} must be greater than 1` : undefined) }),
  containerLogMaxWorkers: field(int, 1, {
    check: (v) => (v < 1 ? `containerLogMaxWorkers: ${v} must be greater than or equal to 1` : undefined),
  }),
  containerLogMonitorIntervalMs: field(duration, 10_000, {
    check: (v) => (v < 3000 ? 'containerLogMonitorInterval: must be a positive time duration greater than or equal to 3s' : undefined),
  }),
  systemReserved: field(stringMap, {}),
  kubeReserved: field(stringMap, {}),
  enforceNodeAllocatable: field(strings, ['pods']),
  /** Read only where enforceNodeAllocatable limits them, which kubelet-ts refuses so far (invalidEnforcement). */
  systemReservedCgroup: field(str, ''),
  kubeReservedCgroup: field(str, ''),
  /** Sysctls (or prefixes ending in *) pods may set beyond the safe ones. */
  allowedUnsafeSysctls: field(strings, []),
  /** /logs/ (src/server/system-logs.ts); false answers it with 405. */
  enableSystemLogHandler: field(bool, true),
  /** The node log query on /logs/ (src/server/node-logs.ts, NodeLogQuery); needs enableSystemLogHandler. */
  enableSystemLogQuery: field(bool, false),
  /** Graceful node shutdown (src/nodeshutdown): 0 and no list (the default) leave it off. */
  shutdownGracePeriodMs: field(duration, 0),
  shutdownGracePeriodCriticalPodsMs: field(duration, 0),
  shutdownGracePeriodByPodPriority: field(shutdownPeriods, []),
  /** RuntimeDefault instead of Unconfined for containers that name no seccomp profile. */
  seccompDefault: field(bool, false),
  registerWithTaints: field(list as Codec<Taint[]>, []),
  // Read by nothing: kubelet-ts always registers its Node.
  registerNode: field(bool, true, { inEffect: false }),
  containerRuntimeEndpoint: field(str, 'unix:///run/containerd/containerd.sock'),
  imageServiceEndpoint: field(str, ''),
};

function tlsError(name: string, check: () => unknown): string | undefined {
  try {
    check();
    return undefined;
  } catch (e) {
    return `${name}: ${(e as Error).message}`;
  }
}
function percent(name: string) {
  return (v: number) => (v < 0 || v > 100 ? `${name}: must be between 0 and 100, inclusive` : undefined);
}
function signals(name: string) {
  return (m: Record<string, string>) => {
    const unknown = Object.keys(m).find((k) => !isSignal(k));
    return unknown ? `${name}: unknown eviction signal "${unknown}"` : undefined;
  };
}

type Table = typeof FIELDS;
type ValueOf<F> = F extends Field<infer T> ? T : never;
type OptionalKey = { [K in keyof Table]: undefined extends ValueOf<Table[K]> ? K : never }[keyof Table];
type RequiredKey = Exclude<keyof Table, OptionalKey>;

/** The parsed configuration: one property per row of FIELDS, optional where the row's default is unset. */
export type KubeletConfig = { [K in keyof Pick<Table, RequiredKey>]: ValueOf<Table[K]> } & {
  [K in keyof Pick<Table, OptionalKey>]?: Exclude<ValueOf<Table[K]>, undefined>;
};

const ROWS = Object.entries(FIELDS) as [keyof KubeletConfig, Field<unknown>][];
/** The field's name in the document: the key, a duration's without its Ms. */
export const yamlName = (key: string, f: Field<unknown>) => (f.codec === duration ? key.replace(/Ms$/, '') : key);
const BY_YAML = new Map(ROWS.map(([key, f]) => [yamlName(key, f), [key, f] as const]));

/** Which fields are read by nothing yet, by their YAML names. */
export const notInEffect = ROWS.filter(([, f]) => !f.inEffect).map(([key, f]) => yamlName(key, f));

export const defaults = Object.fromEntries(
  ROWS.filter(([, f]) => f.default !== undefined).map(([key, f]) => [key, f.default]),
) as KubeletConfig;

const accepted = (codec: Codec<unknown>, names: string) => Object.fromEntries(names.split(/\s+/).map((n) => [n, codec]));
// Upstream's other fields: type-checked now (a kubeadm-written file carries many of them), in
// effect as their features land; a field that lands moves from here to a row of FIELDS.
const ACCEPTED: Record<string, Codec<unknown>> = {
  ...accepted(
    bool,
    `enableServer rotateCertificates enableDebuggingHandlers enableContentionProfiling cgroupsPerQOS runOnce mergeDefaultEvictionSettings enableControllerAttachDetach makeIPTablesUtilChains kernelMemcgNotification enableProfilingHandler enableDebugFlagsHandler localStorageCapacityIsolation failCgroupV1`,
  ),
  ...accepted(int, `maxOpenFiles iptablesMasqueradeBit iptablesDropBit`),
  ...accepted(num, `memoryThrottlingFactor`),
  ...accepted(duration, `streamingConnectionIdleTimeout imageMaximumGCAge volumeStatsAggPeriod cpuManagerReconcilePeriod`),
  ...accepted(
    str,
    `imagePullCredentialsVerificationPolicy cpuManagerPolicy memoryManagerPolicy topologyManagerPolicy topologyManagerScope hairpinMode podCIDR contentType configMapAndSecretChangeDetectionStrategy reservedSystemCPUs showHiddenMetricsForVersion volumePluginDir providerID`,
  ),
  ...accepted(strings, `preloadedImagesVerificationAllowlist`),
  ...accepted(stringMap, `cpuManagerPolicyOptions topologyManagerPolicyOptions qosReserved`),
  ...accepted(list, `reservedMemory`),
  ...accepted(object, `logging crashLoopBackOff tracing userNamespaces`),
};

/** Pure: parses a KubeletConfiguration document over the defaults. */
export function parseKubeletConfig(text: string, source = 'config'): KubeletConfig {
  let doc: unknown;
  try {
    doc = parseYaml(text);
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
    const row = BY_YAML.get(name);
    if (!row) {
      const codec = Object.hasOwn(ACCEPTED, name) ? ACCEPTED[name] : undefined;
      if (!codec) throw new ConfigError(`${source}: unknown field "${name}"`);
      codec.decode(name, value, undefined);
      continue;
    }
    const [key, f] = row;
    const converted = f.codec.decode(name, value, f.default);
    // As upstream's defaulting: an empty string or zero duration (what kubeadm writes for
    // "unset", e.g. containerRuntimeEndpoint: "") takes the default, and so does a zero in the
    // int fields SetDefaults_KubeletConfiguration defaults on 0.
    const unset = value === null || value === '' || (converted === 0 && (f.codec.zeroIsUnset || f.zeroIsUnset));
    if (!unset) out[key] = converted;
  }
  const cfg = out as KubeletConfig;
  const problem = invalidValue(cfg, rest);
  if (problem) throw new ConfigError(`${source}: ${problem}`);
  return cfg;
}

// ValidateKubeletConfiguration's checks across fields (and the feature gates), after each
// row's own check.
const CROSS_CHECKS: ((c: KubeletConfig, raw: Record<string, unknown>) => string | undefined)[] = [
  (c) =>
    c.imageGCLowThresholdPercent >= c.imageGCHighThresholdPercent
      ? 'imageGCLowThresholdPercent: must be less than imageGCHighThresholdPercent'
      : undefined,
  // CustomCPUCFSQuotaPeriod is GA (on) in v1.36: off, only the default period is allowed.
  (c) =>
    !featureEnabled(c.featureGates, 'CustomCPUCFSQuotaPeriod') && c.cpuCFSQuotaPeriodMs !== 100
      ? `invalid configuration: cpuCFSQuotaPeriod (--cpu-cfs-quota-period) ${goDuration(c.cpuCFSQuotaPeriodMs)} requires feature gate CustomCPUCFSQuotaPeriod`
      : undefined,
  (c) =>
    featureEnabled(c.featureGates, 'CustomCPUCFSQuotaPeriod') && (c.cpuCFSQuotaPeriodMs < 1 || c.cpuCFSQuotaPeriodMs > 1000)
      ? `invalid configuration: cpuCFSQuotaPeriod (--cpu-cfs-quota-period) ${goDuration(c.cpuCFSQuotaPeriodMs)} must be between 1ms and 1sec, inclusive`
      : undefined,
  (c) =>
    c.serializeImagePulls && (c.maxParallelImagePulls ?? 1) > 1
      ? 'maxParallelImagePulls: cannot be larger than 1 unless serializeImagePulls is set to false'
      : undefined,
  (c, raw) =>
    c.nodeStatusReportFrequencyMs < c.nodeStatusUpdateFrequencyMs && raw.nodeStatusReportFrequency !== undefined
      ? 'nodeStatusReportFrequency: must not be shorter than nodeStatusUpdateFrequency'
      : undefined,
  // Upstream's ValidateKubeletConfiguration on the node log query.
  (c) =>
    c.enableSystemLogQuery && !featureEnabled(c.featureGates, 'NodeLogQuery')
      ? 'enableSystemLogQuery: NodeLogQuery feature gate is required for enableSystemLogQuery'
      : undefined,
  (c) =>
    c.enableSystemLogQuery && !c.enableSystemLogHandler
      ? 'enableSystemLogQuery: enableSystemLogHandler is required for enableSystemLogQuery'
      : undefined,
  // Upstream's ValidateKubeletConfiguration on graceful node shutdown.
  (c) => shutdownConfigError(c),
  (c) => invalidEnforcement(c.enforceNodeAllocatable, c),
  (c, raw) =>
    raw.reservedSystemCPUs && (c.systemReservedCgroup || c.kubeReservedCgroup)
      ? "invalid configuration: can't use reservedSystemCPUs (--reserved-cpus) with systemReservedCgroup (--system-reserved-cgroup) or kubeReservedCgroup (--kube-reserved-cgroup)"
      : undefined,
  // Upstream parses the thresholds at start-up: a bad quantity or a soft threshold without a grace period stops it.
  (c) => {
    try {
      parseThresholds(c);
      return undefined;
    } catch (e) {
      return `eviction thresholds: ${(e as Error).message}`;
    }
  },
];

/** Pure: the first value upstream's ValidateKubeletConfiguration would refuse, as "field: reason". */
export function invalidValue(c: KubeletConfig, raw: Record<string, unknown>): string | undefined {
  for (const [key, f] of ROWS) {
    const why = f.check?.(c[key]);
    if (why) return why;
  }
  for (const check of CROSS_CHECKS) {
    const why = check(c, raw);
    if (why) return why;
  }
  return undefined;
}

const isEmpty = (v: unknown) =>
  v === '' ||
  v === undefined ||
  (Array.isArray(v) && v.length === 0) ||
  (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0);

/**
 * Pure: the configuration as upstream's v1beta1 KubeletConfiguration JSON (what its /configz
 * marshals), every row under its upstream name. An empty value is left out, as omitempty does,
 * when its default is that same empty value, so that the document reads back as the same
 * configuration (an emptied evictionHard shows as {}).
 */
export function toV1beta1(c: KubeletConfig): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, f] of ROWS) {
    const v = c[key] === undefined ? undefined : f.codec.encode(c[key]);
    const empty = isEmpty(v) || (f.omitEmpty === true && (v === 0 || v === false));
    const d = f.default === undefined ? undefined : f.codec.encode(f.default);
    if (empty && isDeepStrictEqual(v, d)) continue;
    out[yamlName(key, f)] = v;
  }
  return out;
}
