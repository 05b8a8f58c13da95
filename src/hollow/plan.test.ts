import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type HollowArgs, nodePlan, parseHollowArgs } from './plan.ts';

test('parseHollowArgs: flags, defaults and refusals', () => {
  const base = { namePrefix: 'hollow-ts-', first: 0, basePort: 20250, labels: {}, startConcurrency: 4 };
  const rows: [string[], HollowArgs | { error: string }][] = [
    [['--nodes', '3', '--kubeconfig-dir', '/k', '--root-dir', '/r'], { ...base, nodes: 3, kubeconfigDir: '/k', rootDir: '/r' }],
    [
      ['--nodes=2', '--kubeconfig-dir=/k', '--root-dir=/r', '--first=10', '--name-prefix=h-', '--node-labels=a=b,c=d', '--base-port=30000'],
      { ...base, nodes: 2, kubeconfigDir: '/k', rootDir: '/r', first: 10, namePrefix: 'h-', labels: { a: 'b', c: 'd' }, basePort: 30000 },
    ],
    [
      ['--kubeconfig-dir', '/k', '--root-dir', '/r', '--content-type', 'application/json'],
      { ...base, nodes: 1, kubeconfigDir: '/k', rootDir: '/r', contentType: 'application/json' },
    ],
    [['--root-dir', '/r'], { error: '--kubeconfig-dir is required' }],
    [['--kubeconfig-dir', '/k'], { error: '--root-dir is required' }],
    [['--nodes', '0', '--kubeconfig-dir', '/k', '--root-dir', '/r'], { error: '--nodes: not a valid number: 0' }],
    [['--nodes'], { error: '--nodes needs a value' }],
    [['--bogus', 'x'], { error: 'unknown flag --bogus' }],
    [['--node-labels', 'a', '--kubeconfig-dir', '/k', '--root-dir', '/r'], { error: '--node-labels: not k=v: a' }],
    [
      ['--nodes', '10', '--base-port', '65530', '--kubeconfig-dir', '/k', '--root-dir', '/r'],
      { error: '--base-port 65530: the ports of 10 nodes pass 65535' },
    ],
  ];
  for (const [argv, want] of rows) assert.deepEqual(parseHollowArgs(argv), want, argv.join(' '));
});

test('nodePlan: names, directories, ports and pod IPs never shared', () => {
  const a = parseHollowArgs(['--nodes', '300', '--kubeconfig-dir', '/k', '--root-dir', '/r', '--first', '5']) as HollowArgs;
  const plans = Array.from({ length: a.nodes }, (_, i) => nodePlan(a, i));
  const rows: [string, (p: (typeof plans)[0]) => unknown][] = [
    ['name', (p) => p.name],
    ['root dir', (p) => p.rootDir],
    ['socket', (p) => p.socket],
    ['kubeconfig', (p) => p.kubeconfig],
    ['port', (p) => p.port],
    ['healthz port', (p) => p.healthzPort],
    ['first pod IP', (p) => p.podIP(0)],
  ];
  for (const [what, key] of rows) {
    const values = [...plans.map(key), ...(what.includes('port') ? plans.map((p) => (what === 'port' ? p.healthzPort : p.port)) : [])];
    assert.equal(new Set(values).size, values.length, `${what}s are distinct`);
  }
  const p = plans[0]!;
  assert.deepEqual(
    [p.name, p.rootDir, p.kubeconfig, p.socket, p.port, p.healthzPort],
    ['hollow-ts-5', '/r/hollow-ts-5', '/k/hollow-ts-5.kubeconfig', '/r/hollow-ts-5/cri.sock', 20260, 20261],
  );
  assert.equal(p.config.containerRuntimeEndpoint, 'unix:///r/hollow-ts-5/cri.sock');
  assert.equal(plans[299]!.podIP(252), '10.65.48.253');
  assert.equal(p.podIP(253), p.podIP(0), 'a node reuses its /24 past 253 pods (maxPods is 110)');
  assert.equal(p.config.contentType, undefined, "no --content-type: the kubelet's default (protobuf)");
  assert.equal(nodePlan({ ...a, contentType: 'application/json' }, 0).config.contentType, 'application/json');
});
