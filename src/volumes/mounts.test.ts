import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { containerMounts, expandSubPath, hostNetworkHostsFile, managedHostsFile, type MountContext } from './mounts.ts';
import { SubPathError } from './subpath.ts';

const pod: Pod = { metadata: { name: 'web', namespace: 'ns', uid: 'u' }, spec: { containers: [] } };
const ctx = (over: Partial<MountContext> = {}): MountContext => ({
  volumes: new Map([
    ['data', { path: '/v/data', readOnly: false }],
    ['cfg', { path: '/v/cfg', readOnly: true }],
  ]),
  etcHosts: '/pods/u/etc-hosts',
  terminationLog: '/pods/u/containers/c/0a1b2c3d',
  prepareSubPath: (v, s) => `${v}/${s}`,
  ...over,
});
const short = (c: Container, m = ctx()) => containerMounts(pod, c, m).map((x) => [x.containerPath, x.hostPath, x.readonly, x.propagation]);

test('volumeMounts, then /etc/hosts, then the termination message file, as upstream', () => {
  const c: Container = {
    name: 'c',
    volumeMounts: [
      { name: 'data', mountPath: '/data' },
      { name: 'cfg', mountPath: '/etc/cfg' },
      { name: 'data', mountPath: '/ro', readOnly: true, subPath: 'x/y', mountPropagation: 'HostToContainer' },
    ],
  };
  assert.deepEqual(short(c), [
    ['/data', '/v/data', false, 'PROPAGATION_PRIVATE'],
    ['/etc/cfg', '/v/cfg', true, 'PROPAGATION_PRIVATE'],
    ['/ro', '/v/data/x/y', true, 'PROPAGATION_HOST_TO_CONTAINER'],
    ['/etc/hosts', '/pods/u/etc-hosts', false, 'PROPAGATION_PRIVATE'],
    ['/dev/termination-log', '/pods/u/containers/c/0a1b2c3d', false, 'PROPAGATION_PRIVATE'],
  ]);
});

test('no /etc/hosts without a pod IP or when the container mounts its own; custom termination path', () => {
  const own: Container = {
    name: 'c',
    terminationMessagePath: '/tmp/msg',
    volumeMounts: [{ name: 'data', mountPath: '/etc/hosts', subPath: 'h' }],
  };
  assert.deepEqual(
    short(own).map((m) => m[0]),
    ['/etc/hosts', '/tmp/msg'],
  );
  assert.deepEqual(
    short({ name: 'c' }, ctx({ etcHosts: undefined })).map((m) => m[0]),
    ['/dev/termination-log'],
  );
});

test('mount errors with upstream messages', () => {
  const cases: [Container, string][] = [
    [{ name: 'c', volumeMounts: [{ name: 'nope', mountPath: '/x' }] }, 'cannot find volume "nope" to mount into container "c"'],
    [
      { name: 'c', volumeMounts: [{ name: 'data', mountPath: '/x', subPath: '/abs' }] },
      'error SubPath `/abs` must not be an absolute path',
    ],
    [
      { name: 'c', volumeMounts: [{ name: 'data', mountPath: '/x', subPath: 'a/../../b' }] },
      "unable to provision SubPath `a/../../b`: must not contain '..'",
    ],
    [
      { name: 'c', volumeMounts: [{ name: 'data', mountPath: '/x', mountPropagation: 'Bidirectional' }] },
      'Bidirectional mount propagation is available only to privileged containers',
    ],
  ];
  for (const [c, message] of cases) assert.throws(() => containerMounts(pod, c, ctx()), { message });
  const priv: Container = {
    name: 'c',
    securityContext: { privileged: true },
    volumeMounts: [{ name: 'data', mountPath: '/x', mountPropagation: 'Bidirectional' }],
  };
  assert.equal(containerMounts(pod, priv, ctx())[0]!.propagation, 'PROPAGATION_BIDIRECTIONAL');
});

test('the managed hosts file, byte for byte as upstream', () => {
  assert.equal(
    managedHostsFile(['10.88.0.5'], 'web', ''),
    `# Kubernetes-managed hosts file.
127.0.0.1\tlocalhost
::1\tlocalhost ip6-localhost ip6-loopback
fe00::0\tip6-localnet
fe00::0\tip6-mcastprefix
fe00::1\tip6-allnodes
fe00::2\tip6-allrouters
10.88.0.5\tweb
`,
  );
  const withAliases = managedHostsFile(['10.88.0.5'], 'h', 's.ns.svc.cluster.local', [{ ip: '1.2.3.4', hostnames: ['foo', 'bar'] }]);
  assert.ok(
    withAliases.endsWith('10.88.0.5\th.s.ns.svc.cluster.local\th\n\n# Entries added by HostAliases.\n1.2.3.4\tfoo\tbar\n'),
    withAliases,
  );
  assert.equal(hostNetworkHostsFile('127.0.0.1 localhost\n'), '# Kubernetes-managed hosts file (host network).\n127.0.0.1 localhost\n');
});

test('subPathExpr is expanded with the container environment, as upstream', () => {
  const env = [
    { name: 'POD', value: 'web-0' },
    { name: 'EMPTY', value: '' },
  ];
  assert.equal(expandSubPath('logs/$(POD)', env), 'logs/web-0');
  assert.equal(expandSubPath('a$$b', env), 'a$b');
  assert.throws(() => expandSubPath('$(NOPE)/$(EMPTY)', env), { message: 'missing value for EMPTY, NOPE' });
  const c: Container = { name: 'c', volumeMounts: [{ name: 'data', mountPath: '/x', subPathExpr: '$(POD)' }] };
  assert.equal(containerMounts(pod, c, ctx({ env }))[0]!.hostPath, '/v/data/web-0');
});

test('image volumes: the runtime mounts the image read-only, its subPath inside it, no host path and nothing prepared (upstream makeMounts)', () => {
  const tools = { image: 'sha256:t00l5', userSpecifiedImage: 'reg.example/tools:1' };
  const prepared: string[] = [];
  const m = ctx({
    etcHosts: undefined,
    terminationLog: undefined,
    volumes: new Map([
      ['tools', { path: '', readOnly: true, image: true }],
      ['data', { path: '/v/data', readOnly: false }],
    ]),
    imageVolumes: new Map([['tools', tools]]),
    env: [{ name: 'ARCH', value: 'amd64' }],
    prepareSubPath: (v, s) => {
      prepared.push(s);
      return `${v}/${s}`;
    },
  });
  const c: Container = {
    name: 'c',
    volumeMounts: [
      { name: 'tools', mountPath: '/tools' },
      { name: 'tools', mountPath: '/bin-only', subPath: 'bin' },
      { name: 'tools', mountPath: '/per-arch', subPathExpr: 'lib/$(ARCH)', mountPropagation: 'HostToContainer' },
      { name: 'data', mountPath: '/data', subPath: 'd' },
    ],
  };
  assert.deepEqual(containerMounts(pod, c, m), [
    { containerPath: '/tools', hostPath: '', image: tools, imageSubPath: '', readonly: true, propagation: 'PROPAGATION_PRIVATE' },
    { containerPath: '/bin-only', hostPath: '', image: tools, imageSubPath: 'bin', readonly: true, propagation: 'PROPAGATION_PRIVATE' },
    {
      containerPath: '/per-arch',
      hostPath: '',
      image: tools,
      imageSubPath: 'lib/amd64',
      readonly: true,
      propagation: 'PROPAGATION_HOST_TO_CONTAINER',
    },
    { containerPath: '/data', hostPath: '/v/data/d', readonly: false, propagation: 'PROPAGATION_PRIVATE' },
  ]);
  assert.deepEqual(prepared, ['d'], 'only the host volume has a subPath made');
  // Its subPath is checked as any other's; a volume whose image is not at hand cannot be mounted.
  assert.throws(() => containerMounts(pod, { name: 'c', volumeMounts: [{ name: 'tools', mountPath: '/t', subPath: '../x' }] }, m), {
    message: "unable to provision SubPath `../x`: must not contain '..'",
  });
  assert.throws(() => containerMounts(pod, c, { ...m, imageVolumes: undefined }), {
    message: 'cannot find volume "tools" to mount into container "c"',
  });
});

test("a subPath that cannot be used: upstream's makeMounts words, naming the mount and the container", () => {
  const c: Container = { name: 'c', volumeMounts: [{ name: 'data', mountPath: '/data', subPath: 'd' }] };
  const failing = (e: Error) =>
    ctx({
      prepareSubPath: () => {
        throw e;
      },
    });
  assert.throws(() => containerMounts(pod, c, failing(new SubPathError('create', 'EEXIST'))), {
    message: 'failed to create subPath directory for volumeMount "data" of container "c"',
  });
  assert.throws(() => containerMounts(pod, c, failing(new SubPathError('prepare', 'not within'))), {
    message: 'failed to prepare subPath for volumeMount "data" of container "c"',
  });
});

test('a volume whose plugin asks for SELinux relabeling (a flexVolume driver with selinuxRelabel) is mounted with selinuxRelabel', () => {
  const m = ctx({ volumes: new Map([['flex', { path: '/v/flex', readOnly: false, selinuxRelabel: true }], ...ctx().volumes]) });
  const c: Container = {
    name: 'c',
    volumeMounts: [
      { name: 'flex', mountPath: '/flex' },
      { name: 'data', mountPath: '/data' },
    ],
  };
  const mounts = containerMounts(pod, c, { ...m, etcHosts: undefined, terminationLog: undefined });
  assert.deepEqual(
    mounts.map((x) => [x.containerPath, x.selinuxRelabel]),
    [
      ['/flex', true],
      ['/data', undefined],
    ],
  );
});
