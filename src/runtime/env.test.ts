import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConfigMap, Container, EnvVar, Pod, Secret, Service } from 'kubernetes-types/core/v1.js';
import { type FileKeyRead, fileKeyId } from './env-file.ts';
import { defaultedLimits } from '../resources/downward.ts';
import {
  envReferences,
  expand,
  expandCommandAndArgs,
  makeEnvironment,
  servicesEnv,
  containerEnvironment,
  type EnvInputs,
  type Fetched,
} from './env.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const cm = (name: string, data: Record<string, string>): Fetched<ConfigMap> => ({ found: { metadata: { name }, data } });
const secret = (name: string, data: Record<string, string>): Fetched<Secret> => ({
  found: { metadata: { name }, data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])) },
});
const svc = (
  ns: string,
  name: string,
  clusterIP: string,
  ports: { port: number; name?: string; protocol?: 'TCP' | 'UDP' | 'SCTP' }[] = [{ port: 80 }],
): Service => ({
  metadata: { namespace: ns, name },
  spec: { clusterIP, ports },
});
const kubernetesSvc = svc('default', 'kubernetes', '10.96.0.1', [{ port: 443, name: 'https' }]);

const pod = (c: Partial<Container> = {}, spec: Partial<NonNullable<Pod['spec']>> = {}, meta: Pod['metadata'] = {}): Pod => ({
  metadata: { name: 'web', namespace: 'shop', uid: 'u-1', labels: { app: 'web', tier: 'front' }, annotations: { note: 'hi' }, ...meta },
  spec: { nodeName: 'node-a', serviceAccountName: 'sa', containers: [{ name: 'main', image: 'busybox', ...c }], ...spec },
});
const inputs = (over: Partial<EnvInputs> = {}): EnvInputs => ({
  configMaps: new Map(),
  secrets: new Map(),
  services: [kubernetesSvc],
  podIPs: ['10.88.0.5'],
  hostIPs: ['172.30.0.1'],
  allocatable: { cpu: '1900m', memory: '3Gi', 'ephemeral-storage': '90Gi' },
  ...over,
});
const run = (p: Pod, i: EnvInputs = inputs()) => makeEnvironment(p, p.spec!.containers[0]!, i);
const envOf = (p: Pod, i?: EnvInputs) => {
  const r = run(p, i);
  assert.ok('env' in r, `unexpected error: ${'error' in r ? r.error : ''}`);
  return Object.fromEntries(r.env.map((e) => [e.name, e.value]));
};
const errorOf = (p: Pod, i?: EnvInputs) => {
  const r = run(p, i);
  return 'error' in r ? r.error : undefined;
};

test('expansion: $(VAR), $$ escapes, unknown and unclosed references stay', () => {
  const vars: Record<string, string> = { A: 'a', B: 'b', EMPTY: '' };
  const m = (n: string) => vars[n] ?? `$(${n})`;
  const cases: [string, string][] = [
    ['$(A)', 'a'],
    ['x$(A)y$(B)z', 'xaybz'],
    ['$(A)$(B)', 'ab'],
    ['$(EMPTY)', ''],
    ['$(UNKNOWN)', '$(UNKNOWN)'],
    ['$$(A)', '$(A)'],
    ['$$$(A)', '$a'],
    ['$$', '$'],
    ['$', '$'],
    ['a$', 'a$'],
    ['$A', '$A'],
    ['$(A', '$(A'],
    ['$(', '$('],
    ['$()', '$()'],
    ['(A)', '(A)'],
    ['$(A)$', 'a$'],
    ['$$$$', '$$'],
  ];
  for (const [input, want] of cases) assert.equal(expand(input, m), want, input);
});

test('literal env values expand against earlier vars, envFrom and service vars, not later ones', () => {
  const p = pod({
    envFrom: [{ configMapRef: { name: 'base' } }],
    env: [
      { name: 'FIRST', value: 'one' },
      { name: 'SECOND', value: '$(FIRST)-two' },
      { name: 'EARLY', value: '$(LATER)' },
      { name: 'LATER', value: 'late' },
      { name: 'FROMCM', value: '[$(COLOR)]' },
      { name: 'SVC', value: 'https://$(KUBERNETES_SERVICE_HOST):$(KUBERNETES_SERVICE_PORT)' },
      { name: 'ESC', value: '$$(FIRST)' },
      { name: 'EMPTY', value: '' },
    ],
  });
  const env = envOf(p, inputs({ configMaps: new Map([['base', cm('base', { COLOR: 'blue' })]]) }));
  assert.equal(env.SECOND, 'one-two');
  assert.equal(env.EARLY, '$(LATER)');
  assert.equal(env.FROMCM, '[blue]');
  assert.equal(env.SVC, 'https://10.96.0.1:443');
  assert.equal(env.ESC, '$(FIRST)');
  assert.equal(env.EMPTY, '');
});

test('precedence: env over envFrom over service variables; later envFrom wins', () => {
  const p = pod({
    envFrom: [{ configMapRef: { name: 'a' } }, { secretRef: { name: 's' } }],
    env: [{ name: 'X', value: 'from-env' }],
  });
  const i = inputs({
    configMaps: new Map([['a', cm('a', { X: 'cm', Y: 'cm', KUBERNETES_SERVICE_HOST: 'override' })]]),
    secrets: new Map([['s', secret('s', { Y: 'secret' })]]),
  });
  const r = run(p, i);
  assert.ok('env' in r);
  const env = Object.fromEntries(r.env.map((e) => [e.name, e.value]));
  assert.deepEqual([env.X, env.Y, env.KUBERNETES_SERVICE_HOST], ['from-env', 'secret', 'override']);
  assert.equal(r.env.filter((e) => e.name === 'KUBERNETES_SERVICE_HOST').length, 1, 'no duplicates');
  assert.equal(r.env[0]!.name, 'KUBERNETES_SERVICE_PORT', 'service variables come first');
});

test('envFrom: prefix, optional, missing required, secret data decoded', () => {
  const cms = new Map([
    ['cfg', cm('cfg', { a: '1', 'b.c': '2', '1x': '3' })],
    ['gone', { notFound: true } as const],
  ]);
  const secrets = new Map([
    ['pw', secret('pw', { user: 'admin' })],
    ['nos', { notFound: true } as const],
  ]);
  const env = envOf(
    pod({
      envFrom: [
        { configMapRef: { name: 'cfg' }, prefix: 'P_' },
        { secretRef: { name: 'pw' }, prefix: 'S_' },
        { configMapRef: { name: 'gone', optional: true } },
      ],
    }),
    inputs({ configMaps: cms, secrets }),
  );
  assert.deepEqual(
    [env.P_a, env['P_b.c'], env.P_1x, env.S_user],
    ['1', '2', '3', 'admin'],
    'every key goes through, as upstream with relaxed names',
  );
  assert.equal(errorOf(pod({ envFrom: [{ configMapRef: { name: 'gone' } }] }), inputs({ configMaps: cms })), 'configmap "gone" not found');
  assert.equal(errorOf(pod({ envFrom: [{ secretRef: { name: 'nos' } }] }), inputs({ secrets })), 'secret "nos" not found');
  assert.equal(
    errorOf(
      pod({ envFrom: [{ configMapRef: { name: 'gone', optional: true } }] }),
      inputs({ configMaps: new Map([['gone', { error: 'GET x: 403 forbidden' }]]) }),
    ),
    'GET x: 403 forbidden',
    'optional covers absence only, not other failures',
  );
  const odd = envOf(
    pod({ envFrom: [{ configMapRef: { name: 'odd' } }] }),
    inputs({ configMaps: new Map([['odd', cm('odd', { 'a=b': 'x', ok: 'y' })]]) }),
  );
  assert.deepEqual([odd['a=b'], odd.ok], [undefined, 'y'], 'a name with = cannot be passed');
});

test('configMapKeyRef and secretKeyRef: values, optional, upstream error messages', () => {
  const cms = new Map([
    ['cfg', cm('cfg', { color: 'red' })],
    ['gone', { notFound: true } as const],
  ]);
  const secrets = new Map([
    ['pw', secret('pw', { password: 's3cr=t' })],
    ['nos', { notFound: true } as const],
  ]);
  const i = inputs({ configMaps: cms, secrets });
  const ref = (kind: 'configMapKeyRef' | 'secretKeyRef', name: string, key: string, optional?: boolean) =>
    pod({ env: [{ name: 'V', valueFrom: { [kind]: { name, key, optional } } }] });
  const cases: [string, Pod, string | undefined, string | undefined][] = [
    ['configmap key', ref('configMapKeyRef', 'cfg', 'color'), 'red', undefined],
    ['secret key', ref('secretKeyRef', 'pw', 'password'), 's3cr=t', undefined],
    ['missing configmap', ref('configMapKeyRef', 'gone', 'k'), undefined, 'configmap "gone" not found'],
    ['missing configmap, optional', ref('configMapKeyRef', 'gone', 'k', true), undefined, undefined],
    ['missing key', ref('configMapKeyRef', 'cfg', 'size'), undefined, "couldn't find key size in ConfigMap shop/cfg"],
    ['missing key, optional', ref('configMapKeyRef', 'cfg', 'size', true), undefined, undefined],
    ['missing secret', ref('secretKeyRef', 'nos', 'k'), undefined, 'secret "nos" not found'],
    ['missing secret key', ref('secretKeyRef', 'pw', 'user'), undefined, "couldn't find key user in Secret shop/pw"],
    ['missing secret key, optional', ref('secretKeyRef', 'pw', 'user', true), undefined, undefined],
  ];
  for (const [what, p, value, error] of cases) {
    const r = run(p, i);
    if (error) {
      assert.deepEqual(r, { error }, what);
      continue;
    }
    assert.ok('env' in r, what);
    assert.equal(r.env.find((e) => e.name === 'V')?.value, value, what);
  }
  // An optional miss leaves an envFrom value of the same name alone.
  const kept = envOf(
    pod({
      envFrom: [{ configMapRef: { name: 'cfg' } }],
      env: [{ name: 'color', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'nope', optional: true } } }],
    }),
    i,
  );
  assert.equal(kept.color, 'red');
});

test('fieldRef: metadata, spec and status fields', () => {
  const f = (fieldPath: string) => ({ valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath } } });
  const cases: [string, string][] = [
    ['metadata.name', 'web'],
    ['metadata.namespace', 'shop'],
    ['metadata.uid', 'u-1'],
    ["metadata.labels['app']", 'web'],
    ["metadata.labels['missing']", ''],
    ["metadata.annotations['note']", 'hi'],
    ['metadata.labels', 'app="web"\ntier="front"'],
    ['spec.nodeName', 'node-a'],
    ['spec.serviceAccountName', 'sa'],
    ['status.podIP', '10.88.0.5'],
    ['status.podIPs', '10.88.0.5,fd00::5'],
    ['status.hostIP', '172.30.0.1'],
    ['status.hostIPs', '172.30.0.1'],
  ];
  const p = pod({ env: cases.map(([path], i) => ({ name: `F${i}`, ...f(path) })) });
  const env = envOf(p, inputs({ podIPs: ['10.88.0.5', 'fd00::5'] }));
  cases.forEach(([path, want], i) => {
    assert.equal(env[`F${i}`], want, path);
  });
  assert.equal(errorOf(pod({ env: [{ name: 'X', ...f('spec.bogus') }] })), 'field label not supported: spec.bogus');
  assert.equal(
    errorOf(pod({ env: [{ name: 'X', valueFrom: { fieldRef: { apiVersion: 'v2', fieldPath: 'metadata.name' } } }] })),
    'unsupported pod version: v2',
  );
});

test('resourceFieldRef: limits and requests with divisors; unset limits read as allocatable or pod-level limits', () => {
  const res = (resource: string, divisor?: string, containerName?: string) => ({
    valueFrom: { resourceFieldRef: { resource, divisor, containerName } },
  });
  const c: Partial<Container> = {
    resources: { requests: { cpu: '250m', memory: '32Mi' }, limits: { cpu: '1500m', memory: '64Mi' } },
    env: [
      { name: 'LCPU', ...res('limits.cpu') },
      { name: 'RCPU', ...res('requests.cpu') },
      { name: 'RCPU_M', ...res('requests.cpu', '1m') },
      { name: 'LMEM_MI', ...res('limits.memory', '1Mi') },
      { name: 'LMEM', ...res('limits.memory') },
      { name: 'RMEM_M', ...res('requests.memory', '1M') },
      { name: 'LEPH_GI', ...res('limits.ephemeral-storage', '1Gi') },
      { name: 'REPH', ...res('requests.ephemeral-storage') },
    ],
  };
  const env = envOf(pod(c));
  assert.deepEqual([env.LCPU, env.RCPU, env.RCPU_M], ['2', '1', '250'], 'cpu rounds up');
  assert.deepEqual([env.LMEM_MI, env.LMEM, env.RMEM_M], ['64', String(64 * 2 ** 20), '34']);
  assert.deepEqual([env.LEPH_GI, env.REPH], ['90', '0'], 'unset limit: node allocatable; unset request: 0');
  const unset = envOf(
    pod({
      env: [
        { name: 'C', ...res('limits.cpu', '1m') },
        { name: 'M', ...res('limits.memory', '1Mi') },
      ],
    }),
  );
  assert.deepEqual([unset.C, unset.M], ['1900', '3072']);
  const podLevel = pod({
    env: [
      { name: 'M', ...res('limits.memory', '1Mi') },
      { name: 'C', ...res('limits.cpu', '1m') },
    ],
  });
  (podLevel.spec as { resources?: object }).resources = { limits: { memory: '256Mi' } };
  assert.deepEqual(Object.values(envOf(podLevel)).slice(-2), ['256', '1900'], 'pod-level memory limit, cpu from allocatable');
  assert.equal(
    errorOf(pod({ env: [{ name: 'X', ...res('limits.cpu') }] }), inputs({ allocatable: undefined })),
    'failed to find node object, expected a node',
  );
  assert.equal(errorOf(pod({ env: [{ name: 'X', ...res('limits.gpu') }] })), 'unsupported container resource : limits.gpu');
  const other = pod({ env: [{ name: 'X', ...res('limits.memory', '1Mi', 'side') }] });
  other.spec!.containers.push({ name: 'side', resources: { limits: { memory: '8Mi' } } });
  assert.equal(envOf(other).X, '8', 'containerName: another container of the pod');
  assert.deepEqual(
    defaultedLimits(pod(), { name: 'x', resources: { limits: { cpu: '0' } } }, { cpu: '2', memory: '1Gi' }),
    { cpu: '2', memory: '1Gi' },
    'a zero limit counts as unset',
  );
});

test('service variables: links for the namespace, KUBERNETES_* always, headless and other namespaces skipped', () => {
  const services = [
    kubernetesSvc,
    svc('shop', 'redis-master', '10.96.0.20', [{ port: 6379 }, { port: 6380, name: 'metrics-port', protocol: 'UDP' }]),
    svc('shop', 'headless', 'None'),
    svc('other', 'elsewhere', '10.96.0.30'),
    svc('shop', 'v6', 'fd00::10', [{ port: 80 }]),
  ];
  const env = envOf(pod(), inputs({ services }));
  assert.deepEqual(Object.fromEntries(Object.entries(env).filter(([k]) => k.startsWith('REDIS_MASTER'))), {
    REDIS_MASTER_SERVICE_HOST: '10.96.0.20',
    REDIS_MASTER_SERVICE_PORT: '6379',
    REDIS_MASTER_SERVICE_PORT_METRICS_PORT: '6380',
    REDIS_MASTER_PORT: 'tcp://10.96.0.20:6379',
    REDIS_MASTER_PORT_6379_TCP: 'tcp://10.96.0.20:6379',
    REDIS_MASTER_PORT_6379_TCP_PROTO: 'tcp',
    REDIS_MASTER_PORT_6379_TCP_PORT: '6379',
    REDIS_MASTER_PORT_6379_TCP_ADDR: '10.96.0.20',
    REDIS_MASTER_PORT_6380_UDP: 'udp://10.96.0.20:6380',
    REDIS_MASTER_PORT_6380_UDP_PROTO: 'udp',
    REDIS_MASTER_PORT_6380_UDP_PORT: '6380',
    REDIS_MASTER_PORT_6380_UDP_ADDR: '10.96.0.20',
  });
  assert.equal(env.KUBERNETES_SERVICE_HOST, '10.96.0.1');
  assert.equal(env.KUBERNETES_SERVICE_PORT_HTTPS, '443');
  assert.equal(env.KUBERNETES_PORT, 'tcp://10.96.0.1:443');
  assert.equal(env.V6_PORT, 'tcp://[fd00::10]:80');
  assert.ok(!Object.keys(env).some((k) => k.startsWith('HEADLESS') || k.startsWith('ELSEWHERE')));
  const noLinks = envOf(pod({}, { enableServiceLinks: false }), inputs({ services }));
  assert.deepEqual(
    Object.keys(noLinks).filter((k) => !k.startsWith('KUBERNETES_')),
    [],
  );
  assert.equal(noLinks.KUBERNETES_SERVICE_HOST, '10.96.0.1');
  assert.equal(
    servicesEnv([svc('x', '1abc', '10.0.0.1')]).get('1ABC_SERVICE_HOST'),
    '10.0.0.1',
    'names as upstream: dashes to underscores, upper case',
  );
});

test('services that could not be listed: an error, except for static pods', () => {
  const i = inputs({ services: { error: 'failed to list services when setting up env vars' } });
  assert.equal(errorOf(pod(), i), 'failed to list services when setting up env vars');
  assert.deepEqual(envOf(pod({ env: [{ name: 'A', value: 'a' }] }, {}, { annotations: { 'kubernetes.io/config.source': 'file' } }), i), {
    A: 'a',
  });
});

test('command and args expand against the final environment', () => {
  const p = pod({
    command: ['sh', '-c', 'echo $(GREETING) $$(HOME) $(NOPE)'],
    args: ['$(NAME)', '$(KUBERNETES_SERVICE_HOST)'],
    env: [
      { name: 'GREETING', value: 'hello' },
      { name: 'NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    ],
  });
  const r = containerEnvironment(p, p.spec!.containers[0]!, inputs());
  assert.ok('env' in r);
  assert.deepEqual(r.command, ['sh', '-c', 'echo hello $(HOME) $(NOPE)']);
  assert.deepEqual(r.args, ['web', '10.96.0.1']);
  assert.deepEqual(expandCommandAndArgs({ name: 'x' }, []), { command: [], args: [] });
});

test('envReferences names what to fetch', () => {
  assert.deepEqual(
    envReferences({
      name: 'x',
      envFrom: [{ configMapRef: { name: 'a' } }, { secretRef: { name: 's' } }],
      env: [
        { name: 'A', valueFrom: { configMapKeyRef: { name: 'b', key: 'k' } } },
        { name: 'B', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } },
        { name: 'C', value: 'lit' },
        { name: 'D', valueFrom: { configMapKeyRef: { name: 'a', key: 'k' } } },
      ],
    }),
    { configMaps: ['a', 'b'], secrets: ['s'] },
  );
});

test('containerConfig takes the resolved environment, command and args', async () => {
  const { containerConfig } = await import('./pod-config.ts');
  const p = pod({
    command: ['echo', '$(A)'],
    env: [
      { name: 'A', value: 'x' },
      { name: 'B', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    ],
  });
  const r = containerEnvironment(p, p.spec!.containers[0]!, inputs({ services: [] }));
  assert.ok('env' in r);
  const cfg = containerConfig(p, p.spec!.containers[0]!, 0, { ...r });
  assert.deepEqual(cfg.envs, [
    { key: 'A', value: Buffer.from('x') },
    { key: 'B', value: Buffer.from('web') },
  ]);
  assert.deepEqual([cfg.command, cfg.args], [['echo', 'x'], []]);
});

test('fileKeyRef: the value from the file, upstream errors, optional only for a missing or empty key', () => {
  const ref = (name: string, key: string, extra: { volumeName?: string; path?: string; optional?: boolean } = {}) =>
    ({ name, valueFrom: { fileKeyRef: { volumeName: 'config', path: 'config.env', key, ...extra } } }) as unknown as EnvVar;
  const id = (key: string, volumeName = 'config', path = 'config.env') => fileKeyId({ volumeName, path, key });
  const file = '/var/lib/kubelet/pods/u-1/volumes/kubernetes.io~empty-dir/config/config.env';
  const fileKeys = new Map<string, FileKeyRead>([
    [id('CONFIG_1'), { path: file, value: 'value1' }],
    [id('MISSING'), { path: file, value: '' }],
    [id('EMPTY'), { path: file, value: '' }],
    [id('BAD', 'config', 'bad.env'), { path: file, parseError: "invalid environment variable format at line 1: missing '='" }],
    [id('X', 'config', 'loop'), { error: 'SecureJoin /v/loop: too many levels of symbolic links' }],
    [id('X', 'gone'), { noVolume: true }],
  ]);
  const i = inputs({ fileKeys, services: [] });
  const p = (...env: EnvVar[]) => pod({ env });
  assert.deepEqual(envOf(p(ref('CONFIG_1', 'CONFIG_1'), { name: 'B', value: '$(CONFIG_1)-b' }), i), { CONFIG_1: 'value1', B: 'value1-b' });
  assert.deepEqual(envOf(p(ref('M', 'MISSING', { optional: true }), ref('E', 'EMPTY', { optional: true })), i), {});
  assert.equal(errorOf(p(ref('M', 'MISSING')), i), `environment variable key "MISSING" not found in file "${file}"`);
  // Upstream cannot tell a key set to '' from a missing one.
  assert.equal(errorOf(p(ref('E', 'EMPTY')), i), `environment variable key "EMPTY" not found in file "${file}"`);
  // A file that cannot be read or parsed fails, optional or not; the reason goes to the log only.
  assert.equal(errorOf(p(ref('B', 'BAD', { path: 'bad.env', optional: true })), i), "couldn't parse env file");
  assert.equal(errorOf(p(ref('X', 'X', { path: 'loop' })), i), 'SecureJoin /v/loop: too many levels of symbolic links');
  assert.equal(
    errorOf(p(ref('X', 'X', { volumeName: 'gone', optional: true })), i),
    'cannot find the volume "gone" referenced by FileKeyRef',
  );
  // Not read at the edge (a ref the edge did not see) reads as a missing volume, as upstream's nil mounter.
  assert.equal(errorOf(p(ref('Y', 'Y', { volumeName: 'other' })), i), 'cannot find the volume "other" referenced by FileKeyRef');
  // The first failing variable's error, in declaration order.
  assert.equal(
    errorOf(p(ref('M', 'MISSING'), ref('X', 'X', { volumeName: 'gone' })), i),
    `environment variable key "MISSING" not found in file "${file}"`,
  );
  // EnvFiles off (no fileKeys): the switch finds no case and the variable is ''.
  assert.deepEqual(envOf(p(ref('M', 'MISSING')), inputs({ services: [] })), { M: '' });
});
