// kubelet-ts's command line against the pinned release's: every flag upstream's kubelet has
// (testdata/upstream-flags.json, written by hack/tools/kube/kubelet-flags from the release's
// own NewKubeletCommand; regenerate with
//   (cd hack/tools/kube && go run ./kubelet-flags) > src/cli/testdata/upstream-flags.json)
// is known here: a KubeletConfiguration flag setting the same field, a kubelet flag, or
// refused with its reason. None is "Unknown argument".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { CONFIG_FLAGS, isBoolFlag } from '../config/kubelet-config.ts';
import { parseCommandLine } from './args.ts';
import { REFUSED, cadvisorContainerdError, program, refusedFlag } from './commands.ts';
import { CADVISOR, CONFIG_FILE, UPSTREAM_FLAGS, deprecationLines } from './upstream-flags.ts';

interface UpstreamFlag {
  name: string;
  type: string;
  default: string;
  deprecated?: string;
  field?: string;
}
const upstream: UpstreamFlag[] = JSON.parse(readFileSync(new URL('testdata/upstream-flags.json', import.meta.url), 'utf8'));
const kubelet = program('Kubernetes v1.36.3').commands.kubelet.flags;
// --help and --version are the parser's own.
const known = (name: string) => name === 'help' || name === 'version' || Object.hasOwn(kubelet, name);

test("the list is the release's: 147 flags, the config ones with their field", () => {
  assert.equal(upstream.length, 147);
  assert.equal(upstream.filter((f) => f.field).length, 105);
});

test("the runtime's table (what /flagz shows for a flag not given, what pflag prints for a deprecated one) is the list's", () => {
  assert.deepEqual(
    UPSTREAM_FLAGS.map(([name, type, def, deprecated]) => ({ name, type, default: def, ...(deprecated ? { deprecated } : {}) })),
    upstream.map((f) => ({ name: f.name, type: f.type, default: f.default, ...(f.deprecated ? { deprecated: f.deprecated } : {}) })),
  );
  assert.equal(UPSTREAM_FLAGS.filter((f) => f[3]).length, 123);
});

test("pflag's line for every occurrence of a deprecated flag, in the order given; none for the others", () => {
  assert.deepEqual(
    deprecationLines([
      ['kubeconfig', '/etc/kubernetes/kubelet.conf'],
      ['max-pods', '10'],
      ['maximum-dead-containers', '3'],
      ['boot-id-file', '/x'],
      ['max-pods', '20'],
    ]),
    [
      `Flag --max-pods has been deprecated, ${CONFIG_FILE}`,
      'Flag --maximum-dead-containers has been deprecated, Use --eviction-hard or --eviction-soft instead. Will be removed in a future version.',
      `Flag --boot-id-file has been deprecated, ${CADVISOR}`,
      `Flag --max-pods has been deprecated, ${CONFIG_FILE}`,
    ],
  );
});

test('every upstream flag is known to kubelet-ts', () => {
  assert.deepEqual(
    upstream.filter((f) => !known(f.name)).map((f) => f.name),
    [],
  );
});

test('every KubeletConfiguration flag sets the field it sets upstream, and no other flag is one', () => {
  for (const f of upstream) {
    const ours = CONFIG_FLAGS.get(f.name);
    if (!f.field) {
      assert.equal(ours, undefined, `--${f.name} is not a config flag upstream`);
      continue;
    }
    assert.ok(ours, `--${f.name} sets ${f.field} upstream`);
    assert.equal([ours.field, ...ours.path].join('.'), f.field, `--${f.name}`);
    assert.equal(isBoolFlag(f.name), f.type === 'bool', `--${f.name} is a bool flag as upstream's`);
  }
  // And kubelet-ts has no config flag of its own.
  const upstreamNames = new Set(upstream.map((f) => f.name));
  assert.deepEqual(
    [...CONFIG_FLAGS.keys()].filter((n) => !upstreamNames.has(n)),
    [],
  );
});

test("the flags kubelet-ts adds are its network ones only; refused flags are upstream's", () => {
  const upstreamNames = new Set(upstream.map((f) => f.name));
  assert.deepEqual(
    Object.keys(kubelet).filter((n) => !upstreamNames.has(n)),
    ['cni-conf-dir', 'network-plugin'],
  );
  for (const name of Object.keys(REFUSED)) assert.ok(upstreamNames.has(name), name);
  for (const [name, r] of Object.entries(REFUSED))
    assert.equal(r.type === 'boolean', upstream.find((f) => f.name === name)!.type === 'bool', `--${name} parses as upstream's`);
});

test('a refused flag stops the start with one line naming it and why', () => {
  for (const name of Object.keys(REFUSED)) {
    const line = parseCommandLine(program(''), [`--${name}=1`.replace(/=1$/, REFUSED[name]!.type === 'boolean' ? '' : '=x')]);
    assert.ok(!('output' in line));
    const why = refusedFlag(line.values as Record<string, unknown>);
    assert.match(why ?? '', new RegExp(`^--${name}: \\S`), name);
    assert.doesNotMatch(why!, /\n/);
  }
  assert.equal(refusedFlag({ port: ['1'] }), undefined);
});

test('a flag upstream lacks is still an unknown argument', () => {
  assert.throws(() => parseCommandLine(program(''), ['--no-such-flag']), /^Error: Unknown argument: --no-such-flag$/);
  assert.throws(() => parseCommandLine(program(''), ['--pod-infra-container-image=x']), /Unknown argument/, 'not a flag of this release');
});

test('--containerd and --containerd-namespace are taken when they name what CRI is, refused otherwise', () => {
  const endpoint = 'unix:///run/containerd/containerd.sock';
  const cases: [string, Record<string, unknown>, RegExp | undefined][] = [
    ['neither', {}, undefined],
    ['the runtime socket', { containerd: '/run/containerd/containerd.sock' }, undefined],
    ['the runtime socket as a URL', { containerd: 'unix:///run/containerd/containerd.sock' }, undefined],
    ["containerd's CRI namespace", { 'containerd-namespace': 'k8s.io' }, undefined],
    [
      'another socket',
      { containerd: '/run/k3s/containerd/containerd.sock' },
      /^--containerd: \/run\/k3s\/containerd\/containerd.sock is not the runtime's socket/,
    ],
    ['another namespace', { 'containerd-namespace': 'moby' }, /^--containerd-namespace: moby: /],
  ];
  for (const [name, values, want] of cases) {
    const got = cadvisorContainerdError(values, endpoint);
    if (want) assert.match(got ?? '', want, name);
    else assert.equal(got, undefined, name);
  }
});
