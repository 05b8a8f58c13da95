import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { FEATURE_GATES, featureEnabled, featureSeries, invalidGates, type GateName, type GateSpec } from './gates.ts';

test("feature gates: v1.36.3's specs at 1.36, from each registry the kubelet's gate set merges", () => {
  const cases: [GateName, GateSpec][] = [
    // pkg/features/kube_features.go
    ['NodeLogQuery', { default: true, stage: 'GA', locked: true }],
    ['EnvFiles', { default: true, stage: 'BETA' }],
    ['EventedPLEG', { default: false, stage: 'ALPHA' }],
    ['CSIVolumeHealth', { default: false, stage: 'ALPHA' }],
    ['AllowDNSOnlyNodeCSR', { default: false, stage: 'DEPRECATED' }],
    ['AnyVolumeDataSource', { default: true, stage: 'GA', locked: true }],
    // A constant whose name differs from the gate's: CPUCFSQuotaPeriod is "CustomCPUCFSQuotaPeriod", GA and not yet locked.
    ['CustomCPUCFSQuotaPeriod', { default: true, stage: 'GA' }],
    ['RuntimeClassInImageCriApi', { default: false, stage: 'ALPHA' }],
    // the generic apiserver's, client-go's, component-base's logs and zpages gates, and featuregate's own
    ['APIResponseCompression', { default: true, stage: 'BETA' }],
    ['InformerResourceVersion', { default: true, stage: 'GA' }],
    ['LoggingBetaOptions', { default: true, stage: 'BETA' }],
    ['ContextualLogging', { default: true, stage: 'BETA' }],
    ['ComponentFlagz', { default: true, stage: 'BETA' }],
    ['AllAlpha', { default: false, stage: 'ALPHA' }],
    ['AllBeta', { default: false, stage: 'BETA' }],
  ];
  for (const [name, spec] of cases) assert.deepEqual(FEATURE_GATES[name], spec, name);
  // Every gate as upstream's kubelet resolves it (testdata/upstream-feature-gates.json, written by
  // hack/tools/kube/feature-gates from the pinned release's own gate set).
  const upstream: ({ name: string } & GateSpec)[] = JSON.parse(
    readFileSync(new URL('testdata/upstream-feature-gates.json', import.meta.url), 'utf8'),
  );
  assert.deepEqual(
    Object.fromEntries(Object.entries(FEATURE_GATES).sort(([a], [b]) => (a < b ? -1 : 1))),
    Object.fromEntries(upstream.map(({ name, ...spec }) => [name, spec])),
  );
  for (const [name, g] of Object.entries(FEATURE_GATES) as [string, GateSpec][]) {
    assert.ok(['ALPHA', 'BETA', 'GA', 'DEPRECATED'].includes(g.stage), name);
    assert.equal(typeof g.default, 'boolean', name);
    // Upstream locks only graduated or deprecated gates.
    if (g.locked) assert.ok(g.stage === 'GA' || g.stage === 'DEPRECATED', name);
  }
});

test('featureEnabled: the configured value, else the release default', () => {
  const cases: [Record<string, boolean>, GateName, boolean][] = [
    [{}, 'EnvFiles', true],
    [{ EnvFiles: false }, 'EnvFiles', false],
    [{}, 'CSIVolumeHealth', false],
    [{ CSIVolumeHealth: true }, 'CSIVolumeHealth', true],
    [{ SomeOtherGate: false }, 'NodeLogQuery', true],
    // Locked gates are not refused yet: a value set is what is read, as before.
    [{ NodeLogQuery: false }, 'NodeLogQuery', false],
  ];
  for (const [gates, name, want] of cases) assert.equal(featureEnabled(gates, name), want, `${name} ${JSON.stringify(gates)}`);
});

// What each reader in src assumed before featureEnabled (`!== false` is on by default, `=== true` off):
// the table must give the same defaults, or moving a reader to featureEnabled would change behaviour.
test('the defaults the readers of featureGates relied on', () => {
  const assumed: [GateName, boolean][] = [
    ['NodeLogQuery', true], // src/server/serve.ts, the enableSystemLogQuery check
    ['EnvFiles', true], // src/runtime/env-file-source.ts
    ['GracefulNodeShutdown', true], // src/nodeshutdown/periods.ts
    ['GracefulNodeShutdownBasedOnPodPriority', true],
    ['CustomCPUCFSQuotaPeriod', true], // the cpuCFSQuotaPeriod checks
    ['NodeDeclaredFeatures', true], // src/node/declared-features.ts
    ['RestartAllContainersOnContainerExits', true],
    ['InPlacePodLevelResourcesVerticalScaling', true],
    ['ExtendWebSocketsToKubelet', true],
    ['InPlacePodVerticalScalingInitContainers', true],
    ['UserNamespacesHostNetworkSupport', false],
    ['ResourceHealthStatus', true], // src/kubelet/kubelet.ts
    ['CSIVolumeHealth', false], // src/kubelet/kubelet.ts
  ];
  for (const [name, on] of assumed) assert.equal(featureEnabled({}, name), on, name);
});

test("invalidGates: upstream's SetFromMap refusals (unknown, locked against its default); others pass", () => {
  const rows: [Record<string, boolean>, string | undefined][] = [
    [{}, undefined],
    [{ EventedPLEG: true, AllAlpha: false }, undefined],
    [{ NodeLogQuery: true }, undefined],
    [{ NodeLogQuery: false }, 'cannot set feature gate NodeLogQuery to false, feature is locked to true'],
    [{ EventedPleg: true }, 'unrecognized feature gate: EventedPleg'],
  ];
  for (const [gates, want] of rows) assert.equal(invalidGates(gates), want, JSON.stringify(gates));
});

test("featureSeries: upstream's featureGate.AddMetrics, every gate with its stage (GA's empty) and whether it is on", () => {
  const series = featureSeries({ EventedPLEG: true, EnvFiles: false });
  assert.equal(series.length, Object.keys(FEATURE_GATES).length);
  const of = (name: string) => series.find((s) => s.name === name);
  assert.deepEqual(of('EventedPLEG'), { name: 'EventedPLEG', stage: 'ALPHA', enabled: true }, 'set on');
  assert.deepEqual(of('EnvFiles'), { name: 'EnvFiles', stage: 'BETA', enabled: false }, 'set off');
  assert.deepEqual(of('NodeLogQuery'), { name: 'NodeLogQuery', stage: '', enabled: true }, 'GA, its default');
  assert.deepEqual(of('GitRepoVolumeDriver'), { name: 'GitRepoVolumeDriver', stage: 'DEPRECATED', enabled: false });
  assert.deepEqual(of('AllAlpha'), { name: 'AllAlpha', stage: 'ALPHA', enabled: false });
});
