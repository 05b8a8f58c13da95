import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCommandLine } from './args.ts';
import { program } from './commands.ts';
import { flagzFlags, valueText } from './flagz.ts';

test('valueText: pflag and cliflag Value.String() of a given flag', () => {
  const cases: [name: string, type: string, texts: string[], want: string][] = [
    ['root-dir', 'string', ['/a', '/b'], '/b'],
    ['fail-swap-on', 'bool', ['false'], 'false'],
    ['max-pods', 'int32', ['0x10'], '16'],
    ['v', 'Level', ['2'], '2'],
    ['sync-frequency', 'duration', ['60s'], '1m0s'],
    ['sync-frequency', 'duration', ['1.5h'], '1h30m0s'],
    ['cpu-cfs-quota-period', 'duration', ['100ms'], '100ms'],
    ['node-labels', 'mapStringString', ['b=2,a=1', 'c = 3'], 'a=1,b=2,c=3'],
    ['eviction-hard', 'mapStringString', ['nodefs.available<10%,memory.available<100Mi'], 'memory.available<100Mi,nodefs.available<10%'],
    ['feature-gates', 'mapStringBool', ['B=true,A=False'], 'A=false,B=true'],
    ['cluster-dns', 'stringSlice', ['10.0.0.10,10.0.0.11', '10.0.0.12'], '[10.0.0.10,10.0.0.11,10.0.0.12]'],
    ['manifest-url-header', 'colonSeparatedMultimapStringString', ['b:1,a:2', 'b:3'], 'a:2,b:1,b:3'],
    ['address', 'ip', ['0:0::1'], '::1'],
    ['address', 'ip', ['10.0.0.1'], '10.0.0.1'],
    ['sync-frequency', 'duration', ['soon'], 'soon'],
  ];
  for (const [name, type, texts, want] of cases) assert.equal(valueText(name, type, texts), want, `${name} ${texts}`);
});

test("flagzFlags: every upstream flag, given or its DefValue, kubelet-ts's own defaults and flags too", () => {
  const line = parseCommandLine(program(''), [
    ...['--kubeconfig', '/l/k.conf', '--config', '/l/c.yaml', '--v', '2', '--fail-swap-on=false'],
    ...['--root-dir', '/var/lib/kubelet', '--network-plugin', 'kubenet', '--sync-frequency', '30s'],
  ]);
  assert.ok(!('output' in line));
  const defaults = { kubeconfig: '/etc/kubernetes/kubelet.conf', 'network-plugin': 'cni', 'cni-conf-dir': '/etc/cni/net.d' };
  const flags = flagzFlags(line.given, defaults);
  assert.equal(Object.keys(flags).length, 147 + 2);
  assert.equal(flags.kubeconfig, '/l/k.conf');
  assert.equal(flags.config, '/l/c.yaml');
  assert.equal(flags.v, '2');
  assert.equal(flags['fail-swap-on'], 'false');
  assert.equal(flags['sync-frequency'], '30s');
  assert.equal(flags['network-plugin'], 'kubenet');
  assert.equal(flags['cni-conf-dir'], '/etc/cni/net.d');
  assert.equal(flags['read-only-port'], '10255', "upstream's DefValue");
  assert.equal(flags['enforce-node-allocatable'], '[pods]');
  assert.equal(flags.help, 'false');
  assert.equal(flagzFlags([], defaults).kubeconfig, '/etc/kubernetes/kubelet.conf', "kubelet-ts's default where it has its own");
});
