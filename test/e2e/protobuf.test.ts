// Protobuf to the apiserver (contentType, upstream's default): real objects read through the
// kubelet's own client in protobuf are, field for field, what kubectl reads in JSON; the kubelet
// runs with protobuf in effect; a Lease written in protobuf reads back the same in JSON.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { apiClient } from '../../src/apiserver/client.ts';
import { loadKubeconfig } from '../../src/apiserver/kubeconfig.ts';
import { ADMIN_KUBECONFIG, BUSYBOX, ensureStack, eventually, kubectl, kubectlInput, nodeName, withNamespace } from './stack.ts';

before(() => ensureStack());

const conn = () => loadKubeconfig(ADMIN_KUBECONFIG);
const protobuf = () => apiClient(conn(), { contentType: 'application/vnd.kubernetes.protobuf' });

type Versioned = { metadata?: { resourceVersion?: string } };

/**
 * The object at path through the kubelet's client in protobuf, and kubectl's JSON of it, read at
 * the same resourceVersion (the Node and the Lease change every few seconds: read again until two
 * reads agree on it).
 */
async function bothForms(path: string, kubectlArgs: string[]): Promise<{ pb: Versioned; json: Versioned }> {
  const api = protobuf();
  return await eventually(`${path} read at one resourceVersion`, 60_000, async () => {
    const before = JSON.parse(kubectl('get', ...kubectlArgs, '-o', 'json', '--show-managed-fields')) as Versioned;
    const pb = await api.get<Versioned>(path);
    const after = JSON.parse(kubectl('get', ...kubectlArgs, '-o', 'json', '--show-managed-fields')) as Versioned;
    const rv = pb.metadata?.resourceVersion;
    if (rv === before.metadata?.resourceVersion) return { pb, json: before };
    if (rv === after.metadata?.resourceVersion) return { pb, json: after };
    return undefined;
  });
}

test('the kubelet runs with contentType protobuf (upstream default)', () => {
  const configz = JSON.parse(kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/configz`));
  assert.equal(configz.kubeletconfig.contentType, 'application/vnd.kubernetes.protobuf');
});

test('the Node and its Lease read in protobuf equal kubectl JSON', async () => {
  const node = await bothForms(`/api/v1/nodes/${nodeName()}`, ['node', nodeName()]);
  assert.deepEqual(node.pb, node.json);
  const lease = await bothForms(`/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${nodeName()}`, [
    '-n',
    'kube-node-lease',
    'lease',
    nodeName(),
  ]);
  assert.deepEqual(lease.pb, lease.json);
});

test('a Pod with probes, resources, volumes and env from a Secret, a Secret and a ConfigMap with binaryData: protobuf equals JSON', async () => {
  await withNamespace(async (ns) => {
    kubectl('-n', ns, 'create', 'secret', 'generic', 'creds', '--from-literal=password=hunter2');
    kubectlInput(
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'cfg' },
        data: { a: '1', empty: '' },
        binaryData: { blob: Buffer.from([0, 1, 2, 0xff]).toString('base64') },
      }),
      '-n',
      ns,
      'apply',
      '-f',
      '-',
    );
    kubectlInput(
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'web', labels: { app: 'web' } },
        spec: {
          nodeName: nodeName(),
          terminationGracePeriodSeconds: 5,
          volumes: [
            { name: 'scratch', emptyDir: { sizeLimit: '64Mi' } },
            { name: 'cfg', configMap: { name: 'cfg', items: [{ key: 'a', path: 'a' }] } },
            { name: 'creds', secret: { secretName: 'creds', optional: false } },
          ],
          containers: [
            {
              name: 'main',
              image: BUSYBOX,
              command: ['sh', '-c', 'touch /tmp/ready; exec sleep 3600'],
              env: [
                { name: 'PLAIN', value: 'x' },
                { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'creds', key: 'password', optional: true } } },
                { name: 'CPU', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '1m' } } },
              ],
              envFrom: [{ prefix: 'S_', secretRef: { name: 'creds' } }],
              resources: { limits: { cpu: '200m', memory: '64Mi' }, requests: { cpu: '0.1', memory: '32Mi' } },
              volumeMounts: [
                { name: 'scratch', mountPath: '/scratch' },
                { name: 'cfg', mountPath: '/cfg', readOnly: true },
                { name: 'creds', mountPath: '/creds', readOnly: true },
              ],
              readinessProbe: { exec: { command: ['cat', '/tmp/ready'] }, periodSeconds: 1 },
              livenessProbe: { tcpSocket: { port: 8080 }, initialDelaySeconds: 3600 },
              startupProbe: { exec: { command: ['true'] }, periodSeconds: 1 },
            },
          ],
        },
      }),
      '-n',
      ns,
      'apply',
      '-f',
      '-',
    );
    // Running and Ready: the status the kubelet wrote (conditions, container states, times) is compared too.
    await eventually('the pod Ready', 120_000, async () =>
      kubectl('-n', ns, 'get', 'pod', 'web', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}').includes('True'),
    );
    for (const [path, args] of [
      [`/api/v1/namespaces/${ns}/pods/web`, ['-n', ns, 'pod', 'web']],
      [`/api/v1/namespaces/${ns}/secrets/creds`, ['-n', ns, 'secret', 'creds']],
      [`/api/v1/namespaces/${ns}/configmaps/cfg`, ['-n', ns, 'configmap', 'cfg']],
    ] as const) {
      const { pb, json } = await bothForms(path, [...args]);
      assert.deepEqual(pb, json, path);
    }
    // A list and a watch in protobuf: the pod as the JSON GET has it.
    const api = protobuf();
    const list = await api.get<{ items: Versioned[]; metadata: { resourceVersion: string } }>(`/api/v1/namespaces/${ns}/pods`);
    const json = JSON.parse(kubectl('get', '--raw', `/api/v1/namespaces/${ns}/pods/web`)) as Versioned & Record<string, unknown>;
    const { kind: _k, apiVersion: _a, ...item } = json;
    if (list.items[0]!.metadata?.resourceVersion === json.metadata?.resourceVersion) assert.deepEqual(list.items[0], item);
    const ac = new AbortController();
    const events: { type: string; object: Versioned }[] = [];
    const watching = api.watch<Versioned>(`/api/v1/namespaces/${ns}/pods?watch=1&resourceVersion=0`, (e) => events.push(e), ac.signal);
    await eventually('the watch ADDED event', 10_000, async () => events.length > 0);
    ac.abort();
    await watching;
    const now = JSON.parse(kubectl('get', '--raw', `/api/v1/namespaces/${ns}/pods/web`)) as Versioned;
    if (events[0]!.object.metadata?.resourceVersion === now.metadata?.resourceVersion) assert.deepEqual(events[0]!.object, now);
    assert.equal(events[0]!.type, 'ADDED');
  });
});

test('a Lease created and updated in protobuf reads back the same in JSON', async () => {
  await withNamespace(async (ns) => {
    const api = protobuf();
    const path = `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`;
    const created = await api.create<Versioned & { spec: Record<string, unknown> }>(path, {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'l' },
      spec: { holderIdentity: 'e2e', leaseDurationSeconds: 40, renewTime: '2026-12-03T14:16:01.123456Z' },
    });
    assert.equal(created.spec.renewTime, '2026-12-03T14:16:01.123456Z');
    const updated = await api.replace<Versioned>(`${path}/l`, { ...created, spec: { ...created.spec, leaseDurationSeconds: 41 } });
    assert.deepEqual(updated, JSON.parse(kubectl('-n', ns, 'get', 'lease', 'l', '-o', 'json', '--show-managed-fields')));
  });
});
