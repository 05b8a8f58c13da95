// KubeletConfiguration (kubelet.config.k8s.io/v1beta1): the file named by --config, its
// --config-dir drop-ins and the flags that set its fields, with upstream field names and defaults. Unknown fields and wrong types are errors naming the
// field path, as upstream's strict decoding does.
//
// FIELDS is the one list of the fields kubelet-ts maps: each row gives the field's codec
// (YAML/JSON form in, the v1beta1 form /configz writes out), its default
// (SetDefaults_KubeletConfiguration), its own checks (ValidateKubeletConfiguration), its flag
// (AddKubeletConfigFlags) and whether anything reads it yet. The KubeletConfig type, `defaults`,
// parsing, the config flags and /configz all derive from it, so a new field is one row. The YAML name is the row's key, but a duration's key ends
// in Ms (syncFrequencyMs reads syncFrequency).
import { isDeepStrictEqual } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { goDuration } from '../apiserver/duration.ts';
import { serverCurves, serverTLS } from './tls-options.ts';
import { featureEnabled, invalidGates } from '../features/gates.ts';
import { parseQuantity } from '../resources/quantity.ts';
import { type TracingConfig, tracingError } from '../tracing/config.ts';
import { parseCPUSet } from '../cpumanager/cpuset.ts';
import { invalidEnforcement } from '../resources/node-allocatable.ts';
import { parseQOSReserved } from '../resources/qos-cgroups.ts';
import { parseThresholds } from '../eviction/thresholds.ts';
import { isSignal } from '../eviction/types.ts';
import { shutdownConfigError, type ShutdownGracePeriodByPodPriority } from '../nodeshutdown/periods.ts';
import { compileAllowlist, VERIFICATION_POLICIES } from '../images/pulled/policy.ts';
import { HAIRPIN_MODES, type HairpinMode } from '../network/hairpin.ts';
import {
  type Codec,
  ConfigError,
  bool,
  boolMap,
  duration,
  int,
  ints,
  signedDuration,
  list,
  nested,
  num,
  omitEmptyStrings,
  str,
  stringMap,
  strings,
  stringsMap,
} from './codecs.ts';
import {
  type FlagForm,
  FlagError,
  boolForm,
  boolMapForm,
  colonMultimapForm,
  durationForm,
  intForm,
  langleMapForm,
  mapForm,
  mapNoSplitForm,
  quantityForm,
  reservedMemoryForm,
  stringForm,
  stringsForm,
  taintsForm,
  vmoduleForm,
} from './flag-forms.ts';

export { ConfigError };

interface Field<T> {
  codec: Codec<T>;
  /** SetDefaults_KubeletConfiguration's value; undefined leaves the property out (an unset pointer). */
  default: T;
  /**
   * false: parsed and validated but read by nothing in kubelet-ts, so setting it changes nothing;
   * the start warns when it is set to other than its default (ignoredSettings).
   */
  inEffect: boolean;
  /** SetDefaults_KubeletConfiguration defaults this int when 0 (`if obj.X == 0`), as an unset field. */
  zeroIsUnset?: boolean;
  /** A non-pointer int or bool with omitempty in upstream's v1beta1 type: /configz leaves 0 and false out. */
  omitEmpty?: boolean;
  /** ValidateKubeletConfiguration on this field alone: the refusal as "field: reason". */
  check?: (v: T) => string | undefined;
  /**
   * The flags of upstream's AddKubeletConfigFlags that set this field: a name alone reads the
   * flag's text in the form its codec's flag takes (FORM_OF below), a spec names another form
   * or, for a nested field, the path below it the flag sets.
   */
  flag?: string | FlagSpec | FlagSpec[];
  /** A field not in effect: why, in a few words, named with it when its setting refuses the start. */
  why?: string;
  /** An in-effect field's parts that are read by nothing yet, for the start-up warning: their paths when set to other than their defaults. */
  ignoredParts?: (v: T) => string[];
}

export interface FlagSpec {
  name: string;
  form?: FlagForm;
  /** Below the field, in the v1beta1 document ("anonymous.enabled" of authentication). */
  path?: string;
}

type Options<T> = Partial<Omit<Field<T>, 'codec' | 'default'>>;
const field = <T>(codec: Codec<T>, dflt: NoInfer<T>, o: Options<T> = {}): Field<T> => ({ codec, default: dflt, inEffect: true, ...o });
/** An optional field (a pointer upstream leaves nil): absent unless set. */
const optional = <T>(codec: Codec<T>, o: Options<T | undefined> = {}) => field<T | undefined>(codec as Codec<T | undefined>, undefined, o);
/** A field read by nothing in kubelet-ts yet, with its flag. */
const ignored = <T>(codec: Codec<T>, dflt: NoInfer<T>, flag: Field<T>['flag'], o: Options<T> = {}) =>
  field(codec, dflt, { ...o, flag, inEffect: false });
/** component-base's TracingConfiguration: two optional fields, written back as given. */
const tracingCodec: Codec<TracingConfig> = {
  decode(path, v) {
    const t = nested(path, v, { endpoint: str, samplingRatePerMillion: int });
    return {
      ...(t.endpoint !== undefined ? { endpoint: t.endpoint as string } : {}),
      ...(t.samplingRatePerMillion !== undefined ? { samplingRatePerMillion: t.samplingRatePerMillion as number } : {}),
    };
  },
  encode: (v) => v,
};
type MemoryReservation = { numaNode: number; limits: Record<string, string> };
/** validateReservedMemoryConfiguration: memory or hugepages-* only, not zero, once per node and type. */
function reservedMemoryError(v: MemoryReservation[]): string | undefined {
  const seen = new Set<string>();
  for (const r of v) {
    if (typeof r !== 'object' || r === null || !Number.isInteger(r.numaNode)) return 'reservedMemory: each entry needs numaNode and limits';
    for (const [t, q] of Object.entries(r.limits ?? {})) {
      if (t !== 'memory' && !t.startsWith('hugepages-'))
        return `the limit type "${t}" for NUMA node ${r.numaNode} is not supported, only [memory hugepages-<HugePageSize>] is accepted`;
      if (!parseQuantity(q)) return `reserved memory may not be zero for NUMA node ${r.numaNode} and resource "${t}"`;
      if (seen.has(`${r.numaNode}/${t}`))
        return `the reserved memory has a duplicate value for NUMA node ${r.numaNode} and resource "${t}"`;
      seen.add(`${r.numaNode}/${t}`);
    }
  }
  return undefined;
}
/** Upstream's ParseQOSReserved at start (server.go), its error as the start reports it. */
function qosReservedError(v: Record<string, string>): string | undefined {
  try {
    parseQOSReserved(v);
    return undefined;
  } catch (e) {
    return `--qos-reserved value failed to parse: ${(e as Error).message}`;
  }
}
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

// component-base's LoggingConfiguration (logs/api/v1), as v1beta1 writes it. flushFrequency is
// a Go duration or integer nanoseconds (TimeOrMetaDuration; kubeadm writes 0), a buffer size a
// quantity or an integer.
type LogOutput = { splitStream: boolean; infoBufferSize: string };
export type Logging = {
  format: string;
  flushFrequency: string;
  verbosity: number;
  vmodule: { filePattern: string; verbosity: number }[];
  options: { text: LogOutput; json: LogOutput };
};
const LOGGING_DEFAULTS: Logging = {
  format: 'text',
  flushFrequency: '5s',
  verbosity: 0,
  vmodule: [],
  options: { text: { splitStream: false, infoBufferSize: '0' }, json: { splitStream: false, infoBufferSize: '0' } },
};
const nanosOrDuration: Codec<string> = {
  decode(path, v) {
    if (Number.isInteger(v)) return goDuration((v as number) / 1e6);
    return goDuration(duration.decode(path, v, 0));
  },
  encode: (v) => v,
};
const quantityOrInt: Codec<string> = {
  decode(path, v) {
    if (Number.isInteger(v)) return String(v);
    if (typeof v === 'string' && parseQuantity(v) !== undefined) return v;
    throw new ConfigError(`${path}: expected a quantity, got ${JSON.stringify(v)}`);
  },
  encode: (v) => v,
};
const logOutput = { splitStream: bool, infoBufferSize: quantityOrInt };
const logging: Codec<Logging> = {
  decode(path, v, d) {
    const l = nested(path, v, {
      format: str,
      flushFrequency: nanosOrDuration,
      verbosity: int,
      vmodule: list,
      options: { text: logOutput, json: logOutput },
    });
    const output = (o: 'text' | 'json'): LogOutput => ({
      splitStream: (l[`options.${o}.splitStream`] as boolean | undefined) ?? d.options[o].splitStream,
      infoBufferSize: (l[`options.${o}.infoBufferSize`] as string | undefined) ?? d.options[o].infoBufferSize,
    });
    const vmodule = ((l.vmodule as unknown[] | undefined) ?? d.vmodule).map((e, i) => {
      const m = nested(`${path}.vmodule[${i}]`, e, { filePattern: str, verbosity: int });
      return { filePattern: (m.filePattern as string) ?? '', verbosity: (m.verbosity as number) ?? 0 };
    });
    return {
      format: (l.format as string) || d.format,
      // Zero is unset: SetRecommendedLoggingConfiguration's 5 s.
      flushFrequency: l.flushFrequency && l.flushFrequency !== '0s' ? (l.flushFrequency as string) : d.flushFrequency,
      verbosity: (l.verbosity as number | undefined) ?? d.verbosity,
      vmodule,
      options: { text: output('text'), json: output('json') },
    };
  },
  encode: (l) => ({
    format: l.format,
    flushFrequency: l.flushFrequency,
    verbosity: l.verbosity,
    ...(l.vmodule.length ? { vmodule: l.vmodule } : {}),
    options: { text: omitZero(l.options.text), json: omitZero(l.options.json) },
  }),
};
const omitZero = (o: LogOutput) => ({ ...(o.splitStream ? { splitStream: true } : {}), infoBufferSize: o.infoBufferSize });
// logsapi.ValidateAndApplyAsField accepts the registered formats, text and json (src/log/log.ts writes both).
function loggingError(l: Logging): string | undefined {
  if (l.format !== 'text' && l.format !== 'json')
    return `logging.format: Unsupported value: ${JSON.stringify(l.format)}: supported values: "json", "text"`;
  if (l.verbosity < 0) return `logging.verbosity: ${l.verbosity} must not be negative`;
  return undefined;
}
// logsapi.Validate's gate checks: the json format is registered as a LoggingBetaOptions one
// (logs/json/register), the split streams and info buffers are LoggingAlphaOptions ones
// (validateFormatOptions). With the alpha gate on they are still refused, as not in effect.
function loggingGateError(l: Logging, gates: Readonly<Record<string, boolean>>): string | undefined {
  if (l.format === 'json' && !featureEnabled(gates, 'LoggingBetaOptions'))
    return 'logging.format: Forbidden: Log format json is disabled, see LoggingBetaOptions feature';
  if (featureEnabled(gates, 'LoggingAlphaOptions')) return undefined;
  for (const o of ['text', 'json'] as const)
    for (const k of ['splitStream', 'infoBufferSize'] as const)
      if (l.options[o][k] !== LOGGING_DEFAULTS.options[o][k])
        return `logging.options.${o}.${k}: Forbidden: Feature LoggingAlphaOptions is disabled`;
  return undefined;
}
// Every line is written at once (nothing to flush); the rest is not read.
function loggingIgnored(l: Logging): string[] {
  const d = LOGGING_DEFAULTS;
  return [
    ...(l.vmodule.length ? ['logging.vmodule'] : []),
    ...(['text', 'json'] as const).flatMap((o) =>
      (['splitStream', 'infoBufferSize'] as const)
        .filter((k) => l.options[o][k] !== d.options[o][k])
        .map((k) => `logging.options.${o}.${k}`),
    ),
  ];
}

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

// CrashLoopBackOffConfig: a pointer duration, so an explicit 0s is a value (refused by the range
// check), not "unset". What the document leaves out keeps the default.
export type CrashLoopBackOffConfig = { maxContainerRestartPeriodMs?: number };
const crashLoopBackOffCodec: Codec<CrashLoopBackOffConfig> = {
  decode(path, v, d) {
    const c = nested(path, v, { maxContainerRestartPeriod: duration });
    const ms = (c.maxContainerRestartPeriod as number | undefined) ?? d?.maxContainerRestartPeriodMs;
    return ms === undefined ? {} : { maxContainerRestartPeriodMs: ms };
  },
  encode: (c) =>
    c.maxContainerRestartPeriodMs === undefined ? {} : { maxContainerRestartPeriod: goDuration(c.maxContainerRestartPeriodMs) },
};
// UserNamespaces: a pointer section with one pointer field; absent keeps the default (65536).
export type UserNamespacesConfig = { idsPerPod?: number };
const userNamespacesCodec: Codec<UserNamespacesConfig> = {
  decode(path, v) {
    const n = nested(path, v, { idsPerPod: int }).idsPerPod as number | undefined;
    return n === undefined ? {} : { idsPerPod: n };
  },
  encode: (c) => c,
};
/** validateKubeletOSConfiguration (validation_linux.go) on userNamespaces.idsPerPod, in its words. */
function userNamespacesError(c: UserNamespacesConfig): string | undefined {
  const n = c.idsPerPod;
  if (n === undefined) return undefined;
  if (n < 65536) return 'invalid configuration: userNamespaces.idsPerPod must not be less than 65536';
  if (n % 65536 !== 0) return 'invalid configuration: userNamespaces.idsPerPod must be a multiple of 65536';
  if (n > 2 ** 32 - 1) return `invalid configuration: userNamespaces.idsPerPod must not be more than ${2 ** 32 - 1}`;
  return undefined;
}

/** v1beta1's MaxContainerBackOff: SetDefaults_KubeletConfiguration's maxContainerRestartPeriod with KubeletCrashLoopBackOffMax on. */
export const MAX_CONTAINER_BACKOFF_MS = 300_000;

// In the order of upstream's v1beta1 KubeletConfiguration struct, which /configz keeps.
export const FIELDS = {
  // Upstream's fields read by nothing in kubelet-ts yet (ignored rows, inEffect false): parsed, checked and shown by /configz as upstream's, and refused at start when set (ignoredSettings).
  /** false: nothing listens on address:port (src/server/api-endpoint.ts); the read-only port, healthz and PodResources stay. */
  enableServer: field(bool, true, { flag: 'enable-server' }),
  staticPodPath: field(str, '', { flag: 'pod-manifest-path' }),
  podLogsDir: field(str, '/var/log/pods'),
  syncFrequencyMs: field(duration, 60_000, { flag: 'sync-frequency' }),
  fileCheckFrequencyMs: field(duration, 20_000, { flag: 'file-check-frequency' }),
  httpCheckFrequencyMs: field(duration, 20_000, { flag: 'http-check-frequency' }),
  staticPodURL: field(str, '', { flag: 'manifest-url' }),
  staticPodURLHeader: field(stringsMap, {}, { flag: 'manifest-url-header' }),
  address: field(str, '0.0.0.0', { flag: 'address' }),
  port: field(int, 10250, {
    zeroIsUnset: true,
    omitEmpty: true,
    check: (v) => (v < 1 || v > 65535 ? `port: ${v} must be between 1 and 65535` : undefined),
    flag: 'port',
  }),
  /** The read-only port (plain HTTP, no auth, src/server/read-only.ts); 0 serves none. */
  readOnlyPort: field(int, 0, { omitEmpty: true, check: between('readOnlyPort', 0, 65535), flag: 'read-only-port' }),
  tlsCertFile: field(str, '', { flag: 'tls-cert-file' }),
  tlsPrivateKeyFile: field(str, '', { flag: 'tls-private-key-file' }),
  /** The :10250 server's TLS 1.2 suites and lowest TLS version, in Go's names (src/config/tls-options.ts); refused as upstream's server.go does at start. */
  tlsCipherSuites: field(strings, [], { check: (v) => tlsError('tlsCipherSuites', () => serverTLS('', v)), flag: 'tls-cipher-suites' }),
  /** The :10250 server's key exchange groups, Go's CurveIDs (src/config/tls-options.ts serverCurves); empty: the TLS library's default. No flag upstream. */
  tlsCurvePreferences: field(ints, [], { check: (v) => tlsError('tlsCurvePreferences', () => serverCurves(v)) }),
  tlsMinVersion: field(str, '', { check: (v) => tlsError('tlsMinVersion', () => serverTLS(v, [])), flag: 'tls-min-version' }),
  /** kubelet-ts always rotates its client certificate (src/certificates/client-cert.ts), as true asks (kubeadm writes true); false is not honoured. */
  /**
   * kubelet-ts always rotates its client certificate. false is upstream's default, so it cannot be
   * told from a file that never set it (the documents merge over the defaults): read as true.
   */
  rotateCertificates: field(bool, false, { flag: 'rotate-certificates' }),
  // omitempty upstream, but /configz has always shown false here.
  serverTLSBootstrap: field(bool, false, { flag: 'rotate-server-certificates' }),
  authentication: field(
    authentication,
    {
      x509ClientCAFile: '',
      webhookEnabled: true,
      webhookCacheTTLMs: 120_000,
      anonymousEnabled: false,
    },
    {
      flag: [
        { name: 'anonymous-auth', path: 'anonymous.enabled', form: boolForm },
        { name: 'authentication-token-webhook', path: 'webhook.enabled', form: boolForm },
        { name: 'authentication-token-webhook-cache-ttl', path: 'webhook.cacheTTL', form: durationForm },
        { name: 'client-ca-file', path: 'x509.clientCAFile', form: stringForm },
      ],
    },
  ),
  authorization: field(
    authorization,
    {
      mode: 'Webhook',
      cacheAuthorizedTTLMs: 300_000,
      cacheUnauthorizedTTLMs: 30_000,
    },
    {
      flag: [
        { name: 'authorization-mode', path: 'mode', form: stringForm },
        { name: 'authorization-webhook-cache-authorized-ttl', path: 'webhook.cacheAuthorizedTTL', form: durationForm },
        { name: 'authorization-webhook-cache-unauthorized-ttl', path: 'webhook.cacheUnauthorizedTTL', form: durationForm },
      ],
    },
  ),
  /** Image pulls begun per second, and at once (src/images/puller.ts); 0 qps: no limit. */
  registryPullQPS: field(int, 5, { check: notNegative('registryPullQPS', 'registry-qps'), flag: 'registry-qps' }),
  registryBurst: field(int, 10, {
    zeroIsUnset: true,
    omitEmpty: true,
    check: notNegative('registryBurst', 'registry-burst'),
    flag: 'registry-burst',
  }),
  /**
   * KEP-2535 (src/images/pulled): which present images a pod must prove its pull credentials
   * for, and the preloaded images NeverVerifyAllowlistedImages lets anyone use. Checked with
   * the KubeletEnsureSecretPulledImages gate below.
   */
  imagePullCredentialsVerificationPolicy: field(str, 'NeverVerifyPreloadedImages'),
  preloadedImagesVerificationAllowlist: field(strings, []),
  /** The event client's limit (src/events/recorder.ts): events per second, and at once; 0 qps: no limit. */
  eventRecordQPS: field(int, 50, { check: notNegative('eventRecordQPS', 'event-qps'), flag: 'event-qps' }),
  eventBurst: field(int, 100, { zeroIsUnset: true, omitEmpty: true, check: notNegative('eventBurst', 'event-burst'), flag: 'event-burst' }),
  /** false: the kubelet API's debugging endpoints (exec, logs, ...) answer 405 (src/server/server.ts). */
  enableDebuggingHandlers: field(bool, true, { flag: 'enable-debugging-handlers' }),
  enableContentionProfiling: ignored(bool, false, 'contention-profiling', {
    why: "upstream sets Go's block profile rate for /debug/pprof/block; a Node process has no goroutines that block, hence no block profile",
  }),
  healthzPort: field(int, 10248, { check: between('healthzPort', 0, 65535), flag: 'healthz-port' }),
  healthzBindAddress: field(str, '127.0.0.1', { flag: 'healthz-bind-address' }),
  /** The kubelet's own oom_score_adj (src/node/oom-score.ts). */
  oomScoreAdj: field(int, -999, { check: between('oomScoreAdj', -1000, 1000), flag: 'oom-score-adj' }),
  clusterDomain: field(str, '', { flag: 'cluster-domain' }),
  clusterDNS: field(strings, [], { flag: 'cluster-dns' }),
  /**
   * Read by nothing in upstream v1.36.3 either (only its flag and defaulting name it): exec, attach
   * and port-forward are spliced to the runtime's streaming server (src/server/streaming.ts), as
   * upstream proxies them, and the runtime's own idle timeout applies (containerd's
   * stream_idle_timeout). Accepted as upstream accepts it, so a CIS-hardened file starts.
   */
  streamingConnectionIdleTimeoutMs: field(duration, 14_400_000, { flag: 'streaming-connection-idle-timeout' }),
  // Read by nothing in upstream v1.36.3 either (its validation only): accepted as upstream accepts
  // them. Upstream's node e2e writes 0 for both into the kubelet's file.
  iptablesMasqueradeBit: field(int, 14, { check: between('iptablesMasqueradeBit', 0, 31) }),
  iptablesDropBit: field(int, 15, { check: between('iptablesDropBit', 0, 31) }),
  /**
   * false: /debug/pprof/ and /debug/flags/v answer 405 (upstream's InstallProfilingHandler and
   * InstallDebugFlagsHandler, src/server/server.ts); true: kubelet-ts has no Go profiles or flag
   * setter to serve there (404).
   */
  enableProfilingHandler: field(bool, true),
  enableDebugFlagsHandler: field(bool, true),
  nodeStatusUpdateFrequencyMs: field(duration, 10_000, { flag: 'node-status-update-frequency' }),
  nodeStatusReportFrequencyMs: field(duration, 300_000),
  nodeLeaseDurationSeconds: field(int, 40, {
    zeroIsUnset: true,
    omitEmpty: true,
    check: (v) => (v <= 0 ? 'nodeLeaseDurationSeconds: must be greater than 0' : undefined),
  }),
  /** Image garbage collection (src/gc/images.ts). */
  imageMinimumGCAgeMs: field(duration, 120_000, { flag: 'minimum-image-ttl-duration' }),
  /** Unused images older than this go whatever the disk usage (src/gc/images.ts planOldImages); 0: never. No flag upstream. */
  imageMaximumGCAgeMs: field(duration, 0),
  imageGCHighThresholdPercent: field(int, 85, { check: percent('imageGCHighThresholdPercent'), flag: 'image-gc-high-threshold' }),
  imageGCLowThresholdPercent: field(int, 80, { check: percent('imageGCLowThresholdPercent'), flag: 'image-gc-low-threshold' }),
  /** How often pod volumes are measured (src/stats/volumes.ts volumeStatsRefreshMs); negative: not at all, no volume stats. */
  volumeStatsAggPeriodMs: field(signedDuration, 60_000, { flag: 'volume-stats-agg-period' }),
  /** System containers (src/node/system-cgroups.ts): the kubelet's cgroup, and the one for the root cgroup's other processes. */
  kubeletCgroups: field(str, '', { flag: 'kubelet-cgroups' }),
  systemCgroups: field(str, '', { flag: 'system-cgroups' }),
  cgroupRoot: field(str, '/', { flag: 'cgroup-root' }),
  /**
   * false: no kubepods, QoS or pod cgroups (src/resources/cgroup-layout.ts; upstream's noop QoS and
   * pod container managers); enforceNodeAllocatable must then be empty or "none".
   */
  cgroupsPerQOS: field(bool, true, { flag: 'cgroups-per-qos' }),
  // The runtime's driver wins when CRI RuntimeConfig answers (src/resources/cgroup-driver.ts); systemd is refused at start so far.
  cgroupDriver: field(str as Codec<'cgroupfs' | 'systemd'>, 'cgroupfs', {
    check: (v) =>
      v !== 'cgroupfs' && v !== 'systemd' ? `cgroupDriver: expected cgroupfs or systemd, got ${JSON.stringify(v)}` : undefined,
    flag: 'cgroup-driver',
  }),
  /** The CPU manager (src/cpumanager): none or static; anything else stops the start (unknown policy). */
  cpuManagerPolicy: field(str, 'none', { flag: 'cpu-manager-policy' }),
  /**
   * Unset: on cgroup v2 an OOM kill takes the whole container (memory.oom.group), on v1 one
   * process (src/resources/linux-resources.ts singleProcessOOMKill); false is refused on v1.
   */
  singleProcessOOMKill: optional(bool),
  /** The static policy's options at their upstream maturity (src/cpumanager/static-policy.ts); unknown ones stop the start. */
  cpuManagerPolicyOptions: field(stringMap, {}, { flag: { name: 'cpu-manager-policy-options', form: mapNoSplitForm } }),
  cpuManagerReconcilePeriodMs: field(duration, 10_000, { flag: 'cpu-manager-reconcile-period' }),
  /** The memory manager (src/memorymanager): None or Static; anything else stops the start (unknown policy). */
  memoryManagerPolicy: field(str, 'None', { flag: 'memory-manager-policy' }),
  /** The topology manager (src/topologymanager): its policy, scope and options; bad options stop the start. */
  topologyManagerPolicy: field(str, 'none', {
    check: (v) =>
      ['none', 'best-effort', 'restricted', 'single-numa-node'].includes(v)
        ? undefined
        : `topologyManagerPolicy (--topology-manager-policy) ${JSON.stringify(v)} must be one of: ["none" "best-effort" "restricted" "single-numa-node"]`,
    flag: 'topology-manager-policy',
  }),
  topologyManagerScope: field(str, 'container', {
    check: (v) =>
      v === 'container' || v === 'pod'
        ? undefined
        : `topologyManagerScope (--topology-manager-scope) ${JSON.stringify(v)} must be one of: "container", or "pod"`,
    flag: 'topology-manager-scope',
  }),
  topologyManagerPolicyOptions: field(stringMap, {}, { flag: { name: 'topology-manager-policy-options', form: mapNoSplitForm } }),
  /**
   * The QoS cgroups' memory limits (src/resources/qos-cgroups.ts): memory only, a percentage; applied
   * with the QOSReserved gate on (upstream parses it regardless and refuses a bad one at start).
   */
  qosReserved: field(stringMap, {}, { check: qosReservedError, flag: 'qos-reserved' }),
  // Read by nothing: CRI calls take their own deadlines.
  /** The deadline of the CRI calls that change state (src/cri/connection.ts). */
  runtimeRequestTimeoutMs: field(duration, 120_000, { flag: 'runtime-request-timeout' }),
  /**
   * The bridge network --network-plugin=kubenet writes (src/network/hairpin.ts): promiscuous-bridge
   * (the bridge promiscuous, with kubenet's ebtables dedup rules), hairpin-veth (hairpin_mode on each
   * pod's port) or none. With --network-plugin=cni the add-on's config decides, as in upstream v1.36,
   * which validates the field and reads it nowhere else.
   */
  hairpinMode: field(str as Codec<HairpinMode>, 'promiscuous-bridge', {
    check: (v) =>
      HAIRPIN_MODES.includes(v)
        ? undefined
        : `invalid configuration: option ${JSON.stringify(v)} specified for hairpinMode (--hairpin-mode). Valid options are "none", "hairpin-veth" or "promiscuous-bridge"`,
    flag: 'hairpin-mode',
  }),
  maxPods: field(int, 110, {
    zeroIsUnset: true,
    omitEmpty: true,
    check: (v) => (v <= 0 ? 'maxPods: must be positive' : undefined),
    flag: 'max-pods',
  }),
  /** Handed to the runtime at start (CRI UpdateRuntimeConfig, src/network/pod-cidr.ts); the Node's podCIDR replaces it once assigned. */
  podCIDR: field(str, '', { flag: 'pod-cidr' }),
  /** pids.max of each pod's cgroup (src/resources/pod-cgroup.ts); -1: no limit. */
  podPidsLimit: field(int, -1, {
    check: (v) => (v < -1 ? 'podPidsLimit: must be -1 (no limit) or more' : undefined),
    flag: 'pod-max-pids',
  }),
  resolvConf: field(str, '/etc/resolv.conf', { flag: 'resolv-conf' }),
  /** Upstream v1.36 has no run-once mode left: ValidateKubeletConfiguration refuses true, in these words. */
  runOnce: field(bool, false, {
    check: (v) =>
      v ? 'invalid configuration: runOnce (--runOnce) true, Runonce mode has been deprecated and should not be set' : undefined,
    flag: 'runonce',
  }),
  /** CFS quota for the cpu limits of containers and pod cgroups (src/resources/linux-resources.ts CFS); false: none enforced. */
  cpuCFSQuota: field(bool, true, { flag: 'cpu-cfs-quota' }),
  /** The CFS period of those quotas (cpu.cfs_period_us), 1 ms to 1 s; checked with CustomCPUCFSQuotaPeriod below. */
  cpuCFSQuotaPeriodMs: field(duration, 100, { flag: 'cpu-cfs-quota-period' }),
  nodeStatusMaxImages: field(int, 50, {
    check: (v) => (v < -1 ? 'nodeStatusMaxImages: must be -1 (no limit) or more' : undefined),
    flag: 'node-status-max-images',
  }),
  /** The kubelet's own RLIMIT_NOFILE, soft and hard, set at start with prlimit (src/node/open-files.ts); a failure is logged, as upstream. */
  maxOpenFiles: field(int, 1_000_000, {
    zeroIsUnset: true,
    omitEmpty: true,
    check: (v) => (v < 0 ? `invalid configuration: maxOpenFiles (--max-open-files) ${v} must not be a negative number` : undefined),
    flag: 'max-open-files',
  }),
  /**
   * The apiserver's media type (src/apiserver/client.ts): protobuf for the built-in types as
   * upstream's kubelet (JSON for CRDs and patches), or JSON for everything. Unset (""): protobuf.
   */
  contentType: field(str, 'application/vnd.kubernetes.protobuf', {
    check: (v) =>
      v === 'application/vnd.kubernetes.protobuf' || v === 'application/json'
        ? undefined
        : `contentType (--kube-api-content-type) ${JSON.stringify(v)} must be one of: "application/vnd.kubernetes.protobuf", "application/json"`,
    flag: 'kube-api-content-type',
  }),
  /** The kubelet's apiserver requests per second, and at once (src/apiserver/rate-limited.ts); 0 qps: no limit. */
  kubeAPIQPS: field(int, 50, { check: notNegative('kubeAPIQPS', 'kube-api-qps'), flag: 'kube-api-qps' }),
  kubeAPIBurst: field(int, 100, {
    zeroIsUnset: true,
    omitEmpty: true,
    check: notNegative('kubeAPIBurst', 'kube-api-burst'),
    flag: 'kube-api-burst',
  }),
  /** One image pull at a time (upstream's default); false: at most maxParallelImagePulls (unset: no limit). src/images/pull-slots.ts. */
  serializeImagePulls: field(bool, true, { flag: 'serialize-image-pulls' }),
  maxParallelImagePulls: optional(int, {
    check: (v) => (v !== undefined && v < 1 ? `maxParallelImagePulls: ${v} must be a positive number` : undefined),
  }),
  evictionHard: field(
    stringMap,
    {
      'memory.available': '100Mi',
      'nodefs.available': '10%',
      'nodefs.inodesFree': '5%',
      'imagefs.available': '15%',
      'imagefs.inodesFree': '5%',
    },
    {
      check: signals('evictionHard'),
      flag: { name: 'eviction-hard', form: langleMapForm },
    },
  ),
  /** Eviction (src/eviction): soft thresholds with their grace periods, minimum reclaim, and the condition hysteresis. */
  evictionSoft: field(stringMap, {}, { check: signals('evictionSoft'), flag: { name: 'eviction-soft', form: langleMapForm } }),
  evictionSoftGracePeriod: field(stringMap, {}, { flag: 'eviction-soft-grace-period' }),
  evictionPressureTransitionPeriodMs: field(duration, 300_000, { flag: 'eviction-pressure-transition-period' }),
  evictionMaxPodGracePeriod: field(int, 0, { omitEmpty: true, flag: 'eviction-max-pod-grace-period' }),
  evictionMinimumReclaim: field(stringMap, {}, { flag: 'eviction-minimum-reclaim' }),
  /** true: the --config file's evictionHard keeps the defaults of the signals it leaves out (mergeDefaultEvictionHard). */
  mergeDefaultEvictionSettings: field(bool, false),
  /** Pods per CPU core (0: no limit but maxPods). */
  podsPerCore: field(int, 0, { omitEmpty: true, flag: 'pods-per-core' }),
  /**
   * true: the attach/detach controller attaches the node's volumes (the Node's
   * controller-managed-attach-detach annotation); false: the kubelet does, making and deleting the
   * VolumeAttachments of CSI volumes and running FlexVolume drivers' attach and detach
   * (src/volumes/plugins/csi.ts, flexvolume). The node's credentials then need RBAC to create and
   * delete VolumeAttachments, as upstream's do.
   */
  enableControllerAttachDetach: field(bool, true, { flag: 'enable-controller-attach-detach' }),
  /** Refuse to start when the kernel's settings differ from upstream's, instead of writing them (src/node/kernel-tunables.ts). */
  protectKernelDefaults: field(bool, false, { omitEmpty: true, flag: 'protect-kernel-defaults' }),
  /** The KUBE-IPTABLES-HINT chain, and for IPv4 KUBE-FIREWALL with its 127/8 rule, kept after iptables flushes (src/network/iptables-util.ts); false: none. */
  makeIPTablesUtilChains: field(bool, true, { flag: 'make-iptables-util-chains' }),
  featureGates: field(
    boolMap,
    {},
    { flag: 'feature-gates', check: (v) => (invalidGates(v) ? `featureGates: ${invalidGates(v)}` : undefined) },
  ),
  /** Refuse to start while swap is on (src/node/swap.ts). */
  failSwapOn: field(bool, true, { flag: 'fail-swap-on' }),
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
    flag: 'container-log-max-size',
  }),
  containerLogMaxFiles: field(int, 5, {
    check: (v) => (v <= 1 ? `containerLogMaxFiles: ${v} must be greater than 1` : undefined),
    flag: 'container-log-max-files',
  }),
  containerLogMaxWorkers: field(int, 1, {
    check: (v) => (v < 1 ? `containerLogMaxWorkers: ${v} must be greater than or equal to 1` : undefined),
  }),
  containerLogMonitorIntervalMs: field(duration, 10_000, {
    check: (v) => (v < 3000 ? 'containerLogMonitorInterval: must be a positive time duration greater than or equal to 3s' : undefined),
  }),
  /**
   * How the ConfigMaps and Secrets of pods' volumes are kept (src/volumes/sources.ts): Watch (a
   * watch per object), Cache (GET again once the Node's node.alpha.kubernetes.io/ttl, else a
   * minute, has passed) or Get (GET each time). Upstream's NewMainKubelet refuses anything else.
   */
  configMapAndSecretChangeDetectionStrategy: field(str, 'Watch', {
    check: (v) => (['Watch', 'Cache', 'Get'].includes(v) ? undefined : `unknown configmap and secret manager mode: ${v}`),
  }),
  systemReserved: field(stringMap, {}, { flag: 'system-reserved' }),
  kubeReserved: field(stringMap, {}, { flag: 'kube-reserved' }),
  /** CPUs kept from pods; they override kubeReserved/systemReserved cpu (src/cpumanager/manager.ts reservedQuantities). */
  reservedSystemCPUs: field(str, '', { flag: 'reserved-cpus' }),
  /**
   * Upstream re-shows the metrics its previous minor release deprecated and this one hid; of the
   * kubelet's (and its client's) metrics none is hidden in v1.36, so "1.35" shows nothing more
   * there either. Anything else is refused with ValidateShowHiddenMetricsVersion's words.
   */
  showHiddenMetricsForVersion: field(str, '', {
    check: (v) =>
      v === '' || v === '1.35'
        ? undefined
        : `invalid showHiddenMetricsForVersion: showHiddenMetricsForVersion: Invalid value: ${JSON.stringify(v)}: must be omitted or have the value '1.35'; only the previous minor version is allowed`,
  }),
  enforceNodeAllocatable: field(strings, ['pods'], { flag: 'enforce-node-allocatable' }),
  /** Held to systemReserved and kubeReserved when enforceNodeAllocatable names them (src/kubelet/container-manager.ts enforceReserved); read nowhere else, as upstream. */
  systemReservedCgroup: field(str, '', { flag: 'system-reserved-cgroup' }),
  kubeReservedCgroup: field(str, '', { flag: 'kube-reserved-cgroup' }),
  /** Sysctls (or prefixes ending in *) pods may set beyond the safe ones. */
  allowedUnsafeSysctls: field(strings, [], { flag: 'allowed-unsafe-sysctls' }),
  /** The FlexVolume drivers' directory, VENDOR~DRIVER/DRIVER (src/volumes/plugins/flexvolume). */
  volumePluginDir: field(str, '/usr/libexec/kubernetes/kubelet-plugins/volume/exec/', { flag: 'volume-plugin-dir' }),
  /** Node.spec.providerID at registration (src/node/status.ts nodeForRegistration). */
  providerID: field(str, '', { flag: 'provider-id' }),
  /** On cgroup v2 upstream's memcg notifier is disabled, so true changes nothing there either; refused at start on cgroup v1 (src/eviction/memcg-notification.ts). */
  kernelMemcgNotification: field(bool, false, { omitEmpty: true, flag: 'kernel-memcg-notification' }),
  /** The log's verbosity (-v) and format (text or json, src/log/log.ts); vmodule and the output options are not read (ignoredParts). */
  logging: field(logging, LOGGING_DEFAULTS, {
    check: loggingError,
    ignoredParts: loggingIgnored,
    flag: [
      { name: 'v', path: 'verbosity', form: intForm },
      { name: 'vmodule', path: 'vmodule', form: vmoduleForm },
      { name: 'log-flush-frequency', path: 'flushFrequency', form: durationForm },
      { name: 'logging-format', path: 'format', form: stringForm },
      { name: 'log-text-info-buffer-size', path: 'options.text.infoBufferSize', form: quantityForm },
      { name: 'log-text-split-stream', path: 'options.text.splitStream', form: boolForm },
    ],
  }),
  /** /logs/ (src/server/system-logs.ts); false answers it with 405. */
  enableSystemLogHandler: field(bool, true),
  /** The node log query on /logs/ (src/server/node-logs.ts, NodeLogQuery); needs enableSystemLogHandler. */
  enableSystemLogQuery: field(bool, false),
  /** Graceful node shutdown (src/nodeshutdown): 0 and no list (the default) leave it off. */
  shutdownGracePeriodMs: field(duration, 0),
  shutdownGracePeriodCriticalPodsMs: field(duration, 0),
  shutdownGracePeriodByPodPriority: field(shutdownPeriods, []),
  /**
   * The cap of the containers' crash-loop back-off (src/runtime/crash-backoff.ts
   * crashLoopBackOffPeriods), with KubeletCrashLoopBackOffMax (beta, on); defaulted to 300 s only
   * with the gate on (decodeFields), checked by crashLoopBackOffError.
   */
  crashLoopBackOff: field(crashLoopBackOffCodec, { maxContainerRestartPeriodMs: MAX_CONTAINER_BACKOFF_MS }),
  /** The memory manager's Static policy: per NUMA node, the memory and hugepages held back (validateReservedMemoryConfiguration). */
  reservedMemory: field(list as Codec<MemoryReservation[]>, [], {
    check: reservedMemoryError,
    flag: { name: 'reserved-memory', form: reservedMemoryForm },
  }),
  /** RuntimeDefault instead of Unconfined for containers that name no seccomp profile. */
  seccompDefault: field(bool, false),
  /**
   * memory.high's share of the limit under MemoryQoS (alpha, off), its only reader upstream too:
   * with the gate off it does nothing there either. Checked as ValidateKubeletConfiguration does.
   */
  memoryThrottlingFactor: field(num, 0.9, {
    check: (v) =>
      v <= 0 || v > 1
        ? `invalid configuration: memoryThrottlingFactor ${v} must be greater than 0 and less than or equal to 1.0`
        : undefined,
  }),
  /**
   * None: no memory.min or memory.low for pods, which is what kubelet-ts does. TieredReservation
   * needs MemoryQoS (alpha) as upstream checks, and is refused at start as not in effect (ignoredParts).
   */
  memoryReservationPolicy: field(str, 'None', {
    check: (v) =>
      v === 'None' || v === 'TieredReservation'
        ? undefined
        : `invalid configuration: option ${JSON.stringify(v)} specified for memoryReservationPolicy. Valid options are "None" or "TieredReservation"`,
    ignoredParts: (v) => (v === 'TieredReservation' ? ['memoryReservationPolicy'] : []),
  }),
  registerWithTaints: field(list as Codec<Taint[]>, [], { flag: { name: 'register-with-taints', form: taintsForm } }),
  /** false: the Node is not created, only its status kept once someone else made it (src/node/agent.ts). */
  registerNode: field(bool, true, { flag: 'register-node' }),
  /**
   * false: no ephemeral-storage in the Node's capacity and allocatable (src/node/status.ts), so pods
   * requesting it are refused at admission, and no eviction for the pods' own ephemeral-storage
   * limits (src/eviction/eviction-manager.ts); the node's nodefs/imagefs thresholds stay. For hosts
   * that cannot measure local storage (upstream's rootless kind).
   */
  /** OpenTelemetry spans to an OTLP collector (src/tracing); absent: none. No flag upstream. */
  tracing: optional(tracingCodec, { check: tracingError }),
  localStorageCapacityIsolation: field(bool, true, { flag: 'local-storage-capacity-isolation' }),
  containerRuntimeEndpoint: field(str, 'unix:///run/containerd/containerd.sock', { flag: 'container-runtime-endpoint' }),
  imageServiceEndpoint: field(str, '', { flag: 'image-service-endpoint' }),
  /** true (the default): no start on a cgroup v1 host (src/resources/linux-resources.ts cgroupV1Refused). */
  failCgroupV1: field(bool, true, { flag: 'fail-cgroupv1' }),
  /** The IDs each hostUsers: false pod gets (src/userns), a multiple of 65536; unset: 65536. No flag upstream. */
  userNamespaces: field(userNamespacesCodec, {}, { check: userNamespacesError }),
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
export const yamlName = (key: string, f: Field<unknown>) =>
  f.codec === duration || f.codec === signedDuration ? key.replace(/Ms$/, '') : key;
const BY_YAML = new Map(ROWS.map(([key, f]) => [yamlName(key, f), [key, f] as const]));

/** Which fields are read by nothing yet, by their YAML names. */
export const notInEffect = ROWS.filter(([, f]) => !f.inEffect).map(([key, f]) => yamlName(key, f));

export const defaults = Object.fromEntries(
  ROWS.filter(([, f]) => f.default !== undefined).map(([key, f]) => [key, f.default]),
) as KubeletConfig;

const V1BETA1 = 'kubelet.config.k8s.io/v1beta1';

/** Pure: a KubeletConfiguration document's fields, its apiVersion and kind checked and taken off. */
export function readDocument(text: string, source: string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    throw new ConfigError(`${source}: invalid YAML: ${(e as Error).message}`);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new ConfigError(`${source}: not a KubeletConfiguration mapping`);
  const { apiVersion, kind, ...rest } = doc as Record<string, unknown>;
  if (kind !== 'KubeletConfiguration') throw new ConfigError(`${source}: kind: expected KubeletConfiguration, got ${JSON.stringify(kind)}`);
  if (apiVersion !== V1BETA1 && apiVersion !== 'kubelet.config.k8s.io/v1') {
    throw new ConfigError(`${source}: apiVersion: expected ${V1BETA1}, got ${JSON.stringify(apiVersion)}`);
  }
  return rest;
}

/**
 * Pure: a document's fields decoded over the defaults, strictly, without the checks.
 * `explicit` names the fields a flag set: upstream sets flags after defaulting, so their zero
 * is a value, not "unset".
 */
function decodeFields(rest: Record<string, unknown>, source: string, explicit: ReadonlySet<string> = new Set()): KubeletConfig {
  const out: Record<string, unknown> = { ...defaults };
  for (const [name, value] of Object.entries(rest)) {
    const row = BY_YAML.get(name);
    if (!row) throw new ConfigError(`${source}: unknown field "${name}"`);
    const [key, f] = row;
    const converted = f.codec.decode(name, value, f.default);
    // As upstream's defaulting: an empty string or zero duration (what kubeadm writes for
    // "unset", e.g. containerRuntimeEndpoint: "") takes the default, and so does a zero in the
    // int fields SetDefaults_KubeletConfiguration defaults on 0.
    const unset = !explicit.has(name) && (value === null || value === '' || (converted === 0 && (f.codec.zeroIsUnset || f.zeroIsUnset)));
    if (!unset) out[key] = converted;
  }
  // SetDefaults_KubeletConfiguration defaults maxContainerRestartPeriod only with
  // KubeletCrashLoopBackOffMax on (the document's gates over the release's): off, unset stays unset.
  const clbo = rest.crashLoopBackOff as Record<string, unknown> | null | undefined;
  if (!featureEnabled(out.featureGates as Record<string, boolean>, 'KubeletCrashLoopBackOffMax') && clbo?.maxContainerRestartPeriod == null)
    out.crashLoopBackOff = {};
  return out as KubeletConfig;
}

// A patch's nulls delete; the rest is checked as a document.
const withoutNulls = (v: unknown): unknown =>
  v && typeof v === 'object' && !Array.isArray(v)
    ? Object.fromEntries(Object.entries(v).flatMap(([k, x]) => (x === null ? [] : [[k, withoutNulls(x)]])))
    : v;

function wrap<T>(source: string, decode: () => T): T {
  try {
    return decode();
  } catch (e) {
    if (e instanceof ConfigError) throw e.message.startsWith(`${source}: `) ? e : new ConfigError(`${source}: ${e.message}`);
    throw e;
  }
}

function decodeDocument(rest: Record<string, unknown>, source: string, explicit?: ReadonlySet<string>): KubeletConfig {
  const cfg = decodeFields(rest, source, explicit);
  const problem = invalidValue(cfg, rest);
  if (problem) throw new ConfigError(`${source}: ${problem}`);
  return cfg;
}

/** Pure: parses a KubeletConfiguration document over the defaults. */
export function parseKubeletConfig(text: string, source = 'config'): KubeletConfig {
  return decodeDocument(mergeDefaultEvictionHard(readDocument(text, source)), source);
}

/**
 * Pure: the --config file's document with, when it sets mergeDefaultEvictionSettings: true and
 * an evictionHard, the default evictionHard's signals it leaves out added, as upstream's
 * loadConfigFile (cmd/kubelet/app/server.go) does to the file alone: drop-ins and the
 * --eviction-hard flag then apply over it as they would over any evictionHard. Without the
 * setting, a file's evictionHard replaces the defaults whole; evictionSoft has no defaults.
 */
export function mergeDefaultEvictionHard(doc: Record<string, unknown>): Record<string, unknown> {
  const hard = doc.evictionHard;
  if (doc.mergeDefaultEvictionSettings !== true || !hard || typeof hard !== 'object' || Array.isArray(hard)) return doc;
  return { ...doc, evictionHard: { ...FIELDS.evictionHard.default, ...hard } };
}

/** RFC 7386 JSON merge patch, as evanphx/json-patch's MergePatch: mappings merge, null deletes, anything else (a list too) replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!patch || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> = target && typeof target === 'object' && !Array.isArray(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** One config flag's spec: the field's YAML name and the path below it. */
interface ConfigFlag {
  field: string;
  path: string[];
  form: FlagForm;
}
// The form a flag of a field with this codec reads, when its row names none.
const FORM_OF = new Map<unknown, FlagForm>([
  [str, stringForm],
  [int, intForm],
  [bool, boolForm],
  [duration, durationForm],
  [signedDuration, durationForm],
  [strings, stringsForm],
  [stringMap, mapForm],
  [boolMap, boolMapForm],
  [stringsMap, colonMultimapForm],
]);

/** Every flag of upstream's AddKubeletConfigFlags kubelet-ts reads, from the rows' flag column. */
export const CONFIG_FLAGS: ReadonlyMap<string, ConfigFlag> = new Map(
  ROWS.flatMap(([key, f]) => {
    const specs = f.flag === undefined ? [] : Array.isArray(f.flag) ? f.flag : [typeof f.flag === 'string' ? { name: f.flag } : f.flag];
    return specs.map((spec): [string, ConfigFlag] => {
      const form = spec.form ?? FORM_OF.get(f.codec);
      if (!form) throw new Error(`FIELDS.${key}: flag --${spec.name} needs a form`);
      return [spec.name, { field: yamlName(key, f), path: spec.path ? spec.path.split('.') : [], form }];
    });
  }),
);

/** Whether a config flag is a bool one (pflag's NoOptDefVal "true": --flag alone is --flag=true). */
export const isBoolFlag = (name: string) => CONFIG_FLAGS.get(name)?.form === boolForm;

/**
 * Pure: the config flags' occurrences (in command-line order) set over a document, as
 * kubeletConfigFlagPrecedence re-parses them over the loaded configuration: each flag sets
 * its field (lists and maps as a whole, the occurrences of one flag accumulating), except that
 * the document's feature gates the flags do not name are kept. Returns the document and the
 * fields set.
 */
export function applyConfigFlags(
  doc: Record<string, unknown>,
  given: readonly (readonly [name: string, text: string])[],
): { document: Record<string, unknown>; set: Set<string> } {
  const values = new Map<string, unknown>();
  for (const [name, text] of given) {
    const spec = CONFIG_FLAGS.get(name);
    if (!spec) throw new Error(`--${name} is not a KubeletConfiguration flag`);
    try {
      values.set(name, spec.form(text, values.get(name)));
    } catch (e) {
      if (!(e instanceof FlagError)) throw e;
      throw new ConfigError(`invalid argument "${text}" for "--${name}" flag: ${e.message}`);
    }
  }
  let out: Record<string, unknown> = { ...doc };
  const set = new Set<string>();
  for (const [name, value] of values) {
    const { field, path } = CONFIG_FLAGS.get(name)!;
    set.add(field);
    if (field === 'featureGates') out.featureGates = { ...(doc.featureGates as object | undefined), ...(value as object) };
    else out = setAt(out, [field, ...path], value);
  }
  return { document: out, set };
}
// The value put at a path, the mappings along it copied; a map a flag sets replaces the
// document's (pflag's first Set clears the map).
function setAt(doc: Record<string, unknown>, path: string[], value: unknown): Record<string, unknown> {
  const [head, ...rest] = path as [string, ...string[]];
  const below = doc[head];
  const inner = below && typeof below === 'object' && !Array.isArray(below) ? (below as Record<string, unknown>) : {};
  return { ...doc, [head]: rest.length ? setAt(inner, rest, value) : value };
}

export interface ConfigSources {
  /** --config: its path (for messages) and text. */
  file?: { source: string; text: string };
  /** --config-dir: its *.conf files in the order upstream walks them. */
  dropIns?: readonly { source: string; text: string }[];
  /** The config flags as given, in order; a bool flag alone is "true". */
  flags?: readonly (readonly [name: string, text: string])[];
}

/**
 * Pure: the configuration as upstream's NewKubeletCommand builds it: defaults, the --config file
 * (loadConfigFile), its --config-dir drop-ins merged in lexical order (mergeKubeletConfigurations:
 * JSON merge patches over the whole v1beta1 form of what came before), then the flags over all
 * of it (kubeletConfigFlagPrecedence), and only then the checks (ValidateKubeletConfiguration).
 * Also returns the final document, for ignoredSettings.
 */
export function loadKubeletConfig(s: ConfigSources): { config: KubeletConfig; document: Record<string, unknown> } {
  const source = s.file?.source ?? 'command line';
  // The checks run on what all three made: name them all.
  const sources = [s.file?.source, s.dropIns?.length ? '--config-dir' : '', s.flags?.length ? 'flags' : ''].filter(Boolean).join(' + ');
  let doc = s.file ? mergeDefaultEvictionHard(readDocument(s.file.text, s.file.source)) : {};
  if (s.dropIns?.length) {
    // The base is the full configuration so far, as upstream marshals it (defaults included):
    // a drop-in's key in a map (evictionHard) merges with the defaults' keys.
    let base: Record<string, unknown> = { ...doc, ...toV1beta1(decodeFields(doc, source)) };
    for (const d of s.dropIns) {
      const rest = readDocument(d.text, d.source);
      wrap(d.source, () => decodeFields(withoutNulls(rest) as Record<string, unknown>, d.source)); // strictly, naming the drop-in
      base = mergePatch(base, rest) as Record<string, unknown>;
    }
    doc = base;
  }
  const { document, set } = applyConfigFlags(doc, s.flags ?? []);
  return { config: decodeDocument(document, sources || source, set), document };
}
/**
 * Pure: the settings of a loaded document (the --config file, drop-ins and flags) that
 * kubelet-ts reads nothing of, when they are not upstream's default: the fields whose row is
 * not in effect, and the in-effect fields' ignored parts.
 * What the start-up warnings name; a zero kubeadm writes for "unset" is the default.
 */
export function ignoredSettings(doc: Record<string, unknown>): string[] {
  const c = decodeFields(doc, 'config') as Record<string, unknown>;
  const out: string[] = [];
  for (const [key, f] of ROWS) {
    if (!f.inEffect && !isDeepStrictEqual(c[key], f.default)) out.push(f.why ? `${yamlName(key, f)} (${f.why})` : yamlName(key, f));
    else if (f.inEffect && f.ignoredParts && c[key] !== undefined) out.push(...f.ignoredParts(c[key]));
  }
  return out;
}

// ValidateKubeletConfiguration's checks across fields (and the feature gates), after each
// row's own check.
const CROSS_CHECKS: ((c: KubeletConfig, raw: Record<string, unknown>) => string | undefined)[] = [
  // The ImageMaximumGCAge gate is GA and locked on in v1.36: its "gate required" check cannot fire.
  (c) =>
    c.imageMaximumGCAgeMs > 0 && c.imageMaximumGCAgeMs <= c.imageMinimumGCAgeMs
      ? `invalid configuration: imageMaximumGCAge ${goDuration(c.imageMaximumGCAgeMs)} must be greater than imageMinimumGCAge ${goDuration(c.imageMinimumGCAgeMs)}`
      : undefined,
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
  (c, raw) => pulledImagesConfigError(c, raw),
  (c) =>
    c.serializeImagePulls && (c.maxParallelImagePulls ?? 1) > 1
      ? 'maxParallelImagePulls: cannot be larger than 1 unless serializeImagePulls is set to false'
      : undefined,
  (c, raw) =>
    c.nodeStatusReportFrequencyMs < c.nodeStatusUpdateFrequencyMs && raw.nodeStatusReportFrequency !== undefined
      ? 'nodeStatusReportFrequency: must not be shorter than nodeStatusUpdateFrequency'
      : undefined,
  // Upstream's ValidateKubeletConfiguration: the gate's only reader beside it is the serving certificate manager's start.
  (c) =>
    c.serverTLSBootstrap && !featureEnabled(c.featureGates, 'RotateKubeletServerCertificate')
      ? 'invalid configuration: serverTLSBootstrap true requires feature gate RotateKubeletServerCertificate'
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
  (c) => crashLoopBackOffError(c),
  (c) => loggingGateError(c.logging, c.featureGates),
  (c) =>
    c.memoryReservationPolicy === 'TieredReservation' && !featureEnabled(c.featureGates, 'MemoryQoS')
      ? 'invalid configuration: memoryReservationPolicy "TieredReservation" requires MemoryQoS feature gate to be enabled'
      : undefined,
  (c, raw) =>
    raw.reservedSystemCPUs && (c.systemReservedCgroup || c.kubeReservedCgroup)
      ? "invalid configuration: can't use reservedSystemCPUs (--reserved-cpus) with systemReservedCgroup (--system-reserved-cgroup) or kubeReservedCgroup (--kube-reserved-cgroup)"
      : undefined,
  (c) => {
    try {
      parseCPUSet(c.reservedSystemCPUs);
      return undefined;
    } catch (e) {
      return `invalid configuration: unable to parse reservedSystemCPUs (--reserved-cpus) ${c.reservedSystemCPUs}, error: ${(e as Error).message}`;
    }
  },
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

/** Upstream's ValidateKubeletConfiguration on KEP-2535's two fields, which depend on its gate. */
function pulledImagesConfigError(c: KubeletConfig, raw: Record<string, unknown>): string | undefined {
  const policy = c.imagePullCredentialsVerificationPolicy;
  const allowlist = c.preloadedImagesVerificationAllowlist;
  if (!featureEnabled(c.featureGates, 'KubeletEnsureSecretPulledImages')) {
    // Upstream defaults the policy only with the gate on: set here means set by the user.
    if (raw.imagePullCredentialsVerificationPolicy) {
      return 'invalid configuration: `imagePullCredentialsVerificationPolicy` must not be set if KubeletEnsureSecretPulledImages feature gate is not enabled';
    }
    if (allowlist.length) {
      return 'invalid configuration: `preloadedImagesVerificationAllowlist` must not be set if KubeletEnsureSecretPulledImages feature gate is not enabled';
    }
    return undefined;
  }
  if (!(VERIFICATION_POLICIES as readonly string[]).includes(policy)) {
    return `invalid configuration: option ${JSON.stringify(policy)} specified for imagePullCredentialsVerificationPolicy. Valid options are ${VERIFICATION_POLICIES.map(
      (p) => JSON.stringify(p),
    )
      .join(', ')
      .replace(/, ([^,]*)$/, ' or $1')}`;
  }
  if (allowlist.length && policy !== 'NeverVerifyAllowlistedImages') {
    return 'invalid configuration: can\'t set `preloadedImagesVerificationAllowlist` if `imagePullCredentialsVertificationPolicy` is not "NeverVerifyAllowlistedImages"';
  }
  try {
    compileAllowlist(allowlist);
  } catch (e) {
    return `invalid configuration: invalid image pattern in \`preloadedImagesVerificationAllowlist\`: ${(e as Error).message}`;
  }
  return undefined;
}

/**
 * Upstream's ValidateKubeletConfiguration on crashLoopBackOff: with KubeletCrashLoopBackOffMax on,
 * maxContainerRestartPeriod set and between 1 s and 300 s (in whole milliseconds, as its
 * Duration.Milliseconds()); with it off, not set at all.
 */
export function crashLoopBackOffError(c: Pick<KubeletConfig, 'crashLoopBackOff' | 'featureGates'>): string | undefined {
  const ms = c.crashLoopBackOff.maxContainerRestartPeriodMs;
  if (!featureEnabled(c.featureGates, 'KubeletCrashLoopBackOffMax')) {
    return ms === undefined
      ? undefined
      : 'invalid configuration: FeatureGate KubeletCrashLoopBackOffMax not enabled, CrashLoopBackOff.MaxContainerRestartPeriod must not be set';
  }
  if (ms === undefined)
    return 'invalid configuration: FeatureGate KubeletCrashLoopBackOffMax is enabled, CrashLoopBackOff.MaxContainerRestartPeriod must be set';
  const whole = Math.trunc(ms);
  return whole < 1000 || whole > 300_000
    ? `invalid configuration: CrashLoopBackOff.MaxContainerRestartPeriod (got: ${ms / 1000} seconds) must be set between 1s and 300s`
    : undefined;
}
