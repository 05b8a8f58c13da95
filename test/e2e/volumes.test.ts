// Volumes as a container sees them, in the manner of the upstream sig-storage conformance
// tests (EmptyDir, ConfigMap, Secrets, Downward API volume, Projected, HostPath,
// ServiceAccounts): contents, modes and the ..data layout read with `kubectl exec`,
// the managed /etc/hosts, and a volume that cannot be set up.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuthenticationV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import {
  ADMIN_KUBECONFIG,
  BUSYBOX,
  clients,
  ensureStack,
  eventually,
  kubectl,
  nodeName,
  podSpec,
  restartKubelet,
  withNamespace,
} from './stack.ts';

before(() => ensureStack());

const ROOT_DIR = process.env.KUBELET_ROOT_DIR ?? '/var/lib/kubelet';
const sh = (name: string, script: string, over: object = {}) => ({ name, image: BUSYBOX, command: ['sh', '-c', script], ...over });
const readPod = (ns: string, name: string) => clients().core.readNamespacedPod({ name, namespace: ns });
const exec = (ns: string, pod: string, container: string, script: string) =>
  kubectl('-n', ns, 'exec', pod, '-c', container, '--', 'sh', '-c', script);

async function running(ns: string, name: string, timeoutMs = 60_000): Promise<V1Pod> {
  return eventually(`pod ${name} Running`, timeoutMs, async () => {
    const p = await readPod(ns, name);
    return p.status?.phase === 'Running' ? p : undefined;
  });
}

async function events(ns: string, name: string): Promise<string[]> {
  const list = await clients().core.listNamespacedEvent({ namespace: ns, fieldSelector: `involvedObject.name=${name}` });
  return list.items.map((e) => `${e.reason}: ${e.message}`);
}

test('an emptyDir is shared by the containers of a pod, on disk (0777) and in memory (tmpfs with its sizeLimit)', () =>
  withNamespace(async (ns) => {
    await clients().core.createNamespacedPod({
      namespace: ns,
      body: podSpec('shared', {
        volumes: [
          { name: 'scratch', emptyDir: {} },
          { name: 'mem', emptyDir: { medium: 'Memory', sizeLimit: '8Mi' } },
        ],
        containers: [
          sh('writer', 'echo from-writer > /scratch/msg; echo in-memory > /mem/m; exec sleep 3600', {
            volumeMounts: [
              { name: 'scratch', mountPath: '/scratch' },
              { name: 'mem', mountPath: '/mem' },
            ],
          }),
          sh('reader', 'exec sleep 3600', {
            volumeMounts: [
              { name: 'scratch', mountPath: '/data' },
              { name: 'mem', mountPath: '/mem' },
            ],
          }),
        ],
      }),
    });
    await running(ns, 'shared');
    await eventually(
      "the writer's file seen by the reader",
      10_000,
      async () => exec(ns, 'shared', 'reader', 'cat /data/msg').trim() === 'from-writer',
    );
    assert.equal(exec(ns, 'shared', 'reader', 'stat -c %a /data').trim(), '777');
    assert.equal(exec(ns, 'shared', 'reader', 'cat /mem/m').trim(), 'in-memory');
    assert.match(exec(ns, 'shared', 'reader', 'grep " /mem " /proc/mounts'), /^tmpfs \/mem tmpfs \S*size=8192k/);
  }));

test('configMap and secret volumes: content, items, modes, read-only, the ..data symlink, and updates', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'cfg' }, data: { a: 'one', b: 'two' } } });
    await core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: 'sec' }, stringData: { pw: 's3cret' } } });
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('api-data', {
        volumes: [
          { name: 'cfg', configMap: { name: 'cfg', defaultMode: 0o640 } },
          { name: 'items', configMap: { name: 'cfg', items: [{ key: 'b', path: 'sub/b', mode: 0o600 }] } },
          { name: 'sec', secret: { secretName: 'sec', defaultMode: 0o400 } },
          { name: 'maybe', secret: { secretName: 'not-there', optional: true } },
        ],
        containers: [
          sh('main', 'exec sleep 3600', {
            volumeMounts: [
              { name: 'cfg', mountPath: '/cfg' },
              { name: 'items', mountPath: '/items' },
              { name: 'sec', mountPath: '/sec' },
              { name: 'maybe', mountPath: '/maybe' },
            ],
          }),
        ],
      }),
    });
    await running(ns, 'api-data');
    const x = (script: string) => exec(ns, 'api-data', 'main', script).trim();
    assert.equal(x('cat /cfg/a; echo; cat /cfg/b'), 'one\ntwo');
    assert.equal(x('stat -L -c %a /cfg/a'), '640');
    assert.equal(x('readlink /cfg/a'), '..data/a');
    assert.match(x('readlink /cfg/..data'), /^\.\.\d{4}_\d{2}_\d{2}_\d{2}_\d{2}_\d{2}\.\S+$/);
    assert.equal(x('ls /items; cat /items/sub/b'), 'sub\ntwo');
    assert.equal(x('stat -L -c %a /items/sub/b'), '600');
    assert.equal(x('cat /sec/pw'), 's3cret');
    assert.equal(x('stat -L -c %a /sec/pw'), '400');
    assert.match(x('grep " /sec " /proc/mounts'), /^tmpfs \/sec tmpfs ro/, 'secrets live in memory, mounted read-only');
    assert.equal(x('ls /maybe | wc -l'), '0', 'an optional missing secret gives an empty volume');
    assert.match(x('touch /cfg/new 2>&1 || echo refused'), /refused/);

    // Upstream propagates changes within about a minute (its sync period plus the cache TTL).
    await core.replaceNamespacedConfigMap({
      namespace: ns,
      name: 'cfg',
      body: { metadata: { name: 'cfg' }, data: { a: 'uno', b: 'two' } },
    });
    await eventually('the ConfigMap update in the volume', 150_000, async () => x('cat /cfg/a') === 'uno', 2000);
  }));

test('the service account token (a JWT bound to the pod), ca.crt and namespace at the well-known path', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedPod({ namespace: ns, body: podSpec('sa') });
    const pod = await running(ns, 'sa');
    assert.ok(
      pod.spec!.volumes!.some((v) => v.name.startsWith('kube-api-access-') && v.projected),
      'the ServiceAccount admission plugin added kube-api-access',
    );
    const dir = '/var/run/secrets/kubernetes.io/serviceaccount';
    const x = (script: string) => exec(ns, 'sa', 'main', script);
    const token = x(`cat ${dir}/token`).trim();
    const parts = token.split('.');
    assert.equal(parts.length, 3, 'a JWT');
    const claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8'));
    assert.equal(claims.sub, `system:serviceaccount:${ns}:default`);
    assert.equal(claims['kubernetes.io'].namespace, ns);
    assert.deepEqual([claims['kubernetes.io'].pod.name, claims['kubernetes.io'].pod.uid], ['sa', pod.metadata!.uid]);
    assert.ok(claims.exp > Date.now() / 1000 + 600, 'not expired');
    const ca = await core.readNamespacedConfigMap({ namespace: ns, name: 'kube-root-ca.crt' });
    assert.equal(x(`cat ${dir}/ca.crt`), ca.data!['ca.crt']);
    assert.equal(x(`cat ${dir}/namespace`), ns);
    assert.equal(x(`stat -L -c %a ${dir}/token`).trim(), '644');
    // The apiserver accepts it as the pod's service account.
    const kc = new KubeConfig();
    kc.loadFromFile(ADMIN_KUBECONFIG);
    const review = await kc.makeApiClient(AuthenticationV1Api).createTokenReview({ body: { spec: { token } } });
    assert.equal(review.status?.authenticated, true, review.status?.error);
    assert.equal(review.status?.user?.username, `system:serviceaccount:${ns}:default`);
  }));

test('a downwardAPI volume shows labels and the pod name; a hostPath DirectoryOrCreate is made on the node', () =>
  withNamespace(async (ns) => {
    const hostDir = `/tmp/kts-e2e-${ns}/made`;
    try {
      await clients().core.createNamespacedPod({
        namespace: ns,
        body: {
          ...podSpec('downward', {
            volumes: [
              {
                name: 'info',
                downwardAPI: {
                  items: [
                    { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
                    { path: 'name', fieldRef: { fieldPath: 'metadata.name' } },
                    { path: 'mem', resourceFieldRef: { containerName: 'main', resource: 'limits.memory', divisor: '1Mi' } },
                  ],
                },
              },
              { name: 'host', hostPath: { path: hostDir, type: 'DirectoryOrCreate' } },
            ],
            containers: [
              sh('main', 'echo from-pod > /host/f; exec sleep 3600', {
                resources: { limits: { memory: '32Mi' } },
                volumeMounts: [
                  { name: 'info', mountPath: '/etc/podinfo' },
                  { name: 'host', mountPath: '/host' },
                ],
              }),
            ],
          }),
          metadata: { name: 'downward', labels: { app: 'web', tier: 'front' } },
        },
      });
      await running(ns, 'downward');
      const x = (script: string) => exec(ns, 'downward', 'main', script);
      assert.equal(x('cat /etc/podinfo/labels'), 'app="web"\ntier="front"');
      assert.equal(x('cat /etc/podinfo/name'), 'downward');
      assert.equal(x('cat /etc/podinfo/mem'), '32');
      await eventually(
        "the pod's file on the node",
        10_000,
        async () => existsSync(`${hostDir}/f`) && readFileSync(`${hostDir}/f`, 'utf8') === 'from-pod\n',
      );
    } finally {
      rmSync(`/tmp/kts-e2e-${ns}`, { recursive: true, force: true });
    }
  }));

test('/etc/hosts is managed: localhost, the pod IP with its hostname, hostAliases; the termination message file is mounted', () =>
  withNamespace(async (ns) => {
    await clients().core.createNamespacedPod({
      namespace: ns,
      body: podSpec('hosts', { hostAliases: [{ ip: '192.0.2.77', hostnames: ['alias-one', 'alias-two'] }] }),
    });
    const pod = await running(ns, 'hosts');
    const hosts = exec(ns, 'hosts', 'main', 'cat /etc/hosts');
    assert.ok(hosts.startsWith('# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n'), hosts);
    assert.ok(hosts.includes(`\n${pod.status!.podIP}\thosts\n`), hosts);
    assert.ok(hosts.endsWith('\n# Entries added by HostAliases.\n192.0.2.77\talias-one\talias-two\n'), hosts);
    // The termination message file is the kubelet's, under ROOT/pods/UID/containers/NAME/.
    exec(ns, 'hosts', 'main', 'echo last-words > /dev/termination-log');
    const dir = `${ROOT_DIR}/pods/${pod.metadata!.uid}/containers/main`;
    const files = readdirSync(dir);
    assert.equal(files.length, 1);
    assert.equal(readFileSync(`${dir}/${files[0]}`, 'utf8'), 'last-words\n');
  }));

test("mount propagation and recursive read-only mounts: a Bidirectional mount reaches the next container, read-only below where asked (upstream's RRO node e2e pod)", () =>
  withNamespace(async (ns) => {
    const privileged = { securityContext: { privileged: true } };
    const shared = [{ name: 'mnt', mountPath: '/mnt', mountPropagation: 'Bidirectional' }];
    await clients().core.createNamespacedPod({
      namespace: ns,
      body: podSpec('rro', {
        restartPolicy: 'Never',
        volumes: [{ name: 'mnt', emptyDir: {} }],
        initContainers: [
          sh('mount', 'mkdir -p /mnt/tmpfs && mount -t tmpfs none /mnt/tmpfs', { ...privileged, volumeMounts: shared }),
          sh(
            'test',
            'for f in rro rro-if-possible; do touch /mnt-$f/tmpfs/foo 2>&1 | grep Read-only; done; for f in ro rw; do touch /mnt-$f/tmpfs/foo; done',
            {
              volumeMounts: [
                { name: 'mnt', mountPath: '/mnt-rro', readOnly: true, recursiveReadOnly: 'Enabled' },
                { name: 'mnt', mountPath: '/mnt-rro-if-possible', readOnly: true, recursiveReadOnly: 'IfPossible' },
                { name: 'mnt', mountPath: '/mnt-ro', readOnly: true },
                { name: 'mnt', mountPath: '/mnt-rw' },
              ],
            },
          ),
          sh('unmount', 'umount /mnt/tmpfs', { ...privileged, volumeMounts: shared }),
        ],
        containers: [sh('done', 'echo OK')],
      }),
    });
    const pod = await eventually('pod rro to finish', 90_000, async () => {
      const p = await readPod(ns, 'rro');
      if (p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') return p;
      throw new Error(`${p.status?.phase}; events: ${(await events(ns, 'rro')).join('; ')}`);
    });
    assert.equal(pod.status!.phase, 'Succeeded', (await events(ns, 'rro')).join('; '));
    const mounts = pod.status!.initContainerStatuses![1]!.volumeMounts!.filter((m) => m.name === 'mnt');
    assert.deepEqual(
      mounts.map((m) => `${m.mountPath} ${m.recursiveReadOnly ?? '-'}`),
      ['/mnt-rro Enabled', '/mnt-rro-if-possible Enabled', '/mnt-ro Disabled', '/mnt-rw -'],
    );
  }));

test('subPath (made when missing), subPathExpr, readOnly mounts and fsGroup ownership', () =>
  withNamespace(async (ns) => {
    await clients().core.createNamespacedPod({
      namespace: ns,
      body: podSpec('paths', {
        securityContext: { fsGroup: 1234 },
        volumes: [{ name: 'scratch', emptyDir: {} }],
        containers: [
          sh('main', 'echo via-subpath > /sub/f; echo via-expr > /expr/f; exec sleep 3600', {
            env: [{ name: 'DIR', value: 'from-env' }],
            volumeMounts: [
              { name: 'scratch', mountPath: '/all' },
              { name: 'scratch', mountPath: '/sub', subPath: 'a/b' },
              { name: 'scratch', mountPath: '/expr', subPathExpr: '$(DIR)' },
              { name: 'scratch', mountPath: '/ro', readOnly: true },
            ],
          }),
        ],
      }),
    });
    await running(ns, 'paths');
    const x = (script: string) => exec(ns, 'paths', 'main', script).trim();
    await eventually(
      'files written through the subPaths',
      10_000,
      async () => x('cat /all/a/b/f /all/from-env/f 2>/dev/null') === 'via-subpath\nvia-expr',
    );
    assert.match(x('touch /ro/x 2>&1 || echo refused'), /refused/);
    const token = '/var/run/secrets/kubernetes.io/serviceaccount/token';
    assert.equal(x(`stat -L -c '%g %a' ${token}`), '1234 640');
    assert.equal(x('stat -c %g /all'), '1234');
    // The subPaths are bind mounts of the kubelet's (upstream's volume-subpaths), gone with the pod.
    const { core } = clients();
    const uid = (await readPod(ns, 'paths')).metadata!.uid!;
    const binds = () =>
      readFileSync('/proc/self/mountinfo', 'utf8')
        .split('\n')
        .filter((l) => l.includes(`/pods/${uid}/volume-subpaths/`));
    assert.equal(binds().length, 2, 'the subPath and the subPathExpr');
    await core.deleteNamespacedPod({ name: 'paths', namespace: ns, gracePeriodSeconds: 0 });
    await eventually('the subPath binds unmounted', 30_000, async () => binds().length === 0);

    // A subPath the pod made a symlink out of the volume (its init container): refused, never the host's files.
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('escape', {
        volumes: [{ name: 'scratch', emptyDir: {} }],
        initContainers: [sh('link', 'ln -s / /all/escape', { volumeMounts: [{ name: 'scratch', mountPath: '/all' }] })],
        containers: [
          sh('main', 'ls /host; exec sleep 3600', { volumeMounts: [{ name: 'scratch', mountPath: '/host', subPath: 'escape' }] }),
        ],
      }),
    });
    const waiting = await eventually('the container refused', 60_000, async () => {
      const w = (await readPod(ns, 'escape')).status?.containerStatuses?.[0]?.state?.waiting;
      return w?.reason === 'CreateContainerConfigError' ? w : undefined;
    });
    assert.equal(waiting.message, 'failed to prepare subPath for volumeMount "scratch" of container "main"');
  }));

test('a missing required ConfigMap: FailedMount, the pod stays ContainerCreating, and starts once the ConfigMap exists', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('waits', {
        volumes: [{ name: 'cfg', configMap: { name: 'late' } }],
        containers: [sh('main', 'cat /cfg/k; echo; exec sleep 3600', { volumeMounts: [{ name: 'cfg', mountPath: '/cfg' }] })],
      }),
    });
    await eventually('a FailedMount event', 30_000, async () =>
      (await events(ns, 'waits')).includes('FailedMount: MountVolume.SetUp failed for volume "cfg" : configmap "late" not found'),
    );
    const pending = await readPod(ns, 'waits');
    assert.equal(pending.status!.phase, 'Pending');
    assert.equal(pending.status!.containerStatuses?.[0]?.state?.waiting?.reason ?? 'ContainerCreating', 'ContainerCreating');
    assert.ok(!pending.status!.podIP, 'no sandbox before the volumes are set up');
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'late' }, data: { k: 'arrived' } } });
    await running(ns, 'waits', 60_000);
    await eventually('the container read the ConfigMap', 10_000, async () => kubectl('-n', ns, 'logs', 'waits').includes('arrived'));
  }));

test('a pod that ran to completion has its volumes unmounted at once, before it is deleted', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('done', {
        restartPolicy: 'Never',
        volumes: [{ name: 'scratch', emptyDir: { medium: 'Memory' } }],
        containers: [sh('main', 'echo hi > /scratch/f; sleep 3', { volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }] })],
      }),
    });
    const pod = await running(ns, 'done');
    const under = `${ROOT_DIR}/pods/${pod.metadata!.uid}/`;
    assert.ok(readFileSync('/proc/self/mountinfo', 'utf8').includes(under), 'its tmpfs volumes mounted while it runs');
    await eventually('pod Succeeded', 30_000, async () => (await readPod(ns, 'done')).status?.phase === 'Succeeded');
    await eventually('no mount of the pod left', 15_000, async () => !readFileSync('/proc/self/mountinfo', 'utf8').includes(under));
    assert.ok(await readPod(ns, 'done'), 'the pod object is still there');
  }));

// configMapAndSecretChangeDetectionStrategy: Cache reads a volume's ConfigMap and Secret again
// once the Node's node.alpha.kubernetes.io/ttl (the TTL controller's, 0 on a small cluster) or a
// minute has passed, instead of watching them; a change reaches the volume all the same, at the
// pod's next sync (syncFrequency: 10 s here, not a minute and more of the default's).
test('configMapAndSecretChangeDetectionStrategy Cache: in /configz, and updates reach configMap and secret volumes', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    restartKubelet('configMapAndSecretChangeDetectionStrategy: Cache\nsyncFrequency: 10s\n');
    try {
      const configz = JSON.parse(kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/configz`)) as {
        kubeletconfig: Record<string, unknown>;
      };
      assert.equal(configz.kubeletconfig.configMapAndSecretChangeDetectionStrategy, 'Cache');
      await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'cfg' }, data: { a: 'one' } } });
      await core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: 'sec' }, stringData: { pw: 'first' } } });
      await core.createNamespacedPod({
        namespace: ns,
        body: podSpec('cached', {
          volumes: [
            { name: 'cfg', configMap: { name: 'cfg' } },
            { name: 'sec', secret: { secretName: 'sec' } },
          ],
          containers: [
            sh('main', 'exec sleep 3600', {
              volumeMounts: [
                { name: 'cfg', mountPath: '/cfg' },
                { name: 'sec', mountPath: '/sec' },
              ],
            }),
          ],
        }),
      });
      await running(ns, 'cached');
      const x = (script: string) => exec(ns, 'cached', 'main', script).trim();
      assert.equal(x('cat /cfg/a; echo; cat /sec/pw'), 'one\nfirst');
      await core.replaceNamespacedConfigMap({ namespace: ns, name: 'cfg', body: { metadata: { name: 'cfg' }, data: { a: 'two' } } });
      await core.replaceNamespacedSecret({ namespace: ns, name: 'sec', body: { metadata: { name: 'sec' }, stringData: { pw: 'second' } } });
      await eventually('both updates in the volumes', 150_000, async () => x('cat /cfg/a; echo; cat /sec/pw') === 'two\nsecond', 2000);
    } finally {
      restartKubelet();
    }
  }));

// FlexVolume (volumePluginDir): upstream's own e2e driver "dummy" (a tmpfs with index.html, from
// the pinned release's test/e2e/testing-manifests/flexvolume), installed as an operator does, in
// <volumePluginDir>/<vendor>~<driver>/<driver>; the kubelet calls init, mount and unmount.
test("flexVolume: upstream's dummy driver in volumePluginDir mounts for the pod and unmounts when it goes; a failing driver is FailedMount", async (t) => {
  const gomod = execFileSync('go', ['env', 'GOMODCACHE'], {
    encoding: 'utf8',
    env: { ...process.env, PATH: `/usr/local/go/bin:${process.env.PATH}` },
  }).trim();
  const dummy = `${gomod}/k8s.io/kubernetes@v1.36.3/test/e2e/testing-manifests/flexvolume/dummy`;
  assert.ok(existsSync(dummy), `upstream's dummy driver is not in the Go module cache (${dummy}): make up builds the release from it`);
  const dir = mkdtempSync(join(tmpdir(), 'kts-flex-'));
  const log = join(dir, 'dummy.log');
  const install = (name: string, text: string) => {
    mkdirSync(join(dir, `k8s~${name}`));
    writeFileSync(join(dir, `k8s~${name}`, name), text, { mode: 0o755 });
  };
  // Its log where this test reads it: the script keeps a FLEX_DUMMY_LOG already set.
  install('dummy', readFileSync(dummy, 'utf8').replace(/^#!\/bin\/sh\n/, `#!/bin/sh\nFLEX_DUMMY_LOG=${log}\n`));
  install(
    'broken',
    '#!/bin/sh\n[ "$1" = init ] && echo \'{"status":"Success","capabilities":{"attach":false}}\' && exit 0\necho \'{"status":"Failure","message":"the backend is away"}\'\nexit 1\n',
  );
  t.after(() => {
    restartKubelet();
    rmSync(dir, { recursive: true, force: true });
  });
  restartKubelet(`volumePluginDir: ${dir}\n`);
  await withNamespace(async (ns) => {
    const { core } = clients();
    const flexPod = (name: string, driver: string) =>
      core.createNamespacedPod({
        namespace: ns,
        body: podSpec(name, {
          volumes: [{ name: 'flex', flexVolume: { driver, options: { color: 'blue' } } }],
          containers: [sh('main', 'exec sleep 3600', { volumeMounts: [{ name: 'flex', mountPath: '/mnt' }] })],
        }),
      });
    await flexPod('flexed', 'k8s/dummy');
    const pod = await running(ns, 'flexed');
    assert.equal(exec(ns, 'flexed', 'main', 'cat /mnt/index.html').trim(), 'Hello from flexvolume!');
    const volDir = `${ROOT_DIR}/pods/${pod.metadata!.uid}/volumes/k8s~dummy/flex`;
    assert.match(
      readFileSync('/proc/self/mountinfo', 'utf8'),
      new RegExp(` ${volDir} .* - tmpfs `),
      'the driver mounted a tmpfs at the pod volume',
    );
    const mounted = readFileSync(log, 'utf8');
    assert.match(mounted, new RegExp(`domount ${volDir} `));
    for (const want of [
      `"kubernetes.io/pod.name":"flexed"`,
      `"kubernetes.io/pod.namespace":"${ns}"`,
      '"color":"blue"',
      '"kubernetes.io/readwrite":"rw"',
    ])
      assert.ok(mounted.includes(want), `the options carry ${want}: ${mounted}`);

    await flexPod('broken', 'k8s/broken');
    await eventually('FailedMount with the driver message', 60_000, async () =>
      (await events(ns, 'broken')).some((e) => e.startsWith('FailedMount: ') && e.includes('status: Failure, reason: the backend is away')),
    );

    await core.deleteNamespacedPod({ name: 'flexed', namespace: ns, gracePeriodSeconds: 1 });
    await eventually(
      'the driver unmounted the volume and its directory went',
      60_000,
      async () => readFileSync(log, 'utf8').includes(`unmount ${volDir}`) && !existsSync(volDir),
    );
  });
});
