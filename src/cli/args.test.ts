import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCommandLine } from './args.ts';
import { program } from './commands.ts';

const parse = (...args: string[]) => parseCommandLine(program('Kubernetes v1.36.3'), args);
const run = (...args: string[]) => {
  const line = parse(...args);
  assert.ok(!('output' in line), 'a command to run');
  // The config flags are known by name only (from the field table).
  return line as typeof line & { values: Record<string, unknown> };
};
/** The flags given: the defaults of the kubelet's own flags taken out. */
const given = (values: Record<string, unknown>) => Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined));

test("hack/kubelet.sh's flags, with the defaults of the others", () => {
  const line = run(
    ...['--bootstrap-kubeconfig', '/l/bootstrap-kubelet.conf', '--kubeconfig', '/l/kubelet.kubeconfig', '--config', '/l/c.yaml'],
    ...[
      '--hostname-override',
      'vm',
      '--node-ip',
      '172.30.255.10',
      '--container-runtime-endpoint',
      'unix:///run/containerd/containerd.sock',
    ],
    ...['--root-dir', '/var/lib/kubelet', '--network-plugin', 'kubenet', '--v', '2'],
  );
  assert.equal(line.command, 'kubelet');
  assert.deepEqual(given(line.values), {
    kubeconfig: '/l/kubelet.kubeconfig',
    'application-metrics-count-limit': 100,
    'bootstrap-kubeconfig': '/l/bootstrap-kubelet.conf',
    config: '/l/c.yaml',
    'container-hints': '/etc/cadvisor/container_hints.json',
    'global-housekeeping-interval': '1m0s',
    'hostname-override': 'vm',
    'housekeeping-interval': '10s',
    'node-ip': '172.30.255.10',
    'cloud-provider': '',
    'root-dir': '/var/lib/kubelet',
    'node-labels': '',
    'runtime-cgroups': '',
    'minimum-container-ttl-duration': '0s',
    'maximum-dead-containers-per-container': 1,
    'maximum-dead-containers': -1,
    'cni-conf-dir': '/etc/cni/net.d',
    'network-plugin': 'kubenet',
    'machine-id-file': '/etc/machine-id,/var/lib/dbus/machine-id',
    'boot-id-file': '/proc/sys/kernel/random/boot_id',
    // KubeletConfiguration flags: every occurrence's text, for loadKubeletConfig.
    'container-runtime-endpoint': ['unix:///run/containerd/containerd.sock'],
    v: ['2'],
  });
});

test("kubeadm's drop-in forms: --name=value; the last of a repeated flag wins, as pflag", () => {
  const { values } = run(
    '--kubeconfig=/etc/kubernetes/kubelet.conf',
    '--cgroup-root=/kts-a',
    '--port=10350',
    '--node-ip=1.1.1.1',
    '--node-ip=2.2.2.2',
  );
  assert.deepEqual(values['cgroup-root'], ['/kts-a']);
  assert.deepEqual(values.port, ['10350']);
  assert.equal(values['node-ip'], '2.2.2.2');
  assert.equal(values['network-plugin'], 'cni');
  assert.equal(values.kubeconfig, '/etc/kubernetes/kubelet.conf');
  assert.equal(run('--node-labels=').values['node-labels'], '', 'an empty value is a value');
});

test('-v in all its forms', () => {
  for (const args of [['-v', '3'], ['-v=3'], ['-v3'], ['--v=3'], ['--v', '3']])
    assert.deepEqual(run(...args).values.v, ['3'], args.join(' '));
  assert.equal(run().values.v, undefined);
});

test("bool flags as pflag's: alone is true, =false is false, never a separate value", () => {
  assert.equal(run('--fail-swap-on').values['fail-swap-on'], true);
  assert.equal(run('--fail-swap-on=false').values['fail-swap-on'], false);
  assert.equal(run('--seccomp-default=T').values['seccomp-default'], true);
  assert.throws(() => parse('--fail-swap-on', 'false'), /^Error: Unknown argument: false$/);
  assert.throws(() => parse('--fail-swap-on=no'), /^Error: invalid argument "no" for "--fail-swap-on" flag: strconv.ParseBool/);
});

test("join: the endpoint, repeated CA pins, and kubeadm's file paths as defaults", () => {
  const line = run(
    ...['join', '172.30.255.10:6443', '--token', 'abcdef.0123456789abcdef'],
    ...['--discovery-token-ca-cert-hash', 'sha256:aa', '--discovery-token-ca-cert-hash=sha256:bb', '--port', '10350'],
  );
  assert.equal(line.command, 'join');
  assert.deepEqual(line.positionals, ['172.30.255.10:6443']);
  assert.ok(line.command === 'join');
  assert.equal(line.values.token, 'abcdef.0123456789abcdef');
  assert.deepEqual(line.values['discovery-token-ca-cert-hash'], ['sha256:aa', 'sha256:bb']);
  assert.equal(line.values['bootstrap-kubeconfig'], '/etc/kubernetes/bootstrap-kubelet.conf');
  assert.equal(line.values.config, '/var/lib/kubelet/config.yaml');
  assert.deepEqual(line.values.port, ['10350']);
  const flagsFirst = run('--token', 't', 'join', 'h:6443');
  assert.equal(flagsFirst.command, 'join', 'the first positional names the command wherever the flags are');
  assert.ok(flagsFirst.command === 'join');
  assert.deepEqual(flagsFirst.values['discovery-token-ca-cert-hash'], []);
  // Without join, kubeadm's paths are not defaults.
  assert.equal(run().values['bootstrap-kubeconfig'], undefined);
  assert.equal(run().values.config, undefined);
});

test('mistakes are one-line errors naming the cause', () => {
  const cases: [string[], RegExp][] = [
    [['--no-such-flag'], /^Unknown argument: --no-such-flag$/],
    [['--no-such-flag=1', '-x', 'extra'], /^Unknown arguments: --no-such-flag, -x, extra$/],
    [['--token', 'x'], /^Unknown argument: --token$/],
    [['join', 'h:6443', 'more', '--token', 't'], /^Unknown argument: more$/],
    [['join', '--token', 't'], /^Not enough non-option arguments: got 0, need at least 1$/],
    [['join', 'h:6443'], /^Missing required argument: token$/],
    [['--network-plugin', 'weave'], /^Invalid values: Argument: network-plugin, Given: "weave", Choices: "cni", "kubenet"$/],
    [['--maximum-dead-containers', 'abc'], /^invalid argument "abc" for "--maximum-dead-containers" flag: not an integer$/],
    [['--kubeconfig'], /^flag needs an argument: --kubeconfig$/],
    [['kubelet'], /^Unknown argument: kubelet$/],
  ];
  for (const [args, message] of cases) assert.throws(() => parse(...args), { message }, args.join(' '));
});

test('--help and --version win over everything else; help text fits 80 columns', () => {
  const help = (...args: string[]) => {
    const line = parse(...args);
    assert.ok('output' in line);
    return line.output;
  };
  const top = help('--help', '--no-such-flag');
  assert.match(top, /^kubelet-ts \[flags\]\n\nThe Kubernetes node agent/);
  assert.match(top, /Commands:\n {2}kubelet-ts {18}run the kubelet \[default\]\n {2}kubelet-ts join <endpoint> {2}join a kubeadm/);
  for (const flag of Object.keys(program('').commands.kubelet.flags)) assert.match(top, new RegExp(`--${flag}[ \\n]`));
  assert.match(top, / {4}--kubeconfig {18}kubeconfig with .*\n.* \[string\]\n {36}\[default: "\/etc\/kubernetes\/kubelet.conf"\]\n/);
  assert.match(top, /\n {2}-v, --v {27}sets KubeletConfiguration logging.verbosity\n {36}\[int\]\n/);
  assert.match(
    top,
    /\n {6}--authorization-webhook-cache-unauthorized-ttl\n {36}sets KubeletConfiguration\n/,
    'a long name on its own line',
  );
  assert.equal(help('help'), top);
  const join = help('join', '--help');
  assert.match(join, /^kubelet-ts join <endpoint>\n\njoin a kubeadm cluster/);
  assert.match(join, /Positionals:\n {2}endpoint {2}the apiserver, host:port \[string\] \[required\]\n/);
  assert.match(join, /--token +bootstrap token, \[a-z0-9\]\{6\}\.\[a-z0-9\]\{16\}\n {36}\[string\] \[required\]\n/);
  assert.match(join, /--discovery-token-ca-cert-hash\n.*\n.*\[array\] \[default: \[\]\]/);
  assert.match(join, /\n +\[default: "\/etc\/kubernetes\/bootstrap-kubelet.conf"\]\n/, 'ends at the margin');
  assert.doesNotMatch(join, /Commands:/);
  for (const text of [top, join]) for (const l of text.split('\n')) assert.ok(l.length <= 80, l);
  assert.equal(help('--version', '--port', 'abc'), 'Kubernetes v1.36.3\n');
});
