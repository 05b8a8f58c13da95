// kubelet-ts on a node whose init is systemd, with the systemd cgroup driver (issue 41): the
// node kts-s1 of the local cluster is a podman container booting systemd, containerd 2 with
// SystemdCgroup = true as its unit, kubelet-ts as kubelet.service joined by kubeadm with
// kubeadm's default cgroupDriver: systemd (hack/cluster/systemd.sh). Checked as an operator
// would: kubectl, the node's cgroup files, systemctl.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { BUSYBOX, eventually } from './stack.ts';
import { ck, ckJSON, ensureCluster, inNode, joinNode, nodeKubelet, WORKERS } from './cluster.ts';
import { SMOKE, buildConformance, runSmoke } from './smoke.ts';

const NODE = 'kts-s1';
const ns = `sd-${randomBytes(3).toString('hex')}`;

before(() => {
  ensureCluster();
  joinNode(NODE);
  ck(['create', 'namespace', ns]);
});
after(() => {
  ck(['delete', 'namespace', ns, '--wait=false']);
});

type Pod = { metadata: { name: string; uid: string }; spec: any; status: any };
const getPod = (name: string) => ckJSON<Pod>('-n', ns, 'get', 'pod', name);
const running = (p: Pod) => p.status.phase === 'Running' && (p.status.containerStatuses ?? []).every((c: any) => c.ready);
const apply = (obj: object) => ck(['-n', ns, 'apply', '-f', '-'], JSON.stringify(obj));

/** A sleeping busybox pod on the systemd node, with these container resources. */
function sleeper(name: string, resources: object = {}, spec: object = {}) {
  apply({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      nodeSelector: { 'kubernetes.io/hostname': NODE },
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'c', image: BUSYBOX, command: ['sleep', '3600'], resources }],
      ...spec,
    },
  });
}
const runningPod = (name: string) =>
  eventually(`${name} running on ${NODE}`, 90_000, async () => (running(getPod(name)) ? getPod(name) : undefined));

/** The pod's slice as upstream's systemd cgroup manager names it (dashes of the UID as underscores). */
function podSlice(qos: 'guaranteed' | 'burstable' | 'besteffort', uid: string): string {
  const u = uid.replaceAll('-', '_');
  return qos === 'guaranteed'
    ? `/kubepods.slice/kubepods-pod${u}.slice`
    : `/kubepods.slice/kubepods-${qos}.slice/kubepods-${qos}-pod${u}.slice`;
}
/** A cgroup v1 file of the node (its cgroup namespace's root is its /sys/fs/cgroup/<controller>). */
const cgroupFile = (controller: string, path: string, file: string) =>
  inNode(NODE, 'cat', `/sys/fs/cgroup/${controller}${path}/${file}`).trim();
const exists = (path: string) => inNode(NODE, 'sh', '-c', `test -d /sys/fs/cgroup/memory${path} && echo yes || echo no`).trim() === 'yes';
/** What systemd itself holds for the unit (set over D-Bus, not only written to the files). */
const unitProperty = (unit: string, prop: string) => inNode(NODE, 'systemctl', 'show', '-p', prop, '--value', unit).trim();
const unitOf = (path: string) => path.split('/').at(-1)!;

test('the node runs kubelet-ts under systemd with the systemd cgroup driver, as kubeadm configured it', () => {
  const node = ckJSON<any>('get', 'node', NODE);
  assert.equal(node.status.conditions.find((c: any) => c.type === 'Ready')?.status, 'True');
  assert.equal(inNode(NODE, 'systemctl', 'is-active', 'kubelet.service', 'containerd.service').trim(), 'active\nactive');
  const configz = JSON.parse(ck(['get', '--raw', `/api/v1/nodes/${NODE}/proxy/configz`]));
  assert.equal(configz.kubeletconfig.cgroupDriver, 'systemd');
  // Node allocatable is enforced on kubepods.slice: its memory limit is the node's capacity
  // less the reservations (none in kubeadm's config), in the files and in systemd's unit.
  const capacity = Number(node.status.capacity.memory.replace(/Ki$/, '')) * 1024;
  assert.equal(Number(cgroupFile('memory', '/kubepods.slice', 'memory.limit_in_bytes')), capacity);
  assert.equal(Number(unitProperty('kubepods.slice', 'MemoryLimit')), capacity);
});

test('pods of each QoS class run in their slices with their limits; systemctl lists their scopes; a deleted pod takes its slice', async () => {
  sleeper('guaranteed', { requests: { cpu: '200m', memory: '64Mi' }, limits: { cpu: '200m', memory: '64Mi' } });
  sleeper('burstable', { requests: { cpu: '100m', memory: '32Mi' }, limits: { memory: '128Mi' } });
  sleeper('besteffort');
  const g = await runningPod('guaranteed'),
    b = await runningPod('burstable'),
    e = await runningPod('besteffort');
  const rows = [
    [podSlice('guaranteed', g.metadata.uid), '204', '20000', String(64 * 2 ** 20)],
    [podSlice('burstable', b.metadata.uid), '102', '-1', String(128 * 2 ** 20)],
    [podSlice('besteffort', e.metadata.uid), '2', '-1', 'unlimited'],
  ];
  for (const [slice, shares, quota, memory] of rows) {
    const limit = Number(cgroupFile('memory', slice!, 'memory.limit_in_bytes'));
    assert.deepEqual(
      [
        cgroupFile('cpu', slice!, 'cpu.shares'),
        cgroupFile('cpu', slice!, 'cpu.cfs_quota_us'),
        limit > 2 ** 62 ? 'unlimited' : String(limit),
      ],
      [shares, quota, memory],
      slice,
    );
    assert.equal(unitProperty(unitOf(slice!), 'CPUShares'), shares, `${slice}: systemd's own CPUShares`);
  }
  // The container's scope below the pod's slice, with the container's own limit.
  const id = b.status.containerStatuses[0].containerID.replace('containerd://', '');
  const scope = `${podSlice('burstable', b.metadata.uid)}/cri-containerd-${id}.scope`;
  assert.equal(cgroupFile('memory', scope, 'memory.limit_in_bytes'), String(128 * 2 ** 20));
  const status = inNode(NODE, 'systemctl', 'status', '--no-pager', 'kubepods-burstable.slice');
  assert.match(status, new RegExp(`cri-containerd-${id}\\.scope`), 'systemctl status lists the container scope');
  assert.match(status, /sleep 3600/);
  // The QoS slice's weight covers its pods' requests (the node's other burstable pods add theirs).
  assert.ok(Number(cgroupFile('cpu', '/kubepods.slice/kubepods-burstable.slice', 'cpu.shares')) >= 102);
  assert.equal(cgroupFile('cpu', '/kubepods.slice/kubepods-besteffort.slice', 'cpu.shares'), '2');

  ck(['-n', ns, 'delete', 'pod', 'besteffort', '--wait=true', '--timeout=60s']);
  const gone = podSlice('besteffort', e.metadata.uid);
  await eventually('the deleted pod slice gone', 30_000, async () => !exists(gone));
  assert.match(inNode(NODE, 'sh', '-c', `systemctl list-units --all --no-legend ${unitOf(gone)} | wc -l`).trim(), /^0$/, 'no unit left');
});

test("stats: /stats/summary and /metrics/cadvisor read the pods' slices and the containers' scopes", async () => {
  const g = getPod('guaranteed');
  const id = g.status.containerStatuses[0].containerID.replace('containerd://', '');
  const proxy = (path: string) => ck(['get', '--raw', `/api/v1/nodes/${NODE}/proxy${path}`]);
  // Stats are sampled every ~10 s.
  const pod = await eventually(
    'the pod in /stats/summary',
    40_000,
    async () => JSON.parse(proxy('/stats/summary')).pods.find((p: any) => p.podRef.uid === g.metadata.uid && p.containers.length),
    2000,
  );
  assert.ok(pod.memory.workingSetBytes > 0 && pod.cpu.usageCoreNanoSeconds > 0, 'the pod slice read');
  assert.ok(pod.containers[0].memory.workingSetBytes > 0, 'the container scope read');
  assert.equal(pod.network.name, 'eth0', "the sandbox scope's pause process found, and its network namespace");
  const summary = JSON.parse(proxy('/stats/summary'));
  assert.ok(
    summary.node.systemContainers.some((c: any) => c.name === 'pods' && c.memory.workingSetBytes > 0),
    'kubepods.slice as the system container "pods"',
  );
  const cadvisor = proxy('/metrics/cadvisor');
  const slice = podSlice('guaranteed', g.metadata.uid);
  assert.match(cadvisor, new RegExp(`container_memory_working_set_bytes\\{[^}]*id="${slice}/cri-containerd-${id}\\.scope"`));
  assert.match(cadvisor, new RegExp(`container_memory_working_set_bytes\\{[^}]*id="${slice}"`));
});

test('an in-place resize changes the pod slice, in the files and in systemd', async () => {
  sleeper('resized', { requests: { cpu: '100m', memory: '32Mi' }, limits: { cpu: '200m', memory: '64Mi' } });
  const p = await runningPod('resized');
  const slice = podSlice('burstable', p.metadata.uid);
  assert.equal(cgroupFile('memory', slice, 'memory.limit_in_bytes'), String(64 * 2 ** 20));
  ck([
    '-n',
    ns,
    'patch',
    'pod',
    'resized',
    '--subresource',
    'resize',
    '--type',
    'merge',
    '-p',
    JSON.stringify({
      spec: { containers: [{ name: 'c', resources: { requests: { cpu: '150m' }, limits: { cpu: '300m', memory: '96Mi' } } }] },
    }),
  ]);
  await eventually('the slice resized', 60_000, async () => cgroupFile('memory', slice, 'memory.limit_in_bytes') === String(96 * 2 ** 20));
  assert.equal(cgroupFile('cpu', slice, 'cpu.cfs_quota_us'), '30000');
  assert.equal(cgroupFile('cpu', slice, 'cpu.shares'), '153');
  await eventually('systemd holds the new limit', 10_000, async () => unitProperty(unitOf(slice), 'MemoryLimit') === String(96 * 2 ** 20));
  assert.equal(getPod('resized').status.containerStatuses[0].restartCount, 0);
});

test('a restarted kubelet adopts the running pods; a pod deleted while it was down is cleaned up, slice and all', async () => {
  sleeper('kept', { requests: { cpu: '50m' } });
  sleeper('orphan', { requests: { cpu: '50m' } });
  const kept = await runningPod('kept'),
    orphan = await runningPod('orphan');
  const keptID = kept.status.containerStatuses[0].containerID;
  nodeKubelet(NODE, 'stop');
  // Deleted for good while the kubelet is down: only the node knows the pod any more.
  ck(['-n', ns, 'delete', 'pod', 'orphan', '--force', '--grace-period=0', '--wait=false']);
  nodeKubelet(NODE, 'start');
  await eventually(`${NODE} Ready again`, 90_000, async () =>
    ckJSON<any>('get', 'node', NODE).status.conditions.some((c: any) => c.type === 'Ready' && c.status === 'True'),
  );
  const orphanSlice = podSlice('burstable', orphan.metadata.uid);
  await eventually('the orphaned pod slice gone', 90_000, async () => !exists(orphanSlice));
  assert.equal(inNode(NODE, 'crictl', 'ps', '-q', '--label', `io.kubernetes.pod.uid=${orphan.metadata.uid}`).trim(), '');
  const after = getPod('kept');
  assert.ok(running(after));
  assert.equal(after.status.containerStatuses[0].containerID, keptID, 'the same container');
  assert.equal(after.status.containerStatuses[0].restartCount, 0);
  assert.ok(exists(podSlice('burstable', kept.metadata.uid)));
});

test('eviction: a pod writing past its ephemeral-storage limit is evicted and its slice goes', async () => {
  // A container that writes 20 MiB into its writable layer, with a limit of 5 MiB.
  apply({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'hog' },
    spec: {
      nodeSelector: { 'kubernetes.io/hostname': NODE },
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'c',
          image: BUSYBOX,
          command: ['sh', '-c', 'dd if=/dev/zero of=/fill bs=1M count=20 && sleep 3600'],
          resources: { limits: { 'ephemeral-storage': '5Mi' } },
        },
      ],
    },
  });
  const p = await eventually('hog evicted', 120_000, async () => {
    const x = getPod('hog');
    return x.status.phase === 'Failed' ? x : undefined;
  });
  assert.equal(p.status.reason, 'Evicted');
  await eventually('the evicted pod slice gone', 60_000, async () => !exists(podSlice('besteffort', p.metadata.uid)));
});

test('preemption: a higher-priority pod takes the node from a lower one, whose slice goes', async (t) => {
  ck(
    ['apply', '-f', '-'],
    JSON.stringify({ apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: `${ns}-high` }, value: 1_000_000 }),
  );
  t.after(() => {
    // The node's CPU back for the tests after this one.
    ck(['-n', ns, 'delete', 'pod', 'high', 'low', '--ignore-not-found', '--wait=true']);
    ck(['delete', 'priorityclass', `${ns}-high`, '--ignore-not-found']);
  });
  // What is left of the node's CPU, nearly all taken by the low-priority pod; the high one asks as much.
  const node = ckJSON<any>('get', 'node', NODE);
  const allocatable = Number(node.status.allocatable.cpu.replace(/m$/, '')) * (node.status.allocatable.cpu.endsWith('m') ? 1 : 1000);
  const requested = ckJSON<{ items: any[] }>(
    'get',
    'pods',
    '-A',
    '--field-selector',
    `spec.nodeName=${NODE},status.phase!=Succeeded,status.phase!=Failed`,
  )
    .items.flatMap((x) => x.spec.containers)
    .reduce((n: number, c: any) => {
      const cpu = c.resources?.requests?.cpu as string | undefined;
      return n + (!cpu ? 0 : cpu.endsWith('m') ? Number(cpu.slice(0, -1)) : Number(cpu) * 1000);
    }, 0);
  const free = allocatable - requested;
  assert.ok(free > 200, `${NODE} has ${free}m CPU free`);
  const ask = { requests: { cpu: `${free - 50}m` } };
  sleeper('low', ask);
  const low = await runningPod('low');
  sleeper('high', ask, { priorityClassName: `${ns}-high` });
  await runningPod('high');
  await eventually('the preempted pod slice gone', 60_000, async () => !exists(podSlice('burstable', low.metadata.uid)));
});

test('the conformance smoke passes with the systemd node the only worker', { timeout: 25 * 60_000 }, (t) => {
  buildConformance();
  // The earlier tests' pods gone: the smoke's must fit on this one node.
  ck(['-n', ns, 'delete', 'pods', '--all', '--wait=true', '--timeout=120s']);
  // The other workers cordoned: every pod the tests make lands on the systemd node.
  t.after(() => {
    for (const w of WORKERS) ck(['uncordon', w]);
  });
  for (const w of WORKERS) ck(['cordon', w]);
  runSmoke('conformance-smoke-systemd', SMOKE.systemd);
});
