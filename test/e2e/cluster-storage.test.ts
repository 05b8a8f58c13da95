// Dynamic provisioning on the cluster of kubelet-ts nodes, as a user sets it up: rancher's
// local-path-provisioner (the provisioner kind and k3s ship) applied from its release manifest,
// a StatefulSet whose volumeClaimTemplates ask for local PVs on it (its documented volumeType:
// local annotation), and a generic ephemeral volume. Checked as an operator would: the volume is
// on the node its pod runs on, the replaced pod lands there again and reads what the first one
// wrote, and the ephemeral claim goes with its pod.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { BUSYBOX, ROOT, eventually } from './stack.ts';
import { WORKERS, ck, ckJSON, ensureCluster, dataStatefulSet } from './cluster.ts';

before(() => ensureCluster());

const LOCAL_PATH = `${ROOT}/manifests/addons/local-path-storage.yaml`;
const ns = `cs-${randomBytes(3).toString('hex')}`;
before(() => {
  ck(['apply', '-f', LOCAL_PATH]);
  ck(['create', 'namespace', ns]);
});
after(() => {
  ck(['delete', 'namespace', ns, '--wait=false']);
  ck(['delete', '-f', LOCAL_PATH, '--ignore-not-found', '--wait=false']);
});

type Pod = { metadata: { name: string; uid: string }; spec: { nodeName?: string }; status: { phase?: string } };
const pod = (name: string): Pod | undefined => {
  try {
    return ckJSON<Pod>('-n', ns, 'get', 'pod', name);
  } catch {
    return undefined;
  }
};
const apply = (obj: object) => ck(['-n', ns, 'apply', '-f', '-'], JSON.stringify(obj));

test('a StatefulSet on local-path keeps its data on its node when its pod is replaced', {
  timeout: 5 * 60_000,
}, async () => {
  ck(['-n', 'local-path-storage', 'rollout', 'status', 'deploy/local-path-provisioner', '--timeout=120s']);
  apply(dataStatefulSet('local-path', { volumeType: 'local' }));
  const first = await eventually('db-0 Running', 180_000, async () => {
    const p = pod('db-0');
    return p?.status.phase === 'Running' ? p : undefined;
  });
  assert.ok(WORKERS.includes(first.spec.nodeName!), `db-0 runs on a worker: ${first.spec.nodeName}`);
  const claim = ckJSON<{ spec: { volumeName: string } }>('-n', ns, 'get', 'pvc', 'data-db-0');
  const pv = ckJSON<{
    spec: { local?: { path: string }; nodeAffinity: { required: { nodeSelectorTerms: { matchExpressions: { values: string[] }[] }[] } } };
  }>('get', 'pv', claim.spec.volumeName);
  assert.ok(pv.spec.local?.path, 'a local PV');
  assert.deepEqual(pv.spec.nodeAffinity.required.nodeSelectorTerms[0]!.matchExpressions[0]!.values, [first.spec.nodeName]);
  await eventually('db-0 wrote its UID', 30_000, async () => ck(['-n', ns, 'logs', 'db-0']).trim() === first.metadata.uid);

  ck(['-n', ns, 'delete', 'pod', 'db-0', '--grace-period=1']);
  const second = await eventually('db-0 replaced and Running', 180_000, async () => {
    const p = pod('db-0');
    return p && p.metadata.uid !== first.metadata.uid && p.status.phase === 'Running' ? p : undefined;
  });
  assert.equal(second.spec.nodeName, first.spec.nodeName, 'the replacement goes where its volume is');
  await eventually(
    'the new db-0 reads what the first one wrote',
    30_000,
    async () => ck(['-n', ns, 'logs', 'db-0']).trim() === first.metadata.uid,
  );
});

test('a generic ephemeral volume on local-path: a claim owned by its pod, provisioned on its node, deleted with it', {
  timeout: 5 * 60_000,
}, async () => {
  apply({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'scratch' },
    spec: {
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'main',
          image: BUSYBOX,
          command: ['sh', '-c', 'echo tmp > /scratch/f && exec sleep 3600'],
          volumeMounts: [{ name: 'work', mountPath: '/scratch' }],
        },
      ],
      volumes: [
        {
          name: 'work',
          ephemeral: {
            volumeClaimTemplate: {
              spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'local-path', resources: { requests: { storage: '8Mi' } } },
            },
          },
        },
      ],
    },
  });
  const p = await eventually('scratch Running', 180_000, async () => {
    const x = pod('scratch');
    return x?.status.phase === 'Running' ? x : undefined;
  });
  const claim = ckJSON<{ metadata: { ownerReferences?: { uid: string }[] } }>('-n', ns, 'get', 'pvc', 'scratch-work');
  assert.equal(claim.metadata.ownerReferences?.[0]?.uid, p.metadata.uid, 'the claim belongs to the pod');
  assert.equal(ck(['-n', ns, 'exec', 'scratch', '--', 'cat', '/scratch/f']).trim(), 'tmp');
  ck(['-n', ns, 'delete', 'pod', 'scratch', '--grace-period=1', '--wait=true', '--timeout=60s']);
  await eventually('the ephemeral claim deleted with its pod', 60_000, async () => {
    try {
      return !!ckJSON<{ metadata: { deletionTimestamp?: string } }>('-n', ns, 'get', 'pvc', 'scratch-work').metadata.deletionTimestamp;
    } catch {
      return true;
    }
  });
});
