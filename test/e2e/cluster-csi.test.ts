// The real CSI hostpath driver on the cluster of kubelet-ts nodes, deployed as its users deploy
// it (hack/cluster/csi-hostpath.sh: csi-driver-host-path's deploy/kubernetes-latest manifests,
// the sidecars' RBAC, the snapshot CRDs and controller, the StorageClass csi-hostpath-sc; the
// images built from source by hack/build-csi.sh; docs/csi.md). Checked as an operator would:
// the kubelet registered the driver (CSINode), a StatefulSet's claim keeps its data when its pod
// is replaced, when the node's kubelet is SIGKILLed (volume reconstruction) and when the node is
// drained, and once the StatefulSet and its claims are gone nothing of the volume is left on the
// node.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { BUSYBOX, ROOT, eventually } from './stack.ts';
import { parseJUnit } from '../conformance/report.ts';
import { CP, WORKERS, ck, ckJSON, ensureCluster, inNode, dataStatefulSet, nodeKubelet } from './cluster.ts';

const DRIVER = 'hostpath.csi.k8s.io';
const csiHostpath = (action: 'apply' | 'delete') => {
  const r = spawnSync('bash', [`${ROOT}/hack/cluster/csi-hostpath.sh`, action], { encoding: 'utf8', timeout: 20 * 60_000 });
  if (r.status !== 0)
    throw new Error(
      `hack/cluster/csi-hostpath.sh ${action} exited ${r.status ?? r.signal}:\n${`${r.stdout}\n${r.stderr}`.trim().split('\n').slice(-15).join('\n')}`,
    );
};

const ns = `csi-${randomBytes(3).toString('hex')}`;
before(() => {
  ensureCluster();
  csiHostpath('apply');
  ck(['create', 'namespace', ns]);
});
after(() => {
  ck(['delete', 'namespace', ns, '--wait=true', '--timeout=120s']);
  csiHostpath('delete');
});

type Pod = { metadata: { name: string; uid: string }; spec: { nodeName?: string }; status: { phase?: string } };
const pod = (name: string, namespace = ns): Pod | undefined => {
  try {
    return ckJSON<Pod>('-n', namespace, 'get', 'pod', name);
  } catch {
    return undefined;
  }
};
const apply = (obj: object) => ck(['-n', ns, 'apply', '-f', '-'], JSON.stringify(obj));
/** The mount points in a node's mount namespace that belong to CSI volumes. */
const csiMounts = (node: string) =>
  inNode(node, 'cat', '/proc/self/mountinfo')
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter((m) => m.includes('/plugins/kubernetes.io/csi/') || m.includes('/volumes/kubernetes.io~csi/'));

let driverNode = '';
test('the driver runs: its pods Running, and the CSINode of the node it runs on lists hostpath.csi.k8s.io', {
  timeout: 3 * 60_000,
}, async () => {
  const plugin = pod('csi-hostpathplugin-0', 'default');
  assert.equal(plugin?.status.phase, 'Running', 'csi-hostpathplugin-0 Running');
  driverNode = plugin!.spec.nodeName!;
  assert.ok(WORKERS.includes(driverNode), `the plugin runs on a worker: ${driverNode}`);
  const ready = ckJSON<{ status: { containerStatuses: { name: string; ready: boolean }[] } }>('get', 'pod', 'csi-hostpathplugin-0')
    .status.containerStatuses.filter((c) => !c.ready)
    .map((c) => c.name);
  assert.deepEqual(ready, [], 'every container of the plugin pod ready (their liveness and readiness probes pass)');
  const controller = ckJSON<{ items: Pod[] }>('-n', 'kube-system', 'get', 'pods', '-l', 'app.kubernetes.io/name=snapshot-controller');
  assert.ok(controller.items.length > 0 && controller.items.every((p) => p.status.phase === 'Running'), 'snapshot-controller Running');
  // The node-driver-registrar registered the driver with that node's kubelet, which put it in
  // its CSINode with the topology key the driver reports; every kubelet-ts node has its CSINode.
  const csiNode = await eventually(`CSINode ${driverNode} lists ${DRIVER}`, 60_000, async () => {
    const n = ckJSON<{ spec: { drivers: { name: string; nodeID: string; topologyKeys?: string[] }[] | null } }>(
      'get',
      'csinode',
      driverNode,
    );
    return n.spec.drivers?.find((d) => d.name === DRIVER);
  });
  assert.equal(csiNode.nodeID, driverNode);
  assert.deepEqual(csiNode.topologyKeys, ['topology.hostpath.csi/node']);
  for (const n of [CP, ...WORKERS]) assert.ok(ckJSON('get', 'csinode', n), `CSINode ${n}`);
});

// The driver deployment itself, checked as its authors check a driver: csi-sanity on its socket,
// in the node it runs on (hack/csi-sanity.sh, `make csi-sanity`).
test('csi-sanity passes against the deployed driver', { timeout: 10 * 60_000 }, () => {
  const report = `${ROOT}/_output/cluster/logs/csi-sanity.xml`;
  rmSync(report, { force: true });
  const r = spawnSync('bash', [`${ROOT}/hack/csi-sanity.sh`], { encoding: 'utf8', timeout: 10 * 60_000 });
  assert.ok(existsSync(report), `csi-sanity wrote no report (exit ${r.status}): ${r.stderr?.trim().split('\n').slice(-5).join('\n')}`);
  const cases = parseJUnit(readFileSync(report, 'utf8'));
  const failed = cases.filter((c) => c.outcome === 'failed').map((c) => `${c.name}: ${c.message.split('\n')[0]}`);
  assert.deepEqual(failed, [], 'csi-sanity failures');
  // (The driver's capabilities decide what runs: 77 of 103 on hostpathplugin v1.18.0.)
  assert.ok(cases.filter((c) => c.outcome === 'passed').length >= 70, `csi-sanity ran its checks: ${cases.length} cases`);
  assert.equal(r.status, 0, `hack/csi-sanity.sh exited ${r.status}: ${r.stderr?.trim().split('\n').slice(-5).join('\n')}`);
});

test('a StatefulSet on csi-hostpath-sc keeps its data across a pod delete, a SIGKILL of its kubelet and a node drain; nothing is left after it and its claim go', {
  timeout: 8 * 60_000,
}, async () => {
  assert.ok(driverNode, 'the first test found the driver');
  apply(dataStatefulSet('csi-hostpath-sc'));
  const running = (notUid?: string) => async () => {
    const p = pod('db-0');
    return p && p.metadata.uid !== notUid && p.status.phase === 'Running' ? p : undefined;
  };
  const first = await eventually('db-0 Running', 180_000, running());
  assert.equal(first.spec.nodeName, driverNode, 'the volume is on the driver node (topology.hostpath.csi/node), and so is its pod');
  const pvName = ckJSON<{ spec: { volumeName: string } }>('-n', ns, 'get', 'pvc', 'data-db-0').spec.volumeName;
  const pv = ckJSON<{ spec: { csi?: { driver: string; volumeHandle: string } } }>('get', 'pv', pvName);
  assert.equal(pv.spec.csi?.driver, DRIVER, 'a CSI PV of the driver');
  await eventually('db-0 wrote its UID', 30_000, async () => ck(['-n', ns, 'logs', 'db-0']).trim() === first.metadata.uid);
  // The CSI volume is published into the pod (the driver's bind mount under the pod's volumes dir).
  const published = csiMounts(driverNode).filter((m) => m.includes(first.metadata.uid));
  assert.ok(published.length > 0, `the volume is mounted for pod ${first.metadata.uid}: ${csiMounts(driverNode).join(', ')}`);
  await eventually(`Node ${driverNode} reports the volume in use`, 30_000, async () =>
    (ckJSON<{ status: { volumesInUse?: string[] } }>('get', 'node', driverNode).status.volumesInUse ?? []).some((v) =>
      v.includes(pv.spec.csi!.volumeHandle),
    ),
  );

  // A replaced pod reads what the first one wrote.
  ck(['-n', ns, 'delete', 'pod', 'db-0', '--grace-period=1']);
  const second = await eventually('db-0 replaced and Running', 180_000, running(first.metadata.uid));
  await eventually(
    'the new db-0 reads what the first one wrote',
    30_000,
    async () => ck(['-n', ns, 'logs', 'db-0']).trim() === first.metadata.uid,
  );
  assert.ok(!csiMounts(driverNode).some((m) => m.includes(first.metadata.uid)), 'nothing of the first pod is mounted any more');

  // SIGKILL of the node's kubelet-ts (hack/supervise.sh starts it again, as systemd would):
  // the pod keeps running on its volume, the restarted kubelet finds the volume again from what
  // is mounted, and can tear it down when the pod goes.
  const pidFile = `${ROOT}/_output/cluster/pids/${driverNode}-kubelet.child.pid`;
  const pid = readFileSync(pidFile, 'utf8').trim();
  process.kill(Number(pid), 'SIGKILL');
  await eventually('the kubelet started again', 60_000, async () => readFileSync(pidFile, 'utf8').trim() !== pid);
  await eventually(`Node ${driverNode} Ready after the restart`, 90_000, async () => {
    const n = ckJSON<{ status: { conditions: { type: string; status: string; lastHeartbeatTime: string }[] } }>('get', 'node', driverNode);
    const r = n.status.conditions.find((c) => c.type === 'Ready');
    return r?.status === 'True' && Date.parse(r.lastHeartbeatTime) > Date.now() - 15_000;
  });
  // Some seconds for the restarted kubelet's first syncs: it must not unmount the running pod's volume.
  await new Promise((r) => setTimeout(r, 5_000));
  assert.equal(pod('db-0')?.metadata.uid, second.metadata.uid, 'the same pod after the restart');
  assert.equal(ck(['-n', ns, 'exec', 'db-0', '--', 'cat', '/data/first']).trim(), first.metadata.uid, 'its volume still there');

  // A node drain (kubectl drain evicts through the Eviction API; only this StatefulSet's pod, so
  // the driver stays): the evicted pod's volume is unpublished while the node is cordoned, its
  // replacement waits (the volume is bound to this node's topology) and, once the node is
  // uncordoned, runs there on the same data.
  ck(['drain', driverNode, '--pod-selector=app=db', '--ignore-daemonsets', '--timeout=120s']);
  try {
    await eventually(
      'the drained pod unpublished',
      60_000,
      async () => !csiMounts(driverNode).some((m) => m.includes(second.metadata.uid)),
    );
    const waiting = await eventually('db-0 replaced, Pending on the cordoned node', 60_000, async () => {
      const p = pod('db-0');
      return p && p.metadata.uid !== second.metadata.uid && p.status.phase === 'Pending' ? p : undefined;
    });
    assert.equal(waiting.spec.nodeName, undefined, 'not scheduled while the only node its volume reaches is cordoned');
  } finally {
    ck(['uncordon', driverNode]);
  }
  const third = await eventually('db-0 Running after the uncordon', 180_000, running(second.metadata.uid));
  assert.equal(third.spec.nodeName, driverNode);
  await eventually(
    'the third db-0 reads what the first one wrote',
    30_000,
    async () => ck(['-n', ns, 'logs', 'db-0']).trim() === first.metadata.uid,
  );

  // The StatefulSet and its claim deleted: the volume is unpublished, unstaged, detached and deleted.
  ck(['-n', ns, 'delete', 'statefulset', 'db', '--wait=true', '--timeout=60s']);
  await eventually('db-0 gone', 60_000, async () => !pod('db-0'));
  ck(['-n', ns, 'delete', 'pvc', 'data-db-0', '--wait=true', '--timeout=60s']);
  await eventually(`PV ${pvName} deleted`, 60_000, async () => {
    try {
      ckJSON('get', 'pv', pvName);
      return false;
    } catch {
      return true;
    }
  });
  await eventually('no CSI volume mounted on the node', 60_000, async () => csiMounts(driverNode).length === 0);
  await eventually(`no VolumeAttachment of ${pvName}`, 60_000, async () =>
    ckJSON<{ items: { spec: { source: { persistentVolumeName?: string } } }[] }>('get', 'volumeattachments').items.every(
      (va) => va.spec.source.persistentVolumeName !== pvName,
    ),
  );
  const leftDirs = inNode(
    driverNode,
    'sh',
    '-c',
    'ls -d /var/lib/kubelet/pods/*/volumes/kubernetes.io~csi/* /var/lib/kubelet/plugins/kubernetes.io/csi/*/*/globalmount 2>/dev/null || true',
  ).trim();
  assert.equal(leftDirs, '', 'no CSI volume directories left under /var/lib/kubelet');
});

test('an inline CSI volume, a raw block claim (a device in the container) and an online expansion of a mounted claim', {
  timeout: 8 * 60_000,
}, async () => {
  assert.ok(driverNode, 'the first test found the driver');
  const onDriverNode = { nodeSelector: { 'kubernetes.io/hostname': driverNode }, terminationGracePeriodSeconds: 1 };
  const claim = (name: string, mode: 'Filesystem' | 'Block') => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name },
    spec: {
      accessModes: ['ReadWriteOnce'],
      volumeMode: mode,
      storageClassName: 'csi-hostpath-sc',
      resources: { requests: { storage: '16Mi' } },
    },
  });
  apply(claim('blk', 'Block'));
  apply(claim('grow', 'Filesystem'));
  apply({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'vols' },
    spec: {
      ...onDriverNode,
      containers: [
        {
          name: 'main',
          image: BUSYBOX,
          command: ['sh', '-c', 'echo inline > /inline/f && exec sleep 3600'],
          volumeMounts: [
            { name: 'inline', mountPath: '/inline' },
            { name: 'grow', mountPath: '/grow' },
          ],
          volumeDevices: [{ name: 'blk', devicePath: '/dev/xvda' }],
        },
      ],
      volumes: [
        // An inline (ephemeral) CSI volume: the driver's CSIDriver lists the Ephemeral mode.
        { name: 'inline', csi: { driver: DRIVER, volumeAttributes: { size: '1Mi' } } },
        { name: 'blk', persistentVolumeClaim: { claimName: 'blk' } },
        { name: 'grow', persistentVolumeClaim: { claimName: 'grow' } },
      ],
    },
  });
  const vols = await eventually('pod vols Running', 180_000, async () => {
    const p = pod('vols');
    return p?.status.phase === 'Running' ? p : undefined;
  });
  const exec = (script: string) => ck(['-n', ns, 'exec', 'vols', '--', 'sh', '-c', script]).trim();
  assert.equal(exec('cat /inline/f'), 'inline', 'the inline volume is writable');
  assert.ok(
    csiMounts(driverNode).some((m) => m.includes(`${vols.metadata.uid}/volumes/kubernetes.io~csi/inline`)),
    'the inline volume is published into the pod',
  );
  // The raw block claim: a block device, written and read back through it.
  assert.equal(exec('test -b /dev/xvda && echo block'), 'block', '/dev/xvda is a block device');
  assert.equal(
    exec('echo kubelet-ts | dd of=/dev/xvda bs=512 count=1 conv=sync 2>/dev/null; dd if=/dev/xvda bs=11 count=1 2>/dev/null'),
    'kubelet-ts',
  );

  // Online expansion: the resizer grows the volume, the kubelet finishes it on the node (NodeExpandVolume).
  ck(['-n', ns, 'patch', 'pvc', 'grow', '--type=merge', '-p', '{"spec":{"resources":{"requests":{"storage":"32Mi"}}}}']);
  type Claim = {
    status: { capacity?: { storage?: string }; allocatedResourceStatuses?: Record<string, string>; conditions?: { type: string }[] };
  };
  const grown = await eventually(
    'claim grow at 32Mi, its node expansion finished',
    180_000,
    async () => {
      const c = ckJSON<Claim>('-n', ns, 'get', 'pvc', 'grow');
      return c.status.capacity?.storage === '32Mi' ? c : undefined;
    },
    2000,
  );
  assert.equal(grown.status.allocatedResourceStatuses?.storage, undefined, 'no resize status left');
  assert.deepEqual(
    (grown.status.conditions ?? []).map((c) => c.type),
    [],
    'no FileSystemResizePending or resize error condition left',
  );
  assert.equal(exec('cat /inline/f'), 'inline', 'the pod kept running meanwhile');

  // All goes: nothing of the three volumes is left on the node.
  ck(['-n', ns, 'delete', 'pod', 'vols', '--wait=true', '--timeout=60s']);
  ck(['-n', ns, 'delete', 'pvc', 'blk', 'grow', '--wait=true', '--timeout=60s']);
  await eventually('no CSI volume mounted on the node', 60_000, async () => csiMounts(driverNode).length === 0);
  const left = inNode(
    driverNode,
    'sh',
    '-c',
    `ls -d /var/lib/kubelet/pods/${vols.metadata.uid}/volumes/kubernetes.io~csi/* /var/lib/kubelet/pods/${vols.metadata.uid}/volumeDevices/*/* /var/lib/kubelet/plugins/kubernetes.io/csi/volumeDevices/*/* 2>/dev/null || true`,
  ).trim();
  assert.equal(left, '', 'no CSI volume or device directories left');
  assert.equal(
    inNode(driverNode, 'sh', '-c', 'losetup -a | grep /var/lib/kubelet/ || true').trim(),
    '',
    'no loop device of the kubelet left',
  );
});

// A snapshot of a claim a pod wrote, restored into a new claim another pod mounts: the driver's
// snapshotter and the snapshot-controller make it, the kubelet mounts the restored volume.
test('a VolumeSnapshot of a written claim restored into a new claim holds the data', { timeout: 6 * 60_000 }, async () => {
  assert.ok(driverNode, 'the first test found the driver');
  const claim = (name: string, dataSource?: object) => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name },
    spec: {
      accessModes: ['ReadWriteOnce'],
      storageClassName: 'csi-hostpath-sc',
      resources: { requests: { storage: '16Mi' } },
      ...(dataSource ? { dataSource } : {}),
    },
  });
  const podOn = (name: string, claimName: string, script: string) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      nodeSelector: { 'kubernetes.io/hostname': driverNode },
      terminationGracePeriodSeconds: 1,
      restartPolicy: 'Never',
      containers: [{ name: 'main', image: BUSYBOX, command: ['sh', '-c', script], volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }],
    },
  });
  const succeeded = (name: string) =>
    eventually(`pod ${name} Succeeded`, 180_000, async () => {
      const p = pod(name);
      assert.notEqual(p?.status.phase, 'Failed', `pod ${name} failed`);
      return p?.status.phase === 'Succeeded';
    });
  const data = `snap-${randomBytes(4).toString('hex')}`;
  apply(claim('origin'));
  apply(podOn('writer', 'origin', `echo ${data} > /data/f && sync`));
  await succeeded('writer');
  apply({
    apiVersion: 'snapshot.storage.k8s.io/v1',
    kind: 'VolumeSnapshot',
    metadata: { name: 'snap' },
    spec: { volumeSnapshotClassName: 'csi-hostpath-snapclass', source: { persistentVolumeClaimName: 'origin' } },
  });
  await eventually(
    'VolumeSnapshot snap readyToUse',
    120_000,
    async () => ckJSON<{ status?: { readyToUse?: boolean } }>('-n', ns, 'get', 'volumesnapshot', 'snap').status?.readyToUse === true,
    2000,
  );
  apply(claim('restored', { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'snap' }));
  apply(podOn('reader', 'restored', 'cat /data/f'));
  await succeeded('reader');
  assert.equal(ck(['-n', ns, 'logs', 'reader']).trim(), data, 'the restored claim holds what the writer wrote');
  ck(['-n', ns, 'delete', 'pod', 'writer', 'reader', '--wait=true', '--timeout=60s']);
  ck(['-n', ns, 'delete', 'volumesnapshot', 'snap', '--wait=true', '--timeout=60s']);
  ck(['-n', ns, 'delete', 'pvc', 'origin', 'restored', '--wait=true', '--timeout=60s']);
  await eventually('no CSI volume mounted on the node', 60_000, async () => csiMounts(driverNode).length === 0);
});

test('CSIDriver tokenRequests and requiresRepublish: the driver gets a token for the audience, bound to the pod, at each NodePublishVolume, and is called again while the pod runs', {
  timeout: 8 * 60_000,
}, async () => {
  assert.ok(driverNode, 'the first test found the driver');
  // The hostpath driver runs with --v=5 and logs each call as `gRPCCall: {JSON}` with its whole
  // request (pkg/hostpath/server.go logGRPCJson), as upstream's CSI mock e2e reads it: the token
  // the kubelet put in the volume context is there.
  type Spec = { tokenRequests?: { audience: string; expirationSeconds?: number }[]; requiresRepublish?: boolean };
  const original = ckJSON<{ spec: Spec }>('get', 'csidriver', DRIVER).spec;
  const audience = `kts-e2e-${randomBytes(3).toString('hex')}`;
  const patchDriver = (spec: { tokenRequests: Spec['tokenRequests'] | null; requiresRepublish: boolean }) =>
    ck(['patch', 'csidriver', DRIVER, '--type=merge', '-p', JSON.stringify({ spec })]);
  // tokenRequests and requiresRepublish are mutable (ValidateCSIDriverUpdate).
  patchDriver({ tokenRequests: [{ audience, expirationSeconds: 600 }], requiresRepublish: true });
  try {
    apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'tok' },
      spec: {
        nodeSelector: { 'kubernetes.io/hostname': driverNode },
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'main', image: BUSYBOX, command: ['sleep', '3600'], volumeMounts: [{ name: 'v', mountPath: '/v' }] }],
        volumes: [{ name: 'v', csi: { driver: DRIVER, volumeAttributes: { size: '1Mi' } } }],
      },
    });
    const tok = await eventually('pod tok Running', 180_000, async () => {
      const p = pod('tok');
      return p?.status.phase === 'Running' ? p : undefined;
    });
    type Call = { Method: string; Request: { target_path?: string; volume_context?: Record<string, string> } };
    const publishes = () =>
      ck(['logs', 'csi-hostpathplugin-0', '-c', 'hostpath'])
        .split('\n')
        .flatMap((l) => {
          const i = l.indexOf('gRPCCall: ');
          if (i < 0) return [];
          try {
            return [JSON.parse(l.slice(i + 'gRPCCall: '.length)) as Call];
          } catch {
            return [];
          }
        })
        .filter((c) => c.Method === '/csi.v1.Node/NodePublishVolume' && c.Request.target_path?.includes(`/pods/${tok.metadata.uid}/`));
    const first = publishes();
    assert.ok(first.length >= 1, 'the driver logged the NodePublishVolume of the pod');
    const raw = first[0]!.Request.volume_context?.['csi.storage.k8s.io/serviceAccount.tokens'];
    assert.ok(
      raw,
      `the volume context carries csi.storage.k8s.io/serviceAccount.tokens: ${JSON.stringify(first[0]!.Request.volume_context)}`,
    );
    const tokens = JSON.parse(raw) as Record<string, { token: string; expirationTimestamp: string }>;
    assert.deepEqual(Object.keys(tokens), [audience], 'one token, for the audience asked');
    const { token, expirationTimestamp } = tokens[audience]!;
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as {
      aud: string[];
      exp: number;
      iat: number;
      'kubernetes.io': { namespace: string; pod: { name: string; uid: string }; serviceaccount: { name: string } };
    };
    assert.deepEqual(claims.aud, [audience]);
    assert.equal(claims.exp - claims.iat, 600, 'expirationSeconds as the CSIDriver gives it');
    assert.equal(new Date(expirationTimestamp).getTime(), claims.exp * 1000, 'expirationTimestamp is the token exp');
    assert.deepEqual(
      [
        claims['kubernetes.io'].namespace,
        claims['kubernetes.io'].pod.name,
        claims['kubernetes.io'].pod.uid,
        claims['kubernetes.io'].serviceaccount.name,
      ],
      [ns, 'tok', tok.metadata.uid, 'default'],
      'bound to the pod, for its service account',
    );
    // requiresRepublish: NodePublishVolume again at a later pod sync (upstream: each syncPod, about a minute apart).
    const again = await eventually(
      'a second NodePublishVolume of the running pod',
      180_000,
      async () => {
        const all = publishes();
        return all.length >= 2 ? all : undefined;
      },
      5000,
    );
    assert.ok(again.at(-1)!.Request.volume_context?.['csi.storage.k8s.io/serviceAccount.tokens'], 'the republish carries the tokens too');
    assert.equal(pod('tok')?.status.phase, 'Running', 'the pod kept running');
    ck(['-n', ns, 'delete', 'pod', 'tok', '--wait=true', '--timeout=60s']);
    await eventually(
      'no CSI volume of pod tok mounted',
      60_000,
      async () => !csiMounts(driverNode).some((m) => m.includes(tok.metadata.uid)),
    );
  } finally {
    patchDriver({ tokenRequests: original.tokenRequests ?? null, requiresRepublish: original.requiresRepublish ?? false });
  }
});

// enableControllerAttachDetach: false on the driver's node: the Node registers without the
// controller-managed-attach-detach annotation, so the attach/detach controller leaves the node's
// volumes alone and the kubelet makes the VolumeAttachment itself (the driver's external-attacher
// attaches it), then deletes it once the volume is unstaged. The node's credentials get RBAC for
// VolumeAttachments, as an operator grants upstream's kubelet in this mode. The controller reads
// the annotation when it first sees a Node (addNodeToDswp), so its manager is restarted, as after
// an upgrade. (Deleting the Node instead would give it a new podCIDR under flannel's feet.)
test('enableControllerAttachDetach false: the kubelet attaches the claim itself and detaches it when the pod goes', {
  timeout: 6 * 60_000,
}, async () => {
  assert.ok(driverNode, 'the first test found the driver');
  const config = `/var/lib/kts/nodes/${driverNode}/var/lib/kubelet/config.yaml`;
  const original = readFileSync(config, 'utf8');
  const rbac = {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'kts-node-volumeattachments' },
        rules: [{ apiGroups: ['storage.k8s.io'], resources: ['volumeattachments'], verbs: ['get', 'create', 'delete'] }],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'kts-node-volumeattachments' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'kts-node-volumeattachments' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:nodes' }],
      },
    ],
  };
  const annotation = () =>
    ckJSON<{ metadata: { annotations?: Record<string, string> } }>('get', 'node', driverNode).metadata.annotations?.[
      'volumes.kubernetes.io/controller-managed-attach-detach'
    ];
  const restartKubelet = () => {
    nodeKubelet(driverNode, 'stop');
    nodeKubelet(driverNode, 'start');
  };
  /** The controller-manager's static pod's container stopped on the control-plane node: its kubelet starts it again. */
  const restartControllerManager = async () => {
    type Lease = { spec: { holderIdentity?: string; renewTime?: string } };
    const lease = () => ckJSON<Lease>('-n', 'kube-system', 'get', 'lease', 'kube-controller-manager').spec;
    const before = lease().holderIdentity;
    const id = inNode(CP, 'crictl', 'ps', '-q', '--name', 'kube-controller-manager').trim();
    assert.ok(id, 'the kube-controller-manager container on the control-plane node');
    inNode(CP, 'crictl', 'stop', id);
    await eventually('a new kube-controller-manager leading', 120_000, async () => {
      const l = lease();
      return l.holderIdentity !== before && Date.parse(l.renewTime ?? '') > Date.now() - 10_000;
    });
  };
  ck(['apply', '-f', '-'], JSON.stringify(rbac));
  writeFileSync(config, `${original.trimEnd()}\nenableControllerAttachDetach: false\n`);
  try {
    restartKubelet();
    await eventually(`Node ${driverNode} without the controller-managed-attach-detach annotation`, 90_000, async () => !annotation());
    await restartControllerManager();
    apply({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'self-attached' },
      spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'csi-hostpath-sc', resources: { requests: { storage: '16Mi' } } },
    });
    apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'self-attached' },
      spec: {
        nodeSelector: { 'kubernetes.io/hostname': driverNode },
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'c',
            image: BUSYBOX,
            command: ['sh', '-c', 'echo kept > /data/f && exec sleep 3600'],
            volumeMounts: [{ name: 'd', mountPath: '/data' }],
          },
        ],
        volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'self-attached' } }],
      },
    });
    await eventually('the pod Running on its claim', 180_000, async () => pod('self-attached')?.status.phase === 'Running');
    const pvName = ckJSON<{ spec: { volumeName: string } }>('-n', ns, 'get', 'pvc', 'self-attached').spec.volumeName;
    type VA = {
      metadata: { name: string; managedFields?: { manager: string }[] };
      spec: { nodeName: string; attacher: string; source: { persistentVolumeName?: string } };
      status?: { attached?: boolean };
    };
    const attachments = () =>
      ckJSON<{ items: VA[] }>('get', 'volumeattachments', '--show-managed-fields').items.filter(
        (va) => va.spec.source.persistentVolumeName === pvName,
      );
    const [va] = attachments();
    assert.ok(va, `a VolumeAttachment of ${pvName}`);
    assert.equal(va.spec.nodeName, driverNode);
    assert.equal(va.spec.attacher, DRIVER);
    assert.equal(va.status?.attached, true, 'attached by the external-attacher');
    assert.deepEqual(
      va.metadata.managedFields?.map((f) => f.manager).filter((m) => m !== 'csi-attacher'),
      ['kubelet-ts'],
      'made by the kubelet, not the attach/detach controller',
    );
    assert.equal(ck(['-n', ns, 'exec', 'self-attached', '--', 'cat', '/data/f']).trim(), 'kept');
    ck(['-n', ns, 'delete', 'pod', 'self-attached', '--wait=true', '--timeout=60s']);
    await eventually(
      'the VolumeAttachment deleted by the kubelet once the volume is unstaged',
      90_000,
      async () => attachments().length === 0,
    );
    assert.equal(
      inNode(driverNode, 'sh', '-c', 'ls -d /var/lib/kubelet/plugins/kubernetes.io/csi/*/*/globalmount 2>/dev/null || true').trim(),
      '',
      'unstaged',
    );
  } finally {
    writeFileSync(config, original);
    ck(['-n', ns, 'delete', 'pod,pvc', 'self-attached', '--ignore-not-found', '--wait=true', '--timeout=60s']);
    restartKubelet();
    await eventually(`Node ${driverNode} with the annotation again`, 90_000, async () => annotation() === 'true');
    ck(['delete', '-f', '-'], JSON.stringify(rbac));
  }
});
