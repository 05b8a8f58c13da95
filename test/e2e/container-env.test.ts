// What a container finds in its environment, read from inside it (`env` in its log), in
// the manner of the upstream conformance tests for ConfigMaps, Secrets, the downward API,
// variable expansion and service links; and the CreateContainerConfigError a missing
// ConfigMap gives, until it exists.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { clients, ensureStack, eventually, kubectl, nodeName, podSpec, withNamespace, BUSYBOX } from './stack.ts';

before(() => ensureStack());

async function readPod(ns: string, name: string): Promise<V1Pod> {
  return clients().core.readNamespacedPod({ name, namespace: ns });
}

const finished = (ns: string, name: string) =>
  eventually(`pod ${name} Succeeded`, 60_000, async () => {
    const p = await readPod(ns, name);
    if (p.status?.phase === 'Failed') throw new Error(`pod ${name} failed: ${JSON.stringify(p.status.containerStatuses?.[0]?.state)}`);
    return p.status?.phase === 'Succeeded' ? p : undefined;
  });

/** NAME=value lines of `env` (values here are one line each). */
const parseEnv = (log: string) =>
  Object.fromEntries(
    log
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );

test('env from ConfigMaps, Secrets, the downward API, resources, $(VAR) expansion and service links', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'settings' }, data: { color: 'blue', size: 'L' } } });
    await core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: 'creds' }, stringData: { password: 's3cret' } } });
    const backend = await core.createNamespacedService({
      namespace: ns,
      body: { metadata: { name: 'back-end' }, spec: { ports: [{ port: 8080, name: 'http' }], selector: { app: 'none' } } },
    });
    const kubernetesIP = kubectl('-n', 'default', 'get', 'service', 'kubernetes', '-o', 'jsonpath={.spec.clusterIP}').trim();

    const field = (fieldPath: string) => ({ valueFrom: { fieldRef: { fieldPath } } });
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('env', {
        restartPolicy: 'Never',
        containers: [
          {
            name: 'main',
            image: BUSYBOX,
            command: ['sh', '-c'],
            // $1 and $2 arrive expanded by the kubelet; the shell only prints them.
            // It stays a moment so that its IP is seen in the pod status while it runs.
            args: ['env; echo "ARG_EXPANDED=$1"; echo "ARG_ESCAPED=$2"; sleep 3', 'sh', '$(GREETING)-arg', '$$(GREETING)'],
            resources: { requests: { memory: '32Mi' }, limits: { memory: '64Mi' } },
            envFrom: [{ configMapRef: { name: 'settings' }, prefix: 'CFG_' }],
            env: [
              { name: 'CM_VALUE', valueFrom: { configMapKeyRef: { name: 'settings', key: 'color' } } },
              { name: 'SECRET_VALUE', valueFrom: { secretKeyRef: { name: 'creds', key: 'password' } } },
              { name: 'OPTIONAL_ABSENT', valueFrom: { configMapKeyRef: { name: 'no-such-map', key: 'k', optional: true } } },
              { name: 'POD_NAME', ...field('metadata.name') },
              { name: 'POD_NAMESPACE', ...field('metadata.namespace') },
              { name: 'POD_IP', ...field('status.podIP') },
              { name: 'NODE_NAME', ...field('spec.nodeName') },
              { name: 'HOST_IP', ...field('status.hostIP') },
              // The kubelet's own annotations, as upstream's PodConfig adds them to every pod.
              { name: 'CONFIG_SOURCE', ...field("metadata.annotations['kubernetes.io/config.source']") },
              { name: 'CONFIG_SEEN', ...field("metadata.annotations['kubernetes.io/config.seen']") },
              { name: 'MEMORY_LIMIT_MI', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
              { name: 'GREETING', value: 'hello' },
              { name: 'COMPOSED', value: '$(GREETING)-$(CM_VALUE)-$(CFG_size)' },
              { name: 'ESCAPED', value: '$$(GREETING)' },
              { name: 'UNKNOWN_REF', value: '$(NOT_DEFINED)' },
            ],
          },
        ],
      }),
    });
    const running = await eventually('pod env Running with an IP', 60_000, async () => {
      const p = await readPod(ns, 'env');
      return p.status?.phase === 'Running' && p.status.podIP ? p : undefined;
    });
    await finished(ns, 'env');
    const env = parseEnv(kubectl('-n', ns, 'logs', 'env'));

    assert.equal(env.CM_VALUE, 'blue');
    assert.equal(env.SECRET_VALUE, 's3cret');
    assert.deepEqual([env.CFG_color, env.CFG_size], ['blue', 'L'], 'envFrom with a prefix');
    assert.ok(!('OPTIONAL_ABSENT' in env), 'an optional reference to a missing ConfigMap sets nothing');
    assert.deepEqual([env.POD_NAME, env.POD_NAMESPACE, env.NODE_NAME], ['env', ns, nodeName()]);
    assert.equal(env.POD_IP, running.status!.podIP);
    assert.equal(env.HOST_IP, running.status!.hostIP);
    assert.equal(env.CONFIG_SOURCE, 'api');
    assert.ok(Math.abs(Date.parse(env.CONFIG_SEEN ?? '') - Date.now()) < 120_000, `config.seen ${env.CONFIG_SEEN} is about now`);
    assert.equal(env.MEMORY_LIMIT_MI, '64');
    assert.equal(env.COMPOSED, 'hello-blue-L');
    assert.equal(env.ESCAPED, '$(GREETING)');
    assert.equal(env.UNKNOWN_REF, '$(NOT_DEFINED)');
    assert.equal(env.ARG_EXPANDED, 'hello-arg');
    assert.equal(env.ARG_ESCAPED, '$(GREETING)');
    assert.equal(env.KUBERNETES_SERVICE_HOST, kubernetesIP);
    assert.equal(env.KUBERNETES_SERVICE_PORT, '443');
    const ip = backend.spec!.clusterIP!;
    assert.deepEqual(
      [
        env.BACK_END_SERVICE_HOST,
        env.BACK_END_SERVICE_PORT,
        env.BACK_END_SERVICE_PORT_HTTP,
        env.BACK_END_PORT,
        env.BACK_END_PORT_8080_TCP_ADDR,
      ],
      [ip, '8080', '8080', `tcp://${ip}:8080`, ip],
      'service link variables of the namespace',
    );
  }));

test('enableServiceLinks false: only the KUBERNETES_ service variables', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedService({
      namespace: ns,
      body: { metadata: { name: 'hidden' }, spec: { ports: [{ port: 80 }], selector: { app: 'none' } } },
    });
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('nolinks', {
        restartPolicy: 'Never',
        enableServiceLinks: false,
        containers: [{ name: 'main', image: BUSYBOX, command: ['env'] }],
      }),
    });
    await finished(ns, 'nolinks');
    const env = parseEnv(kubectl('-n', ns, 'logs', 'nolinks'));
    assert.ok(env.KUBERNETES_SERVICE_HOST, 'KUBERNETES_SERVICE_HOST always');
    assert.ok(!Object.keys(env).some((k) => k.startsWith('HIDDEN_')), 'no links to the namespace services');
  }));

test('envFrom keys that are not C identifiers (data-1, with prefixes 1- and #@!) reach the container, as upstream passes them', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'odd' }, data: { 'data-1': 'value-1', 'data.2': 'value-2' } },
    });
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('odd', {
        restartPolicy: 'Never',
        // `env` itself, not through sh: Debian's busybox sh would drop such names before env runs.
        containers: [
          {
            name: 'main',
            image: BUSYBOX,
            command: ['env'],
            envFrom: [
              { configMapRef: { name: 'odd' } },
              { configMapRef: { name: 'odd' }, prefix: '1-' },
              { configMapRef: { name: 'odd' }, prefix: '#@!' },
            ],
          },
        ],
      }),
    });
    await finished(ns, 'odd');
    const env = parseEnv(kubectl('-n', ns, 'logs', 'odd'));
    assert.deepEqual([env['data-1'], env['data.2'], env['1-data-1'], env['#@!data-1']], ['value-1', 'value-2', 'value-1', 'value-1']);
  }));

test('a missing required ConfigMap: CreateContainerConfigError with upstream message, then the pod starts once it exists', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('waits', {
        restartPolicy: 'Never',
        containers: [
          {
            name: 'main',
            image: BUSYBOX,
            command: ['sh', '-c', 'echo "LATE=$LATE"'],
            env: [{ name: 'LATE', valueFrom: { configMapKeyRef: { name: 'later', key: 'value' } } }],
          },
        ],
      }),
    });
    const waiting = await eventually('CreateContainerConfigError', 40_000, async () => {
      const w = (await readPod(ns, 'waits')).status?.containerStatuses?.[0]?.state?.waiting;
      return w?.reason === 'CreateContainerConfigError' && w.message === 'configmap "later" not found' ? w : undefined;
    });
    assert.equal(waiting.message, 'configmap "later" not found');
    const pod = await readPod(ns, 'waits');
    assert.equal(pod.status!.phase, 'Pending');
    await eventually('Failed event with the error', 20_000, async () => {
      const events = await core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=waits' });
      return events.items.some(
        (e) =>
          e.type === 'Warning' &&
          e.reason === 'Failed' &&
          e.message === 'Error: configmap "later" not found' &&
          e.involvedObject.fieldPath === 'spec.containers{main}',
      );
    });

    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'later' }, data: { value: 'arrived' } } });
    await finished(ns, 'waits');
    assert.equal(kubectl('-n', ns, 'logs', 'waits'), 'LATE=arrived\n');
  }));
