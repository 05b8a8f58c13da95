// kubelet-ts's standing on the gates the pinned release's kubelet reads (testdata/upstream-kubelet-gates.json,
// written by hack/tools/kube/kubelet-gates from the packages cmd/kubelet builds from; regenerate with
//   (cd hack/tools/kube && go run ./kubelet-gates) > src/features/testdata/upstream-kubelet-gates.json)
// is known for each: read, locked, refused away from its default, or accepted with its reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { loadKubeletConfig } from '../config/kubelet-config.ts';
import { DECLARABLE } from '../node/declared-features.ts';
import { FEATURE_GATES, type GateSpec } from './gates.ts';
import { KUBELET_GATES, type Standing, gatesNotInEffect } from './kubelet-gates.ts';

interface UpstreamGate {
  name: string;
  constant?: string;
  package: string;
  goos: string[];
  readIn: string[];
}
const read: UpstreamGate[] = JSON.parse(readFileSync(new URL('testdata/upstream-kubelet-gates.json', import.meta.url), 'utf8'));
// component-base's LoggingStableOptions is a constant its logs package reads, not a gate anyone
// can set: the log formats it stands for are always on (logsapi's featureGates() leaves it out).
const NOT_GATES = ['LoggingStableOptions'];
const upstream = read.filter((g) => !NOT_GATES.includes(g.name));
const table = KUBELET_GATES as Record<string, Standing>;
const specs = FEATURE_GATES as Record<string, GateSpec>;

// The gates src reads through featureEnabled(..., 'Name'), from the source text.
const SRC = new URL('..', import.meta.url);
const readInSrc = new Set<string>();
for (const f of readdirSync(SRC, { recursive: true }) as string[]) {
  if (!f.endsWith('.ts') || f.endsWith('.test.ts')) continue;
  for (const m of readFileSync(new URL(f, SRC), 'utf8').matchAll(/featureEnabled\([^()]*?,\s*'(\w+)'\)/g)) readInSrc.add(m[1]!);
}
// declaredFeatures reads each declarable gate kubelet-ts implements by name from its list.
for (const d of DECLARABLE) if (!d.missing) readInSrc.add(d.name);

test("the list is the release's: 173 gates its kubelet reads, each a gate of the release", () => {
  assert.equal(upstream.length, 173);
  for (const g of upstream) assert.ok(specs[g.name], g.name);
  assert.deepEqual(
    read.filter((g) => !specs[g.name]).map((g) => g.name),
    NOT_GATES,
  );
  // The library gates the kubelet's gate set registers are read where the kubelet links them.
  const from = (pkg: string) => upstream.filter((g) => g.package === pkg).length;
  assert.deepEqual(
    [from('k8s.io/kubernetes/pkg/features'), from('k8s.io/apiserver/pkg/features'), from('k8s.io/client-go/features')],
    [122, 36, 10],
  );
  assert.deepEqual(upstream.find((g) => g.name === 'ComponentStatusz')?.readIn, [
    'k8s.io/apiserver@pkg/server/genericapiserver.go',
    'pkg/kubelet/server/server.go',
  ]);
  // A constant named unlike its gate is listed under the gate's name.
  assert.equal(upstream.find((g) => g.constant === 'CPUCFSQuotaPeriod')?.name, 'CustomCPUCFSQuotaPeriod');
  assert.deepEqual(
    upstream.filter((g) => !g.goos.includes('linux')).map((g) => g.name),
    ['WindowsCPUAndMemoryAffinity', 'WindowsGracefulNodeShutdown'],
  );
});

test('every gate upstream kubelet reads is classified, and nothing else is', () => {
  assert.deepEqual(
    upstream.filter((g) => !table[g.name]).map((g) => g.name),
    [],
  );
  const names = new Set(upstream.map((g) => g.name));
  assert.deepEqual(
    Object.keys(table).filter((n) => !names.has(n)),
    [],
  );
});

test('a gate classified read is read in src through featureEnabled; one read so is classified read', () => {
  for (const [name, standing] of Object.entries(table)) {
    if (standing === 'read') assert.ok(readInSrc.has(name), `${name}: no featureEnabled(..., '${name}') in src`);
    else assert.ok(!readInSrc.has(name), `${name} is read in src: classify it read`);
  }
});

test('locked means locked in the release; refused and accepted gates are not', () => {
  for (const [name, standing] of Object.entries(table)) {
    if (standing === 'locked') assert.ok(specs[name]!.locked, name);
    if (standing === 'refused' || standing === 'accepted') assert.ok(!specs[name]!.locked, `${name} is locked: classify it locked`);
  }
});

test('the counts', () => {
  const count = (s: Standing) => Object.values(table).filter((x) => x === s).length;
  assert.deepEqual(
    { read: count('read'), locked: count('locked'), refused: count('refused'), accepted: count('accepted') },
    { read: 32, locked: 47, refused: 27, accepted: 67 },
  );
});

test("gatesNotInEffect: the refused gates set away from upstream's defaults, sorted", () => {
  const rows: [Record<string, boolean>, string[]][] = [
    [{}, []],
    // At their defaults: accepted.
    [{ MemoryQoS: false, PodLevelResources: true, ContainerStopSignals: false }, []],
    [{ ContainerStopSignals: true }, ['ContainerStopSignals']],
    [{ PodLevelResources: false, ContainerStopSignals: true, PodsAPI: true }, ['ContainerStopSignals', 'PodLevelResources', 'PodsAPI']],
    // Read by kubelet-ts (either way in effect), locked (invalidGates' business), accepted.
    [{ MemoryQoS: true, EnvFiles: false, NodeSwap: false, WindowsGracefulNodeShutdown: false, EventedPLEG: true }, []],
    // Gates upstream's kubelet does not read, and unknown ones (invalidGates refuses those).
    [{ SchedulerQueueingHints: true, ComponentFlagz: false, NoSuchGate: true }, []],
  ];
  for (const [gates, want] of rows) assert.deepEqual(gatesNotInEffect(gates), want, JSON.stringify(gates));
});

test('--feature-gates and featureGates merge before the check', () => {
  const { config } = loadKubeletConfig({
    file: {
      source: 'f',
      text: 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nfeatureGates: {PodsAPI: true, EnvFiles: false}\n',
    },
    flags: [['feature-gates', 'PodLevelResources=false,PLEGOnDemandRelist=false']],
  });
  assert.deepEqual(gatesNotInEffect(config.featureGates), ['PodLevelResources', 'PodsAPI']);
});

test("the stack's own settings start: hack/node-e2e-systemd.sh's gates and the bench's EventedPLEG=false", () => {
  assert.deepEqual(
    gatesNotInEffect({ KubeletServiceAccountTokenForCredentialProviders: true, KubeletEnsureSecretPulledImages: true, EventedPLEG: false }),
    [],
  );
});
