// Persistent volumes as a user meets them without a CSI driver, on the local stack:
// PersistentVolumes an admin creates (hostPath, and local with the node affinity the scheduler
// honours, as a filesystem and as a raw block device), claimed by PVCs and used by pods; a claim
// that is not bound; and
// what the Node reports (status.volumesInUse: attachable volumes only, never a local one, as
// upstream's GetVolumesInUse) while a pod uses a local volume. Checked as a
// user would: the data a pod wrote is on the node's disk and a new pod on the same claim reads
// it, the pod's events say why it waits. Dynamic provisioning, which needs a provisioner that
// reaches the apiserver through the kubernetes Service, runs on the cluster (cluster-storage.test.ts).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1PersistentVolume, V1Pod } from '@kubernetes/client-node';
import { BUSYBOX, clients, ensureStack, eventually, kubectl, nodeName, withNamespace } from './stack.ts';

before(() => ensureStack());

const scratch = mkdtempSync(join(tmpdir(), 'kts-pv-'));
const pvs: string[] = [];
after(async () => {
  for (const name of pvs)
    await clients()
      .core.deletePersistentVolume({ name })
      .catch(() => {});
  rmSync(scratch, { recursive: true, force: true });
});

const readPod = (ns: string, name: string) => clients().core.readNamespacedPod({ name, namespace: ns });

async function running(ns: string, name: string, timeoutMs = 60_000): Promise<V1Pod> {
  return eventually(`pod ${name} Running`, timeoutMs, async () => {
    const p = await readPod(ns, name);
    return p.status?.phase === 'Running' ? p : undefined;
  });
}

async function gone(ns: string, name: string): Promise<void> {
  await clients()
    .core.deleteNamespacedPod({ name, namespace: ns, gracePeriodSeconds: 0 })
    .catch(() => {});
  await eventually(`pod ${name} gone`, 60_000, async () => {
    try {
      await readPod(ns, name);
      return false;
    } catch {
      return true;
    }
  });
}

/** A PersistentVolume bound ahead to the claim ns/claim (claimRef), as an admin pre-binds one. */
async function persistentVolume(name: string, ns: string, source: Partial<V1PersistentVolume['spec']>): Promise<void> {
  pvs.push(name);
  await clients().core.createPersistentVolume({
    body: {
      metadata: { name },
      spec: {
        capacity: { storage: '64Mi' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Retain',
        storageClassName: '',
        claimRef: { namespace: ns, name: 'data' },
        ...source,
      },
    },
  });
}

async function claim(ns: string, volumeMode = 'Filesystem'): Promise<void> {
  await clients().core.createNamespacedPersistentVolumeClaim({
    namespace: ns,
    body: {
      metadata: { name: 'data' },
      spec: { accessModes: ['ReadWriteOnce'], storageClassName: '', volumeMode, resources: { requests: { storage: '64Mi' } } },
    },
  });
  await eventually('claim data Bound', 30_000, async () => {
    const c = await clients().core.readNamespacedPersistentVolumeClaim({ name: 'data', namespace: ns });
    return c.status?.phase === 'Bound';
  });
}

function podOnClaim(name: string, script: string, over: Partial<V1Pod['spec']> = {}): V1Pod {
  return {
    metadata: { name },
    spec: {
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'main', image: BUSYBOX, command: ['sh', '-c', script], volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
      ...over,
    } as V1Pod['spec'],
  };
}

const onlyThisNode = {
  required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [nodeName()] }] }] },
};

test('a hostPath PersistentVolume: what one pod writes is on the node, and the next pod on the claim reads it', () =>
  withNamespace(async (ns) => {
    const dir = join(scratch, 'hostpath');
    mkdirSync(dir);
    await persistentVolume(`${ns}-hostpath`, ns, { hostPath: { path: dir, type: 'Directory' } });
    await claim(ns);
    await clients().core.createNamespacedPod({ namespace: ns, body: podOnClaim('writer', 'echo kept > /data/f && sleep 3600') });
    await running(ns, 'writer');
    await eventually('the file on the node', 10_000, async () => readFileSync(join(dir, 'f'), 'utf8').trim() === 'kept');
    await gone(ns, 'writer');
    await clients().core.createNamespacedPod({ namespace: ns, body: podOnClaim('reader', 'cat /data/f && sleep 3600') });
    await running(ns, 'reader');
    await eventually('the next pod reads it', 10_000, async () => kubectl('-n', ns, 'logs', 'reader').trim() === 'kept');
  }));

test("a local PersistentVolume: scheduled to its node, bind-mounted with the fsGroup, never in the Node's volumesInUse (not attachable)", () =>
  withNamespace(async (ns) => {
    const dir = join(scratch, 'local');
    mkdirSync(dir);
    const pv = `${ns}-local`;
    await persistentVolume(pv, ns, { local: { path: dir }, nodeAffinity: onlyThisNode });
    await claim(ns);
    await clients().core.createNamespacedPod({
      namespace: ns,
      body: podOnClaim('db', 'echo row > /data/table && stat -c %g /data && sleep 3600', { securityContext: { fsGroup: 2345 } }),
    });
    const p = await running(ns, 'db');
    assert.equal(p.spec!.nodeName, nodeName(), "the scheduler honours the local volume's node affinity");
    await eventually('the row on the node', 10_000, async () => readFileSync(join(dir, 'table'), 'utf8').trim() === 'row');
    assert.equal(statSync(dir).gid, 2345, 'the volume belongs to the fsGroup');
    const unique = `kubernetes.io/local-volume/${pv}`;
    const uid = p.metadata!.uid!;
    const mountPoint = `${process.env.KUBELET_ROOT_DIR ?? '/var/lib/kubelet'}/pods/${uid}/volumes/kubernetes.io~local-volume/${pv}`;
    assert.ok(readFileSync('/proc/self/mountinfo', 'utf8').includes(` ${mountPoint} `), `${mountPoint} is a mount`);
    // upstream's GetVolumesInUse reports volumes whose plugin is attachable: the local plugin is not.
    const node = await clients().core.readNode({ name: nodeName() });
    assert.ok(!(node.status?.volumesInUse ?? []).includes(unique), `${unique} is not in volumesInUse`);
    await gone(ns, 'db');
    await eventually('the mount gone', 30_000, async () => !readFileSync('/proc/self/mountinfo', 'utf8').includes(` ${mountPoint} `));
    assert.equal(readFileSync(join(dir, 'table'), 'utf8').trim(), 'row', 'the data stays on the volume');
  }));

test("a local Block PersistentVolume is a device in the container (volumeDevices), its bytes on the node's disk", (t) =>
  withNamespace(async (ns) => {
    const image = join(scratch, 'disk.img');
    execFileSync('truncate', ['-s', '8M', image]);
    const loop = execFileSync('losetup', ['--find', '--show', image], { encoding: 'utf8' }).trim();
    t.after(() => execFileSync('losetup', ['-d', loop]));
    await persistentVolume(`${ns}-block`, ns, { local: { path: loop }, volumeMode: 'Block', nodeAffinity: onlyThisNode });
    await claim(ns, 'Block');
    await clients().core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'raw' },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: 'main',
              image: BUSYBOX,
              command: ['sh', '-c', 'echo -n raw-bytes | dd of=/dev/xvda conv=notrunc 2>/dev/null && sync && sleep 3600'],
              volumeDevices: [{ name: 'data', devicePath: '/dev/xvda' }],
            },
          ],
          volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
        },
      },
    });
    await running(ns, 'raw');
    // Read past the page cache (O_DIRECT wants whole sectors).
    await eventually('the bytes on the loop device', 10_000, async () => {
      const head = execFileSync('dd', [`if=${loop}`, 'bs=512', 'count=1', 'iflag=direct'], { stdio: ['ignore', 'pipe', 'ignore'] });
      return head.subarray(0, 9).toString() === 'raw-bytes';
    });
    await gone(ns, 'raw');
  }));

test('a pod bound to the node with a claim that is not bound waits, with FailedMount saying so', () =>
  withNamespace(async (ns) => {
    await clients().core.createNamespacedPersistentVolumeClaim({
      namespace: ns,
      body: {
        metadata: { name: 'data' },
        spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'none-such', resources: { requests: { storage: '1Mi' } } },
      },
    });
    await clients().core.createNamespacedPod({ namespace: ns, body: podOnClaim('stuck', 'sleep 3600', { nodeName: nodeName() }) });
    // The first try may be refused (403): the node authorizer lets a node read a claim once its
    // graph has the pod that names it, and that graph follows the apiserver's own watch. The
    // retry then says why the pod waits; upstream's volume manager does the same.
    let seen: string[] = [];
    await eventually('a FailedMount event saying the claim is not bound', 30_000, async () => {
      const list = await clients().core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=stuck' });
      seen = list.items.filter((e) => e.reason === 'FailedMount').map((e) => e.message ?? '');
      return seen.some((m) => /error processing PVC .*\/data: PVC is not bound/.test(m));
    }).catch((e: Error) => assert.fail(`${e.message}; FailedMount events: ${JSON.stringify(seen)}`));
    const p = await readPod(ns, 'stuck');
    assert.equal(p.status?.phase, 'Pending');
    assert.equal(p.status?.containerStatuses?.[0]?.state?.waiting?.reason ?? 'ContainerCreating', 'ContainerCreating');
  }));
