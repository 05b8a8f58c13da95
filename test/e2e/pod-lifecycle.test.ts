// A pod's life on kubelet-ts as a user sees it: it starts, reports status, ends,
// and is deleted without leaving anything behind in containerd.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  clients,
  crictl,
  ensureStack,
  eventually,
  inCIDR,
  kubectl,
  kubectlInput,
  nodeName,
  podSpec,
  restartKubelet,
  withNamespace,
  BUSYBOX,
  CLUSTER_CIDR,
  NODE_IP,
} from './stack.ts';

before(() => ensureStack());

test('a busybox pod reaches Running with a pod IP in the cluster CIDR within 20 s', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    const created = Date.now();
    await core.createNamespacedPod({ namespace: ns, body: podSpec('sleeper') });
    const pod = await eventually('pod Running', 20_000, async () => {
      const p = await core.readNamespacedPod({ name: 'sleeper', namespace: ns });
      return p.status?.phase === 'Running' && p.status.containerStatuses?.[0]?.ready ? p : undefined;
    });
    const startup = Date.now() - created;
    const st = pod.status!;
    assert.ok(st.podIP && inCIDR(st.podIP, CLUSTER_CIDR), `podIP ${st.podIP} inside ${CLUSTER_CIDR}`);
    assert.ok(
      inCIDR(st.podIP!, pod.spec!.nodeName ? (await core.readNode({ name: pod.spec!.nodeName })).spec!.podCIDR! : CLUSTER_CIDR),
      'podIP inside the node podCIDR',
    );
    assert.equal(st.hostIP, NODE_IP);
    const c = st.containerStatuses![0]!;
    assert.equal(c.started, true);
    assert.match(c.containerID!, /^containerd:\/\/[0-9a-f]{64}$/);
    assert.ok(c.imageID, 'imageID set');
    assert.ok(c.state?.running?.startedAt, 'running state with startedAt');
    assert.equal(c.restartCount, 0);
    for (const t of ['PodReadyToStartContainers', 'Initialized', 'ContainersReady', 'Ready', 'PodScheduled']) {
      assert.equal(st.conditions!.find((x) => x.type === t)?.status, 'True', t);
    }
    assert.equal(st.qosClass, 'BestEffort');
    const events = await core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=sleeper' });
    const reasons = events.items.map((e) => e.reason);
    for (const r of ['Pulled', 'Created', 'Started']) assert.ok(reasons.includes(r), `event ${r} in ${reasons.join(',')}`);
    // Upstream's words, the container named by the event's fieldPath.
    const createdEvent = events.items.find((e) => e.reason === 'Created');
    assert.deepEqual([createdEvent?.message, createdEvent?.involvedObject.fieldPath], ['Container created', 'spec.containers{main}']);
    assert.equal(events.items.find((e) => e.reason === 'Started')?.message, 'Container started');
    console.log(`# pod startup (create -> Running seen by polling): ${startup} ms`);
  }));

test('a pod bound by spec.nodeName (no scheduler) shows PodScheduled True, as the upstream kubelet sets it', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedPod({ namespace: ns, body: podSpec('bound', { nodeName: nodeName() }) });
    const pod = await eventually('pod Running', 20_000, async () => {
      const p = await core.readNamespacedPod({ name: 'bound', namespace: ns });
      return p.status?.phase === 'Running' ? p : undefined;
    });
    const scheduled = pod.status!.conditions!.filter((c) => c.type === 'PodScheduled');
    assert.deepEqual(
      scheduled.map((c) => c.status),
      ['True'],
    );
  }));

// upstream's PodConditionByKubelet and generateAPIPodStatus: with the gate off the kubelet writes
// no PodReadyToStartContainers condition, and leaves alone one it wrote before the gate went off.
test('PodReadyToStartContainersCondition=false: a new pod has no PodReadyToStartContainers condition; one written before stays as it was', (t) =>
  withNamespace(async (ns) => {
    const { core } = clients();
    const conditions = async (name: string) => (await core.readNamespacedPod({ name, namespace: ns })).status?.conditions ?? [];
    await core.createNamespacedPod({ namespace: ns, body: podSpec('before') });
    await eventually('pod before Ready', 30_000, async () =>
      (await conditions('before')).some((c) => c.type === 'Ready' && c.status === 'True'),
    );
    const written = (await conditions('before')).find((c) => c.type === 'PodReadyToStartContainers');
    assert.equal(written?.status, 'True', 'written with the gate on (its default)');
    t.after(() => restartKubelet());
    restartKubelet(undefined, { KTS_FEATURE_GATES: 'PodReadyToStartContainersCondition=false' });
    await core.createNamespacedPod({ namespace: ns, body: podSpec('after') });
    const after = await eventually('pod after Ready', 30_000, async () => {
      const c = await conditions('after');
      return c.some((x) => x.type === 'Ready' && x.status === 'True') ? c : undefined;
    });
    assert.deepEqual(after.map((c) => c.type).sort(), ['ContainersReady', 'Initialized', 'PodScheduled', 'Ready']);
    // The first pod, synced again by the restarted kubelet: its old condition is the apiserver's now.
    assert.deepEqual(
      (await conditions('before')).find((c) => c.type === 'PodReadyToStartContainers'),
      written,
      'left as the kubelet wrote it before the gate went off',
    );
  }));

// upstream's GeneratePodHostNameAndDomain: spec.hostnameOverride is looked at only with the gate on.
test('HostnameOverride=false: a pod with hostnameOverride gets its spec.hostname, in the kernel and /etc/hosts', (t) =>
  withNamespace(async (ns) => {
    t.after(() => restartKubelet());
    restartKubelet(undefined, { KTS_FEATURE_GATES: 'HostnameOverride=false' });
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'override', namespace: ns },
      spec: { ...podSpec('override').spec, hostname: 'beta', subdomain: 'sub', hostnameOverride: 'over.example' },
    };
    kubectlInput(JSON.stringify(pod), 'apply', '-f', '-');
    assert.equal(
      kubectl('-n', ns, 'get', 'pod', 'override', '-o', 'jsonpath={.spec.hostnameOverride}'),
      'over.example',
      'the apiserver kept it',
    );
    await eventually(
      'pod override Running',
      30_000,
      async () => kubectl('-n', ns, 'get', 'pod', 'override', '-o', 'jsonpath={.status.phase}') === 'Running',
    );
    assert.equal(kubectl('-n', ns, 'exec', 'override', '--', 'hostname').trim(), 'beta');
    assert.match(
      kubectl('-n', ns, 'exec', 'override', '--', 'cat', '/etc/hosts'),
      new RegExp(`\\sbeta\\.sub\\.${ns}\\.svc\\.cluster\\.local\\s+beta\\n`),
    );
  }));

test('kubectl delete completes and leaves no container or sandbox in containerd', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedPod({ namespace: ns, body: podSpec('doomed') });
    const pod = await eventually('pod Running', 20_000, async () => {
      const p = await core.readNamespacedPod({ name: 'doomed', namespace: ns });
      return p.status?.phase === 'Running' ? p : undefined;
    });
    const uid = pod.metadata!.uid!;
    assert.notEqual(crictl('ps', '-q', '--label', `io.kubernetes.pod.uid=${uid}`).trim(), '', 'container runs in containerd');
    const t0 = Date.now();
    kubectl('delete', 'pod', 'doomed', '-n', ns, '--wait=true', '--timeout=60s');
    const took = Date.now() - t0;
    // sleep as PID 1 ignores SIGTERM: the kubelet waits out the 5 s grace period, then kills.
    assert.ok(took >= 4_500 && took < 30_000, `delete took ${took} ms, want the 5 s grace period honoured`);
    await assert.rejects(core.readNamespacedPod({ name: 'doomed', namespace: ns }), /404|not found/i);
    assert.equal(crictl('ps', '-a', '-q', '--label', `io.kubernetes.pod.uid=${uid}`).trim(), '', 'no container left');
    assert.equal(crictl('pods', '-q', '--label', `io.kubernetes.pod.uid=${uid}`).trim(), '', 'no sandbox left');
  }));

test('an image that cannot be pulled shows ErrImagePull or ImagePullBackOff', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedPod({ namespace: ns, body: podSpec('nopull', {}, 'registry.invalid/kubelet-ts/absent:1.0') });
    const reason = await eventually('a waiting reason about the image', 30_000, async () => {
      const p = await core.readNamespacedPod({ name: 'nopull', namespace: ns });
      const r = p.status?.containerStatuses?.[0]?.state?.waiting?.reason;
      return r === 'ErrImagePull' || r === 'ImagePullBackOff' ? r : undefined;
    });
    assert.ok(reason);
    const p = await core.readNamespacedPod({ name: 'nopull', namespace: ns });
    assert.equal(p.status!.phase, 'Pending');
    const events = await core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=nopull' });
    assert.ok(
      events.items.some((e) => e.reason === 'Failed' && /Failed to pull image "registry.invalid/.test(e.message ?? '')),
      'a Failed event names the image',
    );
    // In the back-off the waiting state still says what failed (upstream's prevPullErrMsg).
    const backOff = await eventually('ImagePullBackOff', 60_000, async () => {
      const w = (await core.readNamespacedPod({ name: 'nopull', namespace: ns })).status?.containerStatuses?.[0]?.state?.waiting;
      return w?.reason === 'ImagePullBackOff' ? w : undefined;
    });
    assert.match(backOff.message ?? '', /^Back-off pulling image "registry\.invalid\/kubelet-ts\/absent:1\.0": ErrImagePull: .+/);
  }));

test('an image name that is not a valid reference waits with InvalidImageName, and nothing is pulled', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedPod({ namespace: ns, body: podSpec('badname', {}, 'Registry.invalid/UPPER/case:1') });
    const waiting = await eventually('InvalidImageName', 30_000, async () => {
      const w = (await core.readNamespacedPod({ name: 'badname', namespace: ns })).status?.containerStatuses?.[0]?.state?.waiting;
      return w?.reason === 'InvalidImageName' ? w : undefined;
    });
    assert.match(waiting.message ?? '', /couldn't parse image name "Registry.invalid\/UPPER\/case:1": invalid reference format/);
    const reasons = (await core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=badname' })).items.map(
      (e) => e.reason,
    );
    assert.ok(reasons.includes('InspectFailed'), reasons.join(','));
    assert.ok(!reasons.includes('Pulling'), 'no pull tried');
  }));

test('a pod whose container exits 0 with restartPolicy Never ends Succeeded, one exiting 3 ends Failed', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    const once = (name: string, code: number) => ({
      metadata: { name },
      spec: {
        restartPolicy: 'Never',
        containers: [{ name: 'main', image: 'docker.io/library/busybox:1.36', command: ['sh', '-c', `exit ${code}`] }],
      },
    });
    await core.createNamespacedPod({ namespace: ns, body: once('ok', 0) });
    await core.createNamespacedPod({ namespace: ns, body: once('bad', 3) });
    for (const [name, phase, code, reason] of [
      ['ok', 'Succeeded', 0, 'Completed'],
      ['bad', 'Failed', 3, 'Error'],
    ] as const) {
      const p = await eventually(`${name} ${phase}`, 30_000, async () => {
        const x = await core.readNamespacedPod({ name, namespace: ns });
        return x.status?.phase === phase ? x : undefined;
      });
      const t = p.status!.containerStatuses![0]!.state!.terminated!;
      assert.deepEqual([t.exitCode, t.reason], [code, reason], name);
    }
  }));

test('admission: a pod bound past the scheduler that does not fit fails with OutOfcpu; a host port clash with NodePorts', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    const node = nodeName();
    const failed = async (name: string) =>
      eventually(`${name} Failed`, 20_000, async () => {
        const p = await core.readNamespacedPod({ name, namespace: ns });
        return p.status?.phase === 'Failed' ? p : undefined;
      });
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        ...podSpec('hungry'),
        spec: {
          ...podSpec('hungry').spec!,
          nodeName: node,
          containers: [{ name: 'main', image: BUSYBOX, command: ['sleep', '3600'], resources: { requests: { cpu: '64' } } }],
        },
      },
    });
    const hungry = await failed('hungry');
    assert.equal(hungry.status!.reason, 'OutOfcpu');
    assert.match(
      hungry.status!.message!,
      /^Pod was rejected: Node didn't have enough resource: cpu, requested: 64000, used: \d+, capacity: \d+$/,
    );
    const events = await core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=hungry' });
    assert.ok(
      events.items.some((e) => e.reason === 'OutOfcpu' && e.type === 'Warning'),
      'an OutOfcpu event',
    );

    const withPort = (name: string) => ({
      metadata: { name },
      spec: {
        nodeName: node,
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'main', image: BUSYBOX, command: ['sleep', '3600'], ports: [{ containerPort: 80, hostPort: 18888 }] }],
      },
    });
    await core.createNamespacedPod({ namespace: ns, body: withPort('first') });
    await eventually(
      'first Running',
      20_000,
      async () => (await core.readNamespacedPod({ name: 'first', namespace: ns })).status?.phase === 'Running',
    );
    await core.createNamespacedPod({ namespace: ns, body: withPort('second') });
    assert.equal((await failed('second')).status!.reason, 'NodePorts');
    // A rejected pod is never started: no sandbox for it.
    const uid = (await core.readNamespacedPod({ name: 'second', namespace: ns })).metadata!.uid!;
    assert.equal(crictl('pods', '-q', '--label', `io.kubernetes.pod.uid=${uid}`).trim(), '');
  }));

test('activeDeadlineSeconds: the pod fails with DeadlineExceeded and its containers stop', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedPod({
      namespace: ns,
      body: { ...podSpec('brief'), spec: { ...podSpec('brief').spec!, activeDeadlineSeconds: 3 } },
    });
    const p = await eventually(
      'brief Failed',
      30_000,
      async () => {
        const x = await core.readNamespacedPod({ name: 'brief', namespace: ns });
        return x.status?.phase === 'Failed' ? x : undefined;
      },
      250,
    );
    assert.equal(p.status!.reason, 'DeadlineExceeded');
    assert.equal(p.status!.message, 'Pod was active on the node longer than the specified deadline');
    await eventually(
      'containers stopped',
      20_000,
      async () => crictl('ps', '-q', '--label', `io.kubernetes.pod.uid=${p.metadata!.uid}`).trim() === '',
    );
  }));
