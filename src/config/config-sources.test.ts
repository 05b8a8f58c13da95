// The configuration as upstream's NewKubeletCommand builds it from --config, --config-dir and
// the flags (loadKubeletConfig), and the start-up warnings' decision (ignoredSettings).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CONFIG_FLAGS, ignoredSettings, loadKubeletConfig, mergePatch, readDocument } from './kubelet-config.ts';

const head = 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n';
const file = (text: string) => ({ source: 'config.yaml', text: head + text });
const dropIn = (name: string, text: string) => ({ source: `conf.d/${name}`, text: head + text });

test('merge patch as RFC 7386: mappings merge, null deletes, lists and scalars replace', () => {
  const cases: [unknown, unknown, unknown][] = [
    [{ a: 1, b: 2 }, { b: 3 }, { a: 1, b: 3 }],
    [{ a: { x: 1, y: 2 } }, { a: { y: null, z: 3 } }, { a: { x: 1, z: 3 } }],
    [{ a: [1, 2] }, { a: [3] }, { a: [3] }],
    [{ a: 1 }, { a: null }, {}],
    [{ a: 1 }, [1], [1]],
    [{ a: 'x' }, { a: { b: 1 } }, { a: { b: 1 } }],
  ];
  for (const [target, patch, want] of cases) assert.deepEqual(mergePatch(target, patch), want, JSON.stringify(patch));
});

type Case = [
  name: string,
  sources: Parameters<typeof loadKubeletConfig>[0],
  check: (c: ReturnType<typeof loadKubeletConfig>['config']) => unknown,
  want: unknown,
];
const cases: Case[] = [
  ['no file: the defaults', {}, (c) => c.port, 10250],
  ['a flag over the defaults', { flags: [['port', '10260']] }, (c) => c.port, 10260],
  ['a flag over the file', { file: file('port: 10270\n'), flags: [['port', '10260']] }, (c) => c.port, 10260],
  ['the file alone', { file: file('port: 10270\n') }, (c) => c.port, 10270],
  ['a drop-in over the file', { file: file('port: 10270\n'), dropIns: [dropIn('10-a.conf', 'port: 10280\n')] }, (c) => c.port, 10280],
  [
    'drop-ins in the order given, the last wins',
    { dropIns: [dropIn('10-a.conf', 'port: 10280\n'), dropIn('20-b.conf', 'port: 10290\n')] },
    (c) => c.port,
    10290,
  ],
  [
    'a flag over a drop-in',
    { file: file('port: 10270\n'), dropIns: [dropIn('10-a.conf', 'port: 10280\n')], flags: [['port', '10260']] },
    (c) => c.port,
    10260,
  ],
  [
    "a drop-in's map key merges with the defaults' (the base is the whole configuration)",
    { dropIns: [dropIn('10-a.conf', 'evictionHard: {memory.available: 1Gi}\n')] },
    (c) => c.evictionHard,
    {
      'memory.available': '1Gi',
      'nodefs.available': '10%',
      'nodefs.inodesFree': '5%',
      'imagefs.available': '15%',
      'imagefs.inodesFree': '5%',
    },
  ],
  [
    "a drop-in's null deletes a map key",
    {
      file: file('evictionHard: {memory.available: 1Gi, nodefs.available: 5%}\n'),
      dropIns: [dropIn('a.conf', 'evictionHard: {nodefs.available: null}\n')],
    },
    (c) => c.evictionHard,
    { 'memory.available': '1Gi' },
  ],
  [
    "a drop-in's list replaces the file's",
    { file: file('clusterDNS: [10.0.0.10, 10.0.0.11]\n'), dropIns: [dropIn('a.conf', 'clusterDNS: [10.0.0.12]\n')] },
    (c) => c.clusterDNS,
    ['10.0.0.12'],
  ],
  [
    'a drop-in sets one nested field, the others stay',
    {
      file: file('authentication: {x509: {clientCAFile: /ca.crt}}\n'),
      dropIns: [dropIn('a.conf', 'authentication: {anonymous: {enabled: true}}\n')],
    },
    (c) => [c.authentication.x509ClientCAFile, c.authentication.anonymousEnabled, c.authentication.webhookEnabled],
    ['/ca.crt', true, true],
  ],
  [
    "a map flag replaces the file's map (pflag's first Set clears it)",
    { file: file('systemReserved: {cpu: 100m, memory: 1Gi}\n'), flags: [['system-reserved', 'memory=2Gi']] },
    (c) => c.systemReserved,
    { memory: '2Gi' },
  ],
  [
    "eviction flags in upstream's < form",
    { flags: [['eviction-hard', 'memory.available<500Mi']] },
    (c) => c.evictionHard,
    { 'memory.available': '500Mi' },
  ],
  [
    "feature gate flags merge with the file's",
    { file: file('featureGates: {EventedPLEG: true, AllAlpha: true}\n'), flags: [['feature-gates', 'AllAlpha=false,AllBeta=true']] },
    (c) => c.featureGates,
    { EventedPLEG: true, AllAlpha: false, AllBeta: true },
  ],
  [
    'a list flag, repeated',
    {
      flags: [
        ['cluster-dns', '10.0.0.10'],
        ['cluster-dns', '10.0.0.11'],
      ],
    },
    (c) => c.clusterDNS,
    ['10.0.0.10', '10.0.0.11'],
  ],
  ['a bool flag', { file: file('failSwapOn: true\n'), flags: [['fail-swap-on', 'false']] }, (c) => c.failSwapOn, false],
  ['a duration flag', { flags: [['sync-frequency', '1m30s']] }, (c) => c.syncFrequencyMs, 90_000],
  [
    'a nested field by flag, the rest from the file',
    { file: file('authentication: {x509: {clientCAFile: /ca.crt}}\n'), flags: [['anonymous-auth', 'true']] },
    (c) => [c.authentication.x509ClientCAFile, c.authentication.anonymousEnabled],
    ['/ca.crt', true],
  ],
  ['-v is logging.verbosity', { file: file('logging: {verbosity: 2}\n'), flags: [['v', '4']] }, (c) => c.logging.verbosity, 4],
  [
    "kubeadm's logging: zeros are unset",
    { file: file('logging: {flushFrequency: 0, verbosity: 0, options: {json: {infoBufferSize: "0"}, text: {infoBufferSize: "0"}}}\n') },
    (c) => c.logging.flushFrequency,
    '5s',
  ],
  [
    'headers flag',
    {
      flags: [
        ['manifest-url-header', 'a:1,b:2'],
        ['manifest-url-header', 'a:3'],
      ],
    },
    (c) => c.staticPodURLHeader,
    { a: ['1', '3'], b: ['2'] },
  ],
  ['a zero set by flag is a value, so the check refuses it', { flags: [['port', '0']] }, () => 0, /port: 0 must be between 1 and 65535/],
  [
    'the checks run after the flags: a flag can mend the file',
    { file: file('port: 70000\n'), flags: [['port', '10260']] },
    (c) => c.port,
    10260,
  ],
  [
    'a bad flag value, one line',
    { flags: [['max-pods', 'many']] },
    () => 0,
    /invalid argument "many" for "--max-pods" flag: strconv.ParseInt/,
  ],
  ['a bad drop-in names itself', { dropIns: [dropIn('a.conf', 'bogus: 1\n')] }, () => 0, /conf\.d\/a\.conf: unknown field "bogus"/],
  ['json logging', { flags: [['logging-format', 'json']] }, (c) => c.logging.format, 'json'],
  ['an unknown log format refused', { flags: [['logging-format', 'xml']] }, () => 0, /logging.format: Unsupported value: "xml"/],
  ['podCIDR by flag', { flags: [['pod-cidr', '10.0.0.0/24']] }, (c) => c.podCIDR, '10.0.0.0/24'],
  ['volumePluginDir by flag', { flags: [['volume-plugin-dir', '/opt/flex']] }, (c) => c.volumePluginDir, '/opt/flex'],
  ['an ignored field by flag', { flags: [['contention-profiling', 'true']] }, (c) => c.enableContentionProfiling, true],
  ['providerID by flag', { flags: [['provider-id', 'aws:///i-1']] }, (c) => c.providerID, 'aws:///i-1'],
  ['a negative duration by flag', { flags: [['volume-stats-agg-period', '-1s']] }, (c) => c.volumeStatsAggPeriodMs, -1_000],
  // mergeDefaultEvictionSettings, as upstream's loadConfigFile: the file's evictionHard only.
  [
    "a file's evictionHard replaces the defaults whole",
    { file: file('evictionHard: {memory.available: 1Gi}\n') },
    (c) => c.evictionHard,
    { 'memory.available': '1Gi' },
  ],
  [
    'mergeDefaultEvictionSettings: the signals the file leaves out keep their defaults',
    { file: file('mergeDefaultEvictionSettings: true\nevictionHard: {memory.available: 1Gi}\n') },
    (c) => c.evictionHard,
    {
      'memory.available': '1Gi',
      'nodefs.available': '10%',
      'nodefs.inodesFree': '5%',
      'imagefs.available': '15%',
      'imagefs.inodesFree': '5%',
    },
  ],
  [
    'mergeDefaultEvictionSettings: an empty evictionHard is all defaults',
    { file: file('mergeDefaultEvictionSettings: true\nevictionHard: {}\n') },
    (c) => c.evictionHard,
    {
      'memory.available': '100Mi',
      'nodefs.available': '10%',
      'nodefs.inodesFree': '5%',
      'imagefs.available': '15%',
      'imagefs.inodesFree': '5%',
    },
  ],
  [
    'mergeDefaultEvictionSettings: a drop-in still deletes a signal',
    {
      file: file('mergeDefaultEvictionSettings: true\nevictionHard: {memory.available: 1Gi}\n'),
      dropIns: [dropIn('a.conf', 'evictionHard: {nodefs.inodesFree: null}\n')],
    },
    (c) => c.evictionHard,
    { 'memory.available': '1Gi', 'nodefs.available': '10%', 'imagefs.available': '15%', 'imagefs.inodesFree': '5%' },
  ],
  [
    'mergeDefaultEvictionSettings: the --eviction-hard flag still replaces the whole map',
    {
      file: file('mergeDefaultEvictionSettings: true\nevictionHard: {memory.available: 1Gi}\n'),
      flags: [['eviction-hard', 'memory.available<500Mi']],
    },
    (c) => c.evictionHard,
    { 'memory.available': '500Mi' },
  ],
  [
    'mergeDefaultEvictionSettings in a drop-in: only the file is merged, as upstream',
    { file: file('evictionHard: {memory.available: 1Gi}\n'), dropIns: [dropIn('a.conf', 'mergeDefaultEvictionSettings: true\n')] },
    (c) => [c.mergeDefaultEvictionSettings, c.evictionHard],
    [true, { 'memory.available': '1Gi' }],
  ],
];

for (const [name, sources, pick, want] of cases) {
  test(`config sources: ${name}`, () => {
    if (want instanceof RegExp) assert.throws(() => loadKubeletConfig(sources), want);
    else assert.deepEqual(pick(loadKubeletConfig(sources).config), want);
  });
}

test('ignoredSettings: the fields read by nothing, named when not at their defaults', () => {
  const cases: [string, string, string[]][] = [
    ['none', '', []],
    [
      "kubeadm's file: zeros and defaults are quiet, rotateCertificates: true is what kubelet-ts does",
      `cgroupDriver: systemd
cpuManagerReconcilePeriod: 0s
crashLoopBackOff: {}
imageMaximumGCAge: 0s
logging: {flushFrequency: 0, options: {json: {infoBufferSize: "0"}, text: {infoBufferSize: "0"}}, verbosity: 0}
rotateCertificates: true
streamingConnectionIdleTimeout: 0s
volumeStatsAggPeriod: 0s
`,
      [],
    ],
    ['a default set out loud is quiet', 'cgroupsPerQOS: true\nhairpinMode: promiscuous-bridge\nenableProfilingHandler: true\n', []],
    [
      'ignored rows',
      'enableControllerAttachDetach: false\ncpuManagerPolicy: static\nenableContentionProfiling: true\n',
      [
        "enableContentionProfiling (upstream sets Go's block profile rate for /debug/pprof/block; a Node process has no goroutines that block, hence no block profile)",
      ],
    ],
    [
      'flagless fields in effect',
      'showHiddenMetricsForVersion: "1.35"\nmemoryThrottlingFactor: 0.8\nconfigMapAndSecretChangeDetectionStrategy: Get\ntracing: {endpoint: x}\n',
      [],
    ],
    [
      'ignored parts of logging',
      'logging: {vmodule: [{filePattern: a, verbosity: 2}], options: {text: {splitStream: true}}}\n',
      ['logging.vmodule', 'logging.options.text.splitStream'],
    ],
  ];
  for (const [name, text, want] of cases) assert.deepEqual(ignoredSettings(readDocument(head + text, 'f')), want, name);
  // A flag sets the document as the file would, so its field is named the same way.
  assert.deepEqual(ignoredSettings(loadKubeletConfig({ flags: [['contention-profiling', 'true']] }).document), [
    "enableContentionProfiling (upstream sets Go's block profile rate for /debug/pprof/block; a Node process has no goroutines that block, hence no block profile)",
  ]);
});

test('every config flag names a field of the table', () => {
  assert.equal(CONFIG_FLAGS.get('pod-manifest-path')?.field, 'staticPodPath');
  assert.deepEqual(CONFIG_FLAGS.get('anonymous-auth'), {
    ...CONFIG_FLAGS.get('anonymous-auth'),
    field: 'authentication',
    path: ['anonymous', 'enabled'],
  });
});
