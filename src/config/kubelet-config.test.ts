import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  FIELDS,
  defaults,
  ignoredSettings,
  invalidValue,
  loadKubeletConfig,
  notInEffect,
  parseKubeletConfig,
  readDocument,
  toV1beta1,
  yamlName,
} from './kubelet-config.ts';
import { formatDuration, goDuration, parseDuration } from '../apiserver/duration.ts';

const head = 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n';

test('durations in Go form', () => {
  for (const [text, ms] of [
    ['10s', 10_000],
    ['1m0s', 60_000],
    ['300ms', 300],
    ['1h30m', 5_400_000],
    ['0', 0],
    ['1.5s', 1500],
  ] as const) {
    assert.equal(parseDuration(text), ms, text);
  }
  for (const bad of ['', '10', 's', '10x', '1m 0s']) assert.equal(parseDuration(bad), undefined, bad);
  // Back-off messages print Go's Duration.String: 80 s is "1m20s", not "80s".
  for (const [ms, text] of [
    [10_000, '10s'],
    [80_000, '1m20s'],
    [300_000, '5m0s'],
    [3_600_000, '1h0m0s'],
    [0, '0s'],
  ] as const)
    assert.equal(formatDuration(ms), text);
});

test('an empty configuration takes upstream defaults', () => {
  assert.deepEqual(parseKubeletConfig(head), defaults);
});

test('fields override defaults; accepted-but-unused upstream fields are fine', () => {
  const c = parseKubeletConfig(
    head + 'staticPodPath: /etc/kubernetes/manifests\nnodeStatusUpdateFrequency: 5s\nclusterDNS: [10.96.0.10]\nrotateCertificates: true\n',
  );
  assert.equal(c.staticPodPath, '/etc/kubernetes/manifests');
  assert.equal(c.nodeStatusUpdateFrequencyMs, 5000);
  assert.deepEqual(c.clusterDNS, ['10.96.0.10']);
});

test('authentication and authorization as kubeadm writes them', () => {
  const c = parseKubeletConfig(
    head +
      `authentication:
  anonymous: {enabled: false}
  webhook: {cacheTTL: 0s, enabled: true}
  x509: {clientCAFile: /etc/kubernetes/pki/ca.crt}
authorization:
  mode: Webhook
  webhook: {cacheAuthorizedTTL: 0s, cacheUnauthorizedTTL: 0s}
`,
  );
  // kubeadm's 0s TTLs mean "unset": upstream's defaults (2 min, 5 min, 30 s) apply.
  assert.deepEqual(c.authentication, {
    x509ClientCAFile: '/etc/kubernetes/pki/ca.crt',
    webhookEnabled: true,
    webhookCacheTTLMs: 120_000,
    anonymousEnabled: false,
  });
  assert.deepEqual(c.authorization, { mode: 'Webhook', cacheAuthorizedTTLMs: 300_000, cacheUnauthorizedTTLMs: 30_000 });
});

test('empty strings and zero durations take the defaults, as kubeadm relies on', () => {
  const c = parseKubeletConfig(head + 'containerRuntimeEndpoint: ""\nsyncFrequency: 0s\ncgroupRoot: ""\n');
  assert.equal(c.containerRuntimeEndpoint, defaults.containerRuntimeEndpoint);
  assert.equal(c.syncFrequencyMs, defaults.syncFrequencyMs);
  assert.equal(c.cgroupRoot, '/');
});

test('bad input names the field', () => {
  const cases: [string, RegExp][] = [
    ['bogusField: 1', /unknown field "bogusField"/],
    ['constructor: 1', /unknown field "constructor"/],
    ['maxPods: many', /maxPods: expected an integer/],
    ['syncFrequency: soon', /syncFrequency: expected a duration/],
    ['cgroupDriver: upstart', /cgroupDriver: expected cgroupfs or systemd/],
    ['clusterDNS: 10.0.0.10', /clusterDNS: expected a list of strings/],
    ['authentication: {webhook: {enabled: yes please}}', /authentication.webhook.enabled: expected true or false/],
    ['authentication: {x509: {clientCA: /ca.crt}}', /authentication.x509: unknown field "clientCA"/],
    ['authorization: {mode: Node}', /authorization.mode: expected AlwaysAllow or Webhook/],
    ['imageGCHighThresholdPercent: high', /imageGCHighThresholdPercent: expected an integer/],
    ['shutdownGracePeriod: 30', /shutdownGracePeriod: expected a duration/],
    ['featureGates: {SomeGate: yes please}', /featureGates: expected a map of true\/false/],
    ['logging: verbose', /logging: expected a mapping/],
    ['rotateCertificates: "true"', /rotateCertificates: expected true or false/],
    ['port: 70000', /port: 70000 must be between 1 and 65535/],
    // Upstream v1.36 keeps the field but refuses the mode it named.
    ['runOnce: true', /invalid configuration: runOnce \(--runOnce\) true, Runonce mode has been deprecated and should not be set/],
    ['userNamespaces: {idsPerPod: 1000}', /invalid configuration: userNamespaces.idsPerPod must not be less than 65536/],
    ['userNamespaces: {idsPerPod: 100000}', /invalid configuration: userNamespaces.idsPerPod must be a multiple of 65536/],
    ['userNamespaces: {idsPerPod: 4295032832}', /invalid configuration: userNamespaces.idsPerPod must not be more than 4294967295/],
    ['userNamespaces: {idsPerPods: 65536}', /userNamespaces: unknown field "idsPerPods"/],
    ['configMapAndSecretChangeDetectionStrategy: Poll', /unknown configmap and secret manager mode: Poll/],
    [
      'showHiddenMetricsForVersion: "1.34"',
      /invalid showHiddenMetricsForVersion: showHiddenMetricsForVersion: Invalid value: "1.34": must be omitted or have the value '1.35'; only the previous minor version is allowed/,
    ],
    ['memoryThrottlingFactor: 0', /invalid configuration: memoryThrottlingFactor 0 must be greater than 0 and less than or equal to 1.0/],
    [
      'memoryThrottlingFactor: 1.5',
      /invalid configuration: memoryThrottlingFactor 1.5 must be greater than 0 and less than or equal to 1.0/,
    ],
    [
      'serverTLSBootstrap: true\nfeatureGates: {RotateKubeletServerCertificate: false}',
      /invalid configuration: serverTLSBootstrap true requires feature gate RotateKubeletServerCertificate/,
    ],
    ['readOnlyPort: 70000', /readOnlyPort: 70000 must be between 0 and 65535, inclusive/],
    ['readOnlyPort: -1', /readOnlyPort: -1 must be between 0 and 65535, inclusive/],
    ['oomScoreAdj: -1001', /oomScoreAdj: -1001 must be between -1000 and 1000, inclusive/],
    ['podPidsLimit: -2', /podPidsLimit: must be -1 \(no limit\) or more/],
    ['cpuCFSQuotaPeriod: 2s', /cpuCFSQuotaPeriod \(--cpu-cfs-quota-period\) 2s must be between 1ms and 1sec, inclusive/],
    ['cpuCFSQuotaPeriod: 500us', /cpuCFSQuotaPeriod \(--cpu-cfs-quota-period\) 500µs must be between 1ms and 1sec, inclusive/],
    [
      'cpuCFSQuotaPeriod: 50ms\nfeatureGates: {CustomCPUCFSQuotaPeriod: false}',
      /cpuCFSQuotaPeriod \(--cpu-cfs-quota-period\) 50ms requires feature gate CustomCPUCFSQuotaPeriod/,
    ],
    ['cpuCFSQuota: no', /cpuCFSQuota: expected true or false/],
    ['eventRecordQPS: -1', /eventRecordQPS \(--event-qps\) -1 must not be a negative number/],
    ['kubeAPIQPS: -1', /kubeAPIQPS \(--kube-api-qps\) -1 must not be a negative number/],
    ['registryPullQPS: -1', /registryPullQPS \(--registry-qps\) -1 must not be a negative number/],
    ['eventBurst: -5', /eventBurst \(--event-burst\) -5 must not be a negative number/],
    ['singleProcessOOMKill: sometimes', /singleProcessOOMKill: expected true or false/],
    ['maxParallelImagePulls: 3', /maxParallelImagePulls: cannot be larger than 1 unless serializeImagePulls is set to false/],
    ['serializeImagePulls: false\nmaxParallelImagePulls: 0', /maxParallelImagePulls: 0 must be a positive number/],
    ['tlsMinVersion: TLS1.3', /tlsMinVersion: unknown tls version "TLS1.3"/],
    [
      'tlsCipherSuites: [ECDHE-RSA-AES128-GCM-SHA256]',
      /tlsCipherSuites: Cipher suite ECDHE-RSA-AES128-GCM-SHA256 not supported or doesn't exist/,
    ],
    [
      'imageGCHighThresholdPercent: 50\nimageGCLowThresholdPercent: 60',
      /imageGCLowThresholdPercent: must be less than imageGCHighThresholdPercent/,
    ],
    ['evictionHard: {memory.free: 100Mi}', /evictionHard: unknown eviction signal "memory.free"/],
    ['nodeLeaseDurationSeconds: -4', /nodeLeaseDurationSeconds: must be greater than 0/],
    [
      'imagePullCredentialsVerificationPolicy: Sometimes',
      /option "Sometimes" specified for imagePullCredentialsVerificationPolicy. Valid options are "NeverVerify", "NeverVerifyPreloadedImages", "NeverVerifyAllowlistedImages" or "AlwaysVerify"$/,
    ],
    ['preloadedImagesVerificationAllowlist: [registry.k8s.io/pause]', /can't set `preloadedImagesVerificationAllowlist` if/],
    [
      'imagePullCredentialsVerificationPolicy: NeverVerifyAllowlistedImages\npreloadedImagesVerificationAllowlist: [registry.k8s.io/pause:3.10]',
      /invalid image pattern in `preloadedImagesVerificationAllowlist`: neither tag nor digest is accepted/,
    ],
    [
      'imagePullCredentialsVerificationPolicy: NeverVerifyAllowlistedImages\npreloadedImagesVerificationAllowlist: [registry.k8s.io/*/pause]',
      /only patterns ending with '\/\*' are allowed/,
    ],
    [
      'imagePullCredentialsVerificationPolicy: AlwaysVerify\nfeatureGates: {KubeletEnsureSecretPulledImages: false}',
      /`imagePullCredentialsVerificationPolicy` must not be set if KubeletEnsureSecretPulledImages feature gate is not enabled/,
    ],
  ];
  for (const [line, re] of cases) assert.throws(() => parseKubeletConfig(head + line, 'f.yaml'), re, line);
  assert.throws(() => parseKubeletConfig('kind: Pod\n'), /kind: expected KubeletConfiguration/);
});

test('ensure-secret-pulled-images fields: in effect, upstream default, the allowlist with its policy', () => {
  const c = parseKubeletConfig(
    head +
      'imagePullCredentialsVerificationPolicy: NeverVerifyAllowlistedImages\npreloadedImagesVerificationAllowlist: [registry.k8s.io/pause, quay.io/org/*]\n',
  );
  assert.equal(c.imagePullCredentialsVerificationPolicy, 'NeverVerifyAllowlistedImages');
  assert.deepEqual(c.preloadedImagesVerificationAllowlist, ['registry.k8s.io/pause', 'quay.io/org/*']);
  assert.equal(parseKubeletConfig(head).imagePullCredentialsVerificationPolicy, 'NeverVerifyPreloadedImages');
  assert.ok(!notInEffect.includes('imagePullCredentialsVerificationPolicy'));
  assert.ok(!notInEffect.includes('preloadedImagesVerificationAllowlist'));
});

test('container log rotation fields: typed, defaulted and validated as upstream', () => {
  const c = parseKubeletConfig(
    head + 'containerLogMaxSize: 5Mi\ncontainerLogMaxFiles: 3\ncontainerLogMaxWorkers: 2\ncontainerLogMonitorInterval: 30s\n',
  );
  assert.deepEqual(
    [c.containerLogMaxSize, c.containerLogMaxFiles, c.containerLogMaxWorkers, c.containerLogMonitorIntervalMs],
    ['5Mi', 3, 2, 30_000],
  );
  const d = parseKubeletConfig(head);
  assert.deepEqual(
    [d.containerLogMaxSize, d.containerLogMaxFiles, d.containerLogMaxWorkers, d.containerLogMonitorIntervalMs],
    ['10Mi', 5, 1, 10_000],
  );
  const bad: [string, RegExp][] = [
    ['containerLogMaxSize: lots', /containerLogMaxSize/],
    ['containerLogMaxFiles: 1', /containerLogMaxFiles: 1 must be greater than 1/],
    ['containerLogMaxWorkers: 0', /containerLogMaxWorkers/],
    ['containerLogMonitorInterval: 1s', /containerLogMonitorInterval/],
    ['containerLogMaxFiles: "5"', /containerLogMaxFiles: expected an integer/],
  ];
  for (const [line, re] of bad) assert.throws(() => parseKubeletConfig(head + line + '\n'), re, line);
});

test('readOnlyPort: 0 (none) by default, the port when set', () => {
  assert.equal(parseKubeletConfig(head).readOnlyPort, 0);
  assert.equal(parseKubeletConfig(head + 'readOnlyPort: 10255\n').readOnlyPort, 10255);
  assert.equal(parseKubeletConfig(head + 'readOnlyPort: 0\n').readOnlyPort, 0);
});

test('cpuCFSQuota and cpuCFSQuotaPeriod: on and 100 ms by default, as set otherwise (CustomCPUCFSQuotaPeriod is GA)', () => {
  const d = parseKubeletConfig(head);
  assert.deepEqual([d.cpuCFSQuota, d.cpuCFSQuotaPeriodMs], [true, 100]);
  const c = parseKubeletConfig(`${head}cpuCFSQuota: false\ncpuCFSQuotaPeriod: 50ms\n`);
  assert.deepEqual([c.cpuCFSQuota, c.cpuCFSQuotaPeriodMs], [false, 50]);
  assert.equal(parseKubeletConfig(`${head}cpuCFSQuotaPeriod: 1s\n`).cpuCFSQuotaPeriodMs, 1000, 'inclusive');
  // The gate off still allows the default period.
  assert.equal(
    parseKubeletConfig(`${head}cpuCFSQuotaPeriod: 100ms\nfeatureGates: {CustomCPUCFSQuotaPeriod: false}\n`).cpuCFSQuotaPeriodMs,
    100,
  );
});

test('the system log handler and the node log query: defaulted and validated as upstream', () => {
  const d = parseKubeletConfig(head);
  assert.deepEqual([d.enableSystemLogHandler, d.enableSystemLogQuery], [true, false]);
  const on = parseKubeletConfig(head + 'enableSystemLogQuery: true\n');
  assert.deepEqual([on.enableSystemLogHandler, on.enableSystemLogQuery], [true, true]);
  assert.equal(parseKubeletConfig(head + 'enableSystemLogHandler: false\n').enableSystemLogHandler, false);
  const bad: [string, RegExp][] = [
    ['enableSystemLogQuery: true\nenableSystemLogHandler: false', /enableSystemLogHandler is required for enableSystemLogQuery/],
    // NodeLogQuery is GA and locked on: off is refused before the query needs it.
    [
      'enableSystemLogQuery: true\nfeatureGates: {NodeLogQuery: false}',
      /cannot set feature gate NodeLogQuery to false, feature is locked to true/,
    ],
    ['featureGates: {NodeLogQuerry: true}', /featureGates: unrecognized feature gate: NodeLogQuerry/],
    ['enableSystemLogQuery: "yes"', /enableSystemLogQuery: expected true or false/],
  ];
  for (const [lines, re] of bad) assert.throws(() => parseKubeletConfig(`${head}${lines}\n`), re, lines);
});

test('failSwapOn and memorySwap: defaulted and validated as upstream', () => {
  const d = parseKubeletConfig(head);
  assert.deepEqual([d.failSwapOn, d.memorySwap], [true, { swapBehavior: '' }]);
  const c = parseKubeletConfig(head + 'failSwapOn: false\nmemorySwap:\n  swapBehavior: LimitedSwap\n');
  assert.deepEqual([c.failSwapOn, c.memorySwap], [false, { swapBehavior: 'LimitedSwap' }]);
  assert.deepEqual(parseKubeletConfig(head + 'memorySwap: {}\n').memorySwap, { swapBehavior: '' });
  const bad: [string, RegExp][] = [
    ['memorySwap: {swapBehavior: UnlimitedSwap}', /memorySwap.swapBehavior: "UnlimitedSwap" must be one of: "", "LimitedSwap" or "NoSwap"/],
    ['memorySwap: {swapLimit: 1}', /memorySwap: unknown field "swapLimit"/],
    ['memorySwap: NoSwap', /memorySwap: expected a mapping/],
    ['failSwapOn: "no"', /failSwapOn: expected true or false/],
  ];
  for (const [lines, re] of bad) assert.throws(() => parseKubeletConfig(`${head}${lines}\n`), re, lines);
});

test('hairpinMode: the three modes, anything else refused as upstream', () => {
  assert.equal(parseKubeletConfig(head).hairpinMode, 'promiscuous-bridge');
  for (const m of ['promiscuous-bridge', 'hairpin-veth', 'none'])
    assert.equal(parseKubeletConfig(`${head}hairpinMode: ${m}\n`).hairpinMode, m);
  assert.throws(
    () => parseKubeletConfig(`${head}hairpinMode: veth\n`),
    /option "veth" specified for hairpinMode \(--hairpin-mode\). Valid options are "none", "hairpin-veth" or "promiscuous-bridge"/,
  );
});

test('maxOpenFiles: 0 is unset (1000000), negative refused as upstream', () => {
  const rows: [string, number | RegExp][] = [
    ['', 1_000_000],
    ['maxOpenFiles: 0\n', 1_000_000],
    ['maxOpenFiles: 65536\n', 65_536],
    ['maxOpenFiles: -1\n', /invalid configuration: maxOpenFiles \(--max-open-files\) -1 must not be a negative number/],
  ];
  for (const [lines, want] of rows) {
    if (want instanceof RegExp) assert.throws(() => parseKubeletConfig(head + lines), want, lines);
    else assert.equal(parseKubeletConfig(head + lines).maxOpenFiles, want, lines);
  }
});

test('contentType: protobuf by default and when unset, JSON when asked for, anything else refused', () => {
  const cases: [string, string][] = [
    ['', 'application/vnd.kubernetes.protobuf'],
    ['contentType: ""\n', 'application/vnd.kubernetes.protobuf'],
    ['contentType: application/json\n', 'application/json'],
    ['contentType: application/vnd.kubernetes.protobuf\n', 'application/vnd.kubernetes.protobuf'],
  ];
  for (const [lines, want] of cases) assert.equal(parseKubeletConfig(head + lines).contentType, want, lines);
  assert.throws(
    () => parseKubeletConfig(`${head}contentType: application/yaml\n`),
    /contentType \(--kube-api-content-type\) "application\/yaml" must be one of: "application\/vnd.kubernetes.protobuf", "application\/json"/,
  );
});

test('goDuration prints as Go time.Duration does', () => {
  const cases: [number, string][] = [
    [0, '0s'],
    [300, '300ms'],
    [1000, '1s'],
    [1500, '1.5s'],
    [10_000, '10s'],
    [60_000, '1m0s'],
    [90_000, '1m30s'],
    [120_000, '2m0s'],
    [300_000, '5m0s'],
    [3_600_000, '1h0m0s'],
    [4 * 3_600_000 + 1000, '4h0m1s'],
    [0.5, '500µs'],
    [0.0001, '100ns'],
    [-2000, '-2s'],
  ];
  for (const [ms, want] of cases) assert.equal(goDuration(ms), want, String(ms));
});

test('graceful node shutdown: off by default, parsed and validated as upstream', () => {
  const d = parseKubeletConfig(head);
  assert.deepEqual([d.shutdownGracePeriodMs, d.shutdownGracePeriodCriticalPodsMs, d.shutdownGracePeriodByPodPriority], [0, 0, []]);
  const c = parseKubeletConfig(head + 'shutdownGracePeriod: 20s\nshutdownGracePeriodCriticalPods: 10s\n');
  assert.deepEqual([c.shutdownGracePeriodMs, c.shutdownGracePeriodCriticalPodsMs], [20_000, 10_000]);
  const p = parseKubeletConfig(
    head +
      'shutdownGracePeriodByPodPriority:\n- priority: 100000\n  shutdownGracePeriodSeconds: 30\n- priority: 0\n  shutdownGracePeriodSeconds: 10\n',
  );
  assert.deepEqual(p.shutdownGracePeriodByPodPriority, [
    { priority: 100000, shutdownGracePeriodSeconds: 30 },
    { priority: 0, shutdownGracePeriodSeconds: 10 },
  ]);
  const bad: [string, RegExp][] = [
    [
      'shutdownGracePeriod: 10s\nshutdownGracePeriodCriticalPods: 20s',
      /shutdownGracePeriodCriticalPods 20s must be <= shutdownGracePeriod 10s/,
    ],
    ['shutdownGracePeriod: 500ms', /shutdownGracePeriod 500ms must be either zero or otherwise >= 1 sec/],
    ['shutdownGracePeriodByPodPriority: [{priority: 0, grace: 1}]', /shutdownGracePeriodByPodPriority\[0\]: unknown field "grace"/],
    ['shutdownGracePeriodByPodPriority: [{priority: high}]', /shutdownGracePeriodByPodPriority\[0\].priority: expected an integer/],
    ['shutdownGracePeriodByPodPriority: 10s', /shutdownGracePeriodByPodPriority: expected a list/],
    [
      'shutdownGracePeriod: 10s\nshutdownGracePeriodByPodPriority: [{priority: 0, shutdownGracePeriodSeconds: 1}]',
      /Cannot specify both shutdownGracePeriodByPodPriority and shutdownGracePeriod at the same time/,
    ],
    ['shutdownGracePeriod: 10s\nfeatureGates: {GracefulNodeShutdown: false}', /requires feature gate GracefulNodeShutdown$/],
  ];
  for (const [lines, re] of bad) assert.throws(() => parseKubeletConfig(`${head}${lines}\n`), re, lines);
});

// SetDefaults_KubeletConfiguration: these ints take their default when 0, as an unset field.
test('a zero port, maxPods, nodeLeaseDurationSeconds or burst takes the default, as upstream defaults it', () => {
  const c = parseKubeletConfig(
    'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nport: 0\nmaxPods: 0\nnodeLeaseDurationSeconds: 0\neventBurst: 0\nregistryBurst: 0\nkubeAPIBurst: 0\neventRecordQPS: 0\n',
  );
  assert.deepEqual(
    [c.port, c.maxPods, c.nodeLeaseDurationSeconds, c.eventBurst, c.registryBurst, c.kubeAPIBurst, c.eventRecordQPS],
    [10250, 110, 40, 100, 10, 100, 0],
    'eventRecordQPS 0 stays: no limit',
  );
});

const rows = () => Object.entries(FIELDS).map(([key, f]) => ({ key, f, yaml: yamlName(key, f as never) }));

test('the field table: one row a field, names upstream spells, durations read into *Ms', () => {
  const all = rows();
  assert.equal(all.length, 125);
  assert.equal(new Set(all.map((r) => r.yaml)).size, all.length, 'one row per YAML name');
  for (const { key, yaml } of all) {
    if (key.endsWith('Ms')) assert.equal(yaml, key.slice(0, -2), key);
    else assert.equal(yaml, key, key);
  }
  // Every property of the parsed configuration comes from a row (the optional ones only when set).
  assert.deepEqual(
    Object.keys(defaults).sort(),
    all
      .map((r) => r.key)
      .filter((k) => k !== 'maxParallelImagePulls' && k !== 'singleProcessOOMKill' && k !== 'tracing')
      .sort(),
  );
  // The defaults pass every check, the row's own and the cross-field ones.
  assert.equal(invalidValue(defaults, {}), undefined);
});

test('the field table marks the fields read by nothing yet', () => {
  assert.deepEqual(notInEffect, ['enableContentionProfiling']);
  // Still parsed and validated as upstream.
  const c = parseKubeletConfig(head + 'registerNode: false\nruntimeRequestTimeout: 5m\ncgroupDriver: systemd\n');
  assert.deepEqual([c.registerNode, c.runtimeRequestTimeoutMs, c.cgroupDriver], [false, 300_000, 'systemd']);
});

test('tracing: absent by default (no tracing), its two fields taken as given and checked as upstream', () => {
  assert.equal(parseKubeletConfig(head).tracing, undefined);
  assert.deepEqual(parseKubeletConfig(`${head}tracing: {}\n`).tracing, {});
  assert.deepEqual(parseKubeletConfig(`${head}tracing: {endpoint: "otel:4317", samplingRatePerMillion: 10000}\n`).tracing, {
    endpoint: 'otel:4317',
    samplingRatePerMillion: 10000,
  });
  assert.throws(() => parseKubeletConfig(`${head}tracing: {samplingRate: 1}\n`), /tracing: unknown field "samplingRate"/);
  assert.throws(() => parseKubeletConfig(`${head}tracing: {samplingRatePerMillion: 2000000}\n`), /less than or equal to one million/);
});

test("qosReserved: taken, and refused at start with upstream's ParseQOSReserved errors", () => {
  assert.deepEqual(parseKubeletConfig(`${head}qosReserved: {memory: 50%}\n`).qosReserved, { memory: '50%' });
  assert.deepEqual(loadKubeletConfig({ flags: [['qos-reserved', 'memory=100%']] }).config.qosReserved, { memory: '100%' });
  const rows: [string, RegExp][] = [
    ['{cpu: 50%}', /--qos-reserved value failed to parse: cannot reserve "cpu" resource/],
    [
      '{memory: "50"}',
      /--qos-reserved value failed to parse: failed to parse percentage "50" for "memory" resource: percentage expected, got '50'/,
    ],
    ['{memory: 120%}', /failed to parse percentage "120%" for "memory" resource: percentage must be between 0 and 100/],
  ];
  for (const [v, want] of rows) assert.throws(() => parseKubeletConfig(`${head}qosReserved: ${v}\n`), want, v);
  // Accepted without the QOSReserved gate, as upstream (it is then not applied: src/kubelet/container-manager.ts).
  assert.equal(ignoredSettings(readDocument(`${head}qosReserved: {memory: 50%}\n`, 'f')).includes('qosReserved'), false);
});

test('cgroupsPerQOS: false is taken with no enforcement of node allocatable, refused with one as upstream', () => {
  const rows: [string, boolean | RegExp][] = [
    ['cgroupsPerQOS: false\nenforceNodeAllocatable: []\n', false],
    ['cgroupsPerQOS: false\nenforceNodeAllocatable: [none]\n', false],
    ['cgroupsPerQOS: true\n', true],
    [
      'cgroupsPerQOS: false\n', // the default enforceNodeAllocatable is [pods]
      /invalid configuration: cgroupsPerQOS \(--cgroups-per-qos\) must be set to true when "pods" contained in enforceNodeAllocatable \(--enforce-node-allocatable\)/,
    ],
  ];
  for (const [yaml, want] of rows) {
    if (want instanceof RegExp) assert.throws(() => parseKubeletConfig(head + yaml), want, yaml);
    else assert.equal(parseKubeletConfig(head + yaml).cgroupsPerQOS, want, yaml);
  }
  const flags = loadKubeletConfig({
    flags: [
      ['cgroups-per-qos', 'false'],
      ['enforce-node-allocatable', ''],
    ],
  }).config;
  assert.deepEqual([flags.cgroupsPerQOS, flags.enforceNodeAllocatable], [false, []]);
});

test("the resource managers' settings: taken, and checked as upstream", () => {
  const c = parseKubeletConfig(
    head +
      'memoryManagerPolicy: Static\ntopologyManagerPolicy: single-numa-node\ntopologyManagerScope: pod\n' +
      'topologyManagerPolicyOptions: {prefer-closest-numa-nodes: "true"}\nreservedMemory: [{numaNode: 0, limits: {memory: 1100Mi}}]\n',
  );
  assert.deepEqual(
    [c.memoryManagerPolicy, c.topologyManagerPolicy, c.topologyManagerScope, c.topologyManagerPolicyOptions, c.reservedMemory],
    ['Static', 'single-numa-node', 'pod', { 'prefer-closest-numa-nodes': 'true' }, [{ numaNode: 0, limits: { memory: '1100Mi' } }]],
  );
  const rows: [string, RegExp][] = [
    ['topologyManagerPolicy: numa', /topologyManagerPolicy \(--topology-manager-policy\) "numa" must be one of/],
    ['topologyManagerScope: node', /topologyManagerScope \(--topology-manager-scope\) "node" must be one of: "container", or "pod"/],
    ['reservedMemory: [{numaNode: 0, limits: {cpu: "1"}}]', /the limit type "cpu" for NUMA node 0 is not supported/],
    ['reservedMemory: [{numaNode: 0, limits: {memory: "0"}}]', /reserved memory may not be zero for NUMA node 0 and resource "memory"/],
    [
      'reservedMemory: [{numaNode: 0, limits: {memory: 1Gi}}, {numaNode: 0, limits: {memory: 1Gi}}]',
      /the reserved memory has a duplicate value for NUMA node 0 and resource "memory"/,
    ],
  ];
  for (const [yaml, want] of rows) assert.throws(() => parseKubeletConfig(`${head}${yaml}\n`), want, yaml);
});

test('every field refuses a value of the wrong type, naming the field', () => {
  for (const { yaml } of rows()) {
    assert.throws(
      () => parseKubeletConfig(`${head}${yaml}: {a: [1]}\n`, 'f.yaml'),
      (e: Error) => e.message.startsWith(`${yaml}: `) || e.message.startsWith(`${yaml}.`),
      yaml,
    );
  }
});

test('a null, an empty string or a zero SetDefaults_KubeletConfiguration treats as unset takes the default', () => {
  const cases: [string, keyof typeof defaults, unknown][] = [
    ['imageServiceEndpoint: ""', 'imageServiceEndpoint', ''],
    ['podLogsDir: ""', 'podLogsDir', '/var/log/pods'],
    ['evictionPressureTransitionPeriod: 0s', 'evictionPressureTransitionPeriodMs', 300_000],
    ['imageMinimumGCAge: "0"', 'imageMinimumGCAgeMs', 120_000],
    ['kubeAPIBurst: 0', 'kubeAPIBurst', 100],
    ['kubeAPIQPS: 0', 'kubeAPIQPS', 0],
    ['healthzPort: 0', 'healthzPort', 0],
    ['evictionMaxPodGracePeriod: 0', 'evictionMaxPodGracePeriod', 0],
  ];
  for (const [line, key, want] of cases) assert.deepEqual(parseKubeletConfig(`${head}${line}\n`)[key], want, line);
});

/** Each row (name, the text after the header, want): read from the parsed file, or refused with a message holding want when it is a string. */
function parsedOrRefused<T>(rows: [string, string, T | string][], read: (c: ReturnType<typeof parseKubeletConfig>) => T) {
  for (const [name, text, want] of rows) {
    if (typeof want === 'string')
      assert.throws(
        () => parseKubeletConfig(head + text),
        (e: Error) => e.message.includes(want),
        name,
      );
    else assert.equal(read(parseKubeletConfig(head + text)), want, name);
  }
}

test('crashLoopBackOff.maxContainerRestartPeriod: defaulted with KubeletCrashLoopBackOffMax, 1s to 300s, refused with the gate off', () => {
  const rows: [string, string, number | undefined | string][] = [
    ['unset: 300 s (the gate is beta, on)', '', 300_000],
    ["kubeadm's {}: the default", 'crashLoopBackOff: {}\n', 300_000],
    ['set', 'crashLoopBackOff: {maxContainerRestartPeriod: 30s}\n', 30_000],
    ['the bounds', 'crashLoopBackOff: {maxContainerRestartPeriod: 1s}\n', 1_000],
    ['gate off, unset: none', 'featureGates: {KubeletCrashLoopBackOffMax: false}\n', undefined],
    ['below 1 s', 'crashLoopBackOff: {maxContainerRestartPeriod: 500ms}\n', 'must be set between 1s and 300s'],
    ['0s is a value, not unset', 'crashLoopBackOff: {maxContainerRestartPeriod: 0s}\n', '(got: 0 seconds) must be set between 1s and 300s'],
    ['above 300 s', 'crashLoopBackOff: {maxContainerRestartPeriod: 301s}\n', '(got: 301 seconds)'],
    [
      'gate off, set',
      'featureGates: {KubeletCrashLoopBackOffMax: false}\ncrashLoopBackOff: {maxContainerRestartPeriod: 30s}\n',
      'FeatureGate KubeletCrashLoopBackOffMax not enabled, CrashLoopBackOff.MaxContainerRestartPeriod must not be set',
    ],
    ['unknown key', 'crashLoopBackOff: {max: 30s}\n', 'crashLoopBackOff: unknown field "max"'],
  ];
  parsedOrRefused(rows, (c) => c.crashLoopBackOff.maxContainerRestartPeriodMs);
  assert.deepEqual(toV1beta1(parseKubeletConfig(head)).crashLoopBackOff, { maxContainerRestartPeriod: '5m0s' });
});

test('imageMaximumGCAge: 0 (off) by default, greater than imageMinimumGCAge when set', () => {
  const rows: [string, string, number | string][] = [
    ['unset', '', 0],
    ["kubeadm's 0s", 'imageMaximumGCAge: 0s\n', 0],
    ['set', 'imageMaximumGCAge: 168h\n', 604_800_000],
    ['equal to the minimum', 'imageMaximumGCAge: 2m\n', 'imageMaximumGCAge 2m0s must be greater than imageMinimumGCAge 2m0s'],
    [
      'below a raised minimum',
      'imageMinimumGCAge: 1h\nimageMaximumGCAge: 30m\n',
      'imageMaximumGCAge 30m0s must be greater than imageMinimumGCAge 1h0m0s',
    ],
    ['negative', 'imageMaximumGCAge: -1s\n', 'imageMaximumGCAge: expected a duration'],
  ];
  parsedOrRefused(rows, (c) => c.imageMaximumGCAgeMs);
});

test('volumeStatsAggPeriod: 1m by default, 0s is unset, a negative one (no volume stats) accepted as upstream', () => {
  const rows: [string, string, number][] = [
    ['unset', '', 60_000],
    ["kubeadm's 0s", 'volumeStatsAggPeriod: 0s\n', 60_000],
    ['set', 'volumeStatsAggPeriod: 2m\n', 120_000],
    ['negative', 'volumeStatsAggPeriod: -1s\n', -1_000],
  ];
  for (const [name, text, want] of rows) assert.equal(parseKubeletConfig(head + text).volumeStatsAggPeriodMs, want, name);
  assert.equal(toV1beta1(parseKubeletConfig(head + 'volumeStatsAggPeriod: -1s\n')).volumeStatsAggPeriod, '-1s');
  assert.throws(() => parseKubeletConfig(head + 'volumeStatsAggPeriod: soon\n'), /volumeStatsAggPeriod: expected a duration/);
});

test('memoryReservationPolicy: None by default; TieredReservation needs MemoryQoS and is not in effect', () => {
  const rows: [string, string, string][] = [
    ['unset', '', 'None'],
    ['empty', 'memoryReservationPolicy: ""\n', 'None'],
    ['None', 'memoryReservationPolicy: None\n', 'None'],
    [
      'TieredReservation with MemoryQoS',
      'featureGates: {MemoryQoS: true}\nmemoryReservationPolicy: TieredReservation\n',
      'TieredReservation',
    ],
    [
      'TieredReservation without MemoryQoS',
      'memoryReservationPolicy: TieredReservation\n',
      'invalid configuration: memoryReservationPolicy "TieredReservation" requires MemoryQoS feature gate to be enabled',
    ],
    [
      'another',
      'memoryReservationPolicy: Tiered\n',
      'option "Tiered" specified for memoryReservationPolicy. Valid options are "None" or "TieredReservation"',
    ],
  ];
  for (const [name, text, want] of rows) {
    if (want.includes(' '))
      assert.throws(
        () => parseKubeletConfig(head + text),
        (e: Error) => e.message.includes(want),
        name,
      );
    else assert.equal(parseKubeletConfig(head + text).memoryReservationPolicy, want, name);
  }
  assert.equal(toV1beta1(parseKubeletConfig(head)).memoryReservationPolicy, 'None');
  // Valid but not in effect: the start is refused naming it.
  assert.deepEqual(
    ignoredSettings(readDocument(head + 'featureGates: {MemoryQoS: true}\nmemoryReservationPolicy: TieredReservation\n', 'f')),
    ['memoryReservationPolicy'],
  );
  assert.deepEqual(ignoredSettings(readDocument(head + 'memoryReservationPolicy: None\n', 'f')), []);
});

test('tlsCurvePreferences: integers, checked as upstream at start, left out of /configz when empty', () => {
  assert.deepEqual(parseKubeletConfig(head).tlsCurvePreferences, []);
  assert.deepEqual(parseKubeletConfig(head + 'tlsCurvePreferences: [23, 4588]\n').tlsCurvePreferences, [23, 4588]);
  assert.throws(
    () => parseKubeletConfig(head + 'tlsCurvePreferences: [31]\n'),
    /tlsCurvePreferences: curve preference 31 is not supported/,
  );
  assert.throws(() => parseKubeletConfig(head + 'tlsCurvePreferences: [X25519]\n'), /tlsCurvePreferences: expected a list of integers/);
  assert.equal('tlsCurvePreferences' in toV1beta1(parseKubeletConfig(head)), false);
  assert.deepEqual(toV1beta1(parseKubeletConfig(head + 'tlsCurvePreferences: [29]\n')).tlsCurvePreferences, [29]);
});

test("streamingConnectionIdleTimeout: accepted as upstream v1.36.3 accepts it (its kubelet reads it nowhere), so CIS's 5m starts", () => {
  assert.equal(parseKubeletConfig(head + 'streamingConnectionIdleTimeout: 5m\n').streamingConnectionIdleTimeoutMs, 300_000);
  assert.deepEqual(ignoredSettings(readDocument(head + 'streamingConnectionIdleTimeout: 5m\n', 'f')), []);
});

test("logging's gates: json needs LoggingBetaOptions, the split streams and info buffers LoggingAlphaOptions (upstream's logsapi.Validate)", () => {
  const rows: [string, RegExp | undefined][] = [
    ['logging: {format: json}\n', undefined],
    [
      'featureGates: {LoggingBetaOptions: false}\nlogging: {format: json}\n',
      /logging.format: Forbidden: Log format json is disabled, see LoggingBetaOptions feature/,
    ],
    ['featureGates: {LoggingBetaOptions: false}\nlogging: {format: text}\n', undefined],
    [
      'logging: {options: {text: {splitStream: true}}}\n',
      /logging.options.text.splitStream: Forbidden: Feature LoggingAlphaOptions is disabled/,
    ],
    [
      'logging: {format: json, options: {json: {infoBufferSize: 1Ki}}}\n',
      /logging.options.json.infoBufferSize: Forbidden: Feature LoggingAlphaOptions is disabled/,
    ],
    ['featureGates: {LoggingAlphaOptions: true}\nlogging: {options: {text: {splitStream: true}}}\n', undefined],
  ];
  for (const [yaml, want] of rows) {
    if (want) assert.throws(() => parseKubeletConfig(head + yaml), want, yaml);
    else assert.equal(invalidValue(parseKubeletConfig(head + yaml), {}), undefined, yaml);
  }
  // With the alpha gate on they pass the check, and are refused at start as not in effect.
  assert.ok(
    ignoredSettings(
      readDocument(`${head}featureGates: {LoggingAlphaOptions: true}\nlogging: {options: {text: {splitStream: true}}}\n`, 'f'),
    ).includes('logging.options.text.splitStream'),
  );
});
