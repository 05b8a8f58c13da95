// User namespaces (spec.hostUsers: false), as upstream's kubelet v1.36 gives them: each such pod
// gets 65536 IDs of its own from a non-zero host ID, kept in ROOT/pods/UID/userns until the pod
// is terminated, and its volumes are idmapped, so that a file it writes is owned on the host by
// the ID it has inside. A runtime handler without user namespaces refuses the pod with
// FailedCreatePodSandBox, as upstream's GetOrCreateUserNamespaceMappings words it.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import type { V1Container } from '@kubernetes/client-node';
import {
  BUSYBOX,
  clients,
  crictl,
  ensureStack,
  eventually,
  kubectl,
  kubectlInput,
  podSpec,
  RUNTIME,
  restartKubelet,
  withNamespace,
} from './stack.ts';

before(() => ensureStack());

const ROOT_DIR = process.env.KUBELET_ROOT_DIR ?? '/var/lib/kubelet';
// containerd 1.6 lists no runtime handlers, so no handler of it supports user namespaces.
const noUserns = RUNTIME === 'containerd1';

const sh = (name: string, script: string, over: Partial<V1Container> = {}): V1Container => ({
  name,
  image: BUSYBOX,
  command: ['sh', '-c', script],
  volumeMounts: [{ name: 'data', mountPath: '/data' }],
  ...over,
});

/** The one line of a uid_map or gid_map: container ID, host ID, length. */
const idMap = (text: string) => {
  const lines = text.trim().split('\n');
  assert.equal(lines.length, 1, `one mapping: ${text}`);
  const [containerId, hostId, length] = lines[0]!.trim().split(/\s+/).map(Number);
  return { containerId, hostId, length };
};

/** The host pid of a pod's container, from the runtime. */
function hostPid(ns: string, pod: string, container: string): number {
  const sandbox = crictl('pods', '--namespace', ns, '--name', pod, '-q').trim().split('\n')[0]!;
  const id = crictl('ps', '--pod', sandbox, '--name', container, '-q').trim().split('\n')[0]!;
  return (JSON.parse(crictl('inspect', id)) as { info: { pid: number } }).info.pid;
}

/** Starts a hostUsers: false pod whose containers print their ID maps and write a file each on an emptyDir, then sleep. */
async function startPod(ns: string, name: string): Promise<{ uid: string; hostId: number }> {
  const { core } = clients();
  const report = (file: string) =>
    `cat /proc/self/uid_map /proc/self/gid_map; echo hi > /data/${file}; echo "owner=$(stat -c %u:%g /data/${file})"; echo done; exec sleep 3600`;
  await core.createNamespacedPod({
    namespace: ns,
    body: podSpec(name, {
      hostUsers: false,
      volumes: [{ name: 'data', emptyDir: {} }],
      containers: [
        sh('root', report('root-file')),
        sh('user', report('user-file'), { securityContext: { runAsUser: 1000, runAsGroup: 3000 } }),
      ],
    }),
  });
  const pod = await eventually(`${name} Running`, 90_000, async () => {
    const p = await core.readNamespacedPod({ name, namespace: ns });
    return p.status?.phase === 'Running' ? p : undefined;
  });
  const uid = pod.metadata!.uid!;
  for (const c of ['root', 'user'])
    await eventually(`${name}/${c} wrote its file`, 30_000, async () => kubectl('-n', ns, 'logs', name, '-c', c).includes('done'));
  const log = kubectl('-n', ns, 'logs', name, '-c', 'root');
  const [uidMap, gidMap] = log.trim().split('\n').slice(0, 2).map(idMap);
  assert.deepEqual(gidMap, uidMap, `the same mapping for groups: ${log}`);
  return { uid, hostId: uidMap!.hostId! };
}

// One test per runtime: the pod's own IDs where the runtime has user namespaces, the refusal where not.
const ownIDs = () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    const { uid, hostId } = await startPod(ns, 'userns');
    const log = kubectl('-n', ns, 'logs', 'userns', '-c', 'root');
    assert.deepEqual(idMap(log.split('\n')[0]!), { containerId: 0, hostId, length: 65536 }, log);
    assert.ok(hostId > 0 && hostId % 65536 === 0, `host ID ${hostId}: not 0, a multiple of 65536`);

    // The kubelet's record, as upstream writes it.
    const file = `${ROOT_DIR}/pods/${uid}/userns`;
    assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), {
      uidMappings: [{ hostId, containerId: 0, length: 65536 }],
      gidMappings: [{ hostId, containerId: 0, length: 65536 }],
    });
    // The host sees the processes as the mapped IDs: root is hostId, uid 1000 is hostId + 1000.
    const uidOf = (c: string) => Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${hostPid(ns, 'userns', c)}/status`, 'utf8'))?.[1]);
    assert.equal(uidOf('root'), hostId);
    assert.equal(uidOf('user'), hostId + 1000);

    // Inside, each file is its writer's; on the host too, through the idmapped mount.
    assert.match(log, /owner=0:0/);
    assert.match(kubectl('-n', ns, 'logs', 'userns', '-c', 'user'), /owner=1000:3000/);
    const dir = `${ROOT_DIR}/pods/${uid}/volumes/kubernetes.io~empty-dir/data`;
    const owner = (f: string) => {
      const s = statSync(`${dir}/${f}`);
      return `${s.uid}:${s.gid}`;
    };
    assert.equal(owner('root-file'), '0:0');
    assert.equal(owner('user-file'), '1000:3000');

    // A second pod gets a range of its own.
    const other = await startPod(ns, 'userns-2');
    assert.notEqual(other.hostId, hostId);

    // Terminated: the range is released and the record goes.
    await core.deleteNamespacedPod({ name: 'userns', namespace: ns, gracePeriodSeconds: 1 });
    await eventually('the userns record removed', 60_000, async () => !existsSync(file));
  });

test("hostUsers: false on a handler without user namespaces: FailedCreatePodSandBox with upstream's words, no sandbox", () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    const handler = 'no-such-handler';
    kubectlInput(
      `apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: ${ns}-missing}\nhandler: ${handler}\n`,
      'apply',
      '-f',
      '-',
    );
    try {
      await core.createNamespacedPod({ namespace: ns, body: podSpec('refused', { hostUsers: false, runtimeClassName: `${ns}-missing` }) });
      const event = await eventually('FailedCreatePodSandBox', 60_000, async () =>
        (await core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=refused' })).items.find(
          (e) => e.reason === 'FailedCreatePodSandBox',
        ),
      );
      const words = `Failed to create pod sandbox: can't set \`spec.hostUsers: false\`, RuntimeClass handler "${handler}" does not support user namespaces`;
      // A runtime that lists handlers (containerd 2) does not know this one; containerd 1.6 lists none.
      assert.equal(event.message, noUserns ? words : `${words}: the handler "${handler}" is not known`);
      assert.equal((await core.readNamespacedPod({ name: 'refused', namespace: ns })).status?.phase, 'Pending');
      assert.equal(crictl('pods', '--namespace', ns, '--name', 'refused', '-q').trim(), '', 'no sandbox');
    } finally {
      kubectl('delete', 'runtimeclass', `${ns}-missing`, '--ignore-not-found');
    }
  }));

const refusedOnContainerd1 = () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedPod({ namespace: ns, body: podSpec('refused', { hostUsers: false }) });
    const event = await eventually('FailedCreatePodSandBox', 60_000, async () =>
      (await core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=refused' })).items.find(
        (e) => e.reason === 'FailedCreatePodSandBox',
      ),
    );
    assert.equal(
      event.message,
      "Failed to create pod sandbox: can't set `spec.hostUsers: false`, runtime does not support user namespaces",
    );
  });

test(
  noUserns
    ? 'hostUsers: false on containerd 1.6: refused, the runtime has no user namespaces'
    : 'hostUsers: false: 65536 IDs from a non-zero host ID, kept in ROOT/pods/UID/userns; the emptyDir files owned as inside',
  () => (noUserns ? refusedOnContainerd1() : ownIDs()),
);

// userNamespaces.idsPerPod: every pod's share is that many IDs, from a host ID that is a multiple
// of it. A kubelet whose pods hold shares of another size refuses to start (upstream's
// recordPodMappings), so the test starts from a node without hostUsers: false pods and ends so.
const idsPerPod = () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    const held = () => usernsRecords().length;
    await eventually('no pod holds a user namespace', 120_000, async () => held() === 0);
    restartKubelet('userNamespaces: {idsPerPod: 131072}\n');
    try {
      const { uid, hostId } = await startPod(ns, 'userns-wide');
      const log = kubectl('-n', ns, 'logs', 'userns-wide', '-c', 'root');
      assert.deepEqual(idMap(log.split('\n')[0]!), { containerId: 0, hostId, length: 131072 }, log);
      assert.ok(hostId > 0 && hostId % 131072 === 0, `host ID ${hostId}: a multiple of 131072`);
      assert.deepEqual(JSON.parse(readFileSync(`${ROOT_DIR}/pods/${uid}/userns`, 'utf8')).uidMappings, [
        { hostId, containerId: 0, length: 131072 },
      ]);
      await core.deleteNamespacedPod({ name: 'userns-wide', namespace: ns, gracePeriodSeconds: 1 });
      await eventually('the userns record removed', 60_000, async () => held() === 0);
    } finally {
      restartKubelet();
    }
  });

/** The pods that hold a user namespace on this node: their ROOT/pods/UID/userns files. */
function usernsRecords(): string[] {
  return readdirSync(`${ROOT_DIR}/pods`).filter((uid) => existsSync(`${ROOT_DIR}/pods/${uid}/userns`));
}

if (!noUserns) test('userNamespaces.idsPerPod 131072: a pod gets 131072 IDs from a multiple of 131072', idsPerPod);
