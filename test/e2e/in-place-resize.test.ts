// In-place pod resize (InPlacePodVerticalScaling, GA), as a user resizes a running pod: the
// resize subresource (what `kubectl patch --subresource resize` writes) changes a container's
// cpu and memory, and the kubelet applies the change to the running container without
// restarting it. Checked where a user and an operator look: the pod's status (the resources
// the container runs with, the requests the kubelet allocated, observedGeneration, no resize
// condition left), its container (the same containerID, restartCount 0, the same start), and
// the cgroup files of the container and of its pod (cgroupfs, cgroup v1, as the stack's other
// tests read them). Upstream's equivalent: test/e2e/common/node/pod_resize.go.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { V1Pod } from '@kubernetes/client-node';
import { clients, ensureStack, eventually, kubectl, nodeName, podSpec, seriesValue, withNamespace } from './stack.ts';

before(() => ensureStack());

const Mi = 2 ** 20;
/** The client's model objects as plain JSON, to compare with literals. */
const plain = (v: unknown) => JSON.parse(JSON.stringify(v ?? null));

test("a running container's cpu and memory resized in place: status, allocation and cgroups change, the container is not restarted", () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    const body = podSpec('resized');
    // Burstable before and after (a resize may not change the QoS class): requests below limits.
    body.spec!.containers[0]!.resources = {
      requests: { cpu: '100m', memory: '32Mi' },
      limits: { cpu: '200m', memory: '64Mi' },
    };
    await core.createNamespacedPod({ namespace: ns, body });
    const before = await eventually('pod resized Running', 60_000, async () => {
      const p = await core.readNamespacedPod({ name: 'resized', namespace: ns });
      return p.status?.phase === 'Running' && p.status.containerStatuses?.[0]?.state?.running ? p : undefined;
    });
    assert.equal(before.status!.qosClass, 'Burstable');
    const uid = before.metadata!.uid!;
    const c0 = before.status!.containerStatuses![0]!;
    const id = c0.containerID!.replace(/^\w+:\/\//, '');
    // The pod's cgroup and its container's below it (upstream's cgroupfs names, as containers.test.ts reads them).
    const podDir = (ctl: string) => `/sys/fs/cgroup/${ctl}/kubepods/burstable/pod${uid}`;
    const read = (path: string) => readFileSync(path, 'utf8').trim();
    const cgroups = () => ({
      container: {
        shares: read(`${podDir('cpu')}/${id}/cpu.shares`),
        quota: read(`${podDir('cpu')}/${id}/cpu.cfs_quota_us`),
        memory: read(`${podDir('memory')}/${id}/memory.limit_in_bytes`),
      },
      pod: {
        shares: read(`${podDir('cpu')}/cpu.shares`),
        quota: read(`${podDir('cpu')}/cpu.cfs_quota_us`),
        memory: read(`${podDir('memory')}/memory.limit_in_bytes`),
      },
    });
    // 100m -> 102 shares (upstream's MilliCPUToShares), 200m -> 20000 us of a 100000 us period.
    const was = { shares: '102', quota: '20000', memory: String(64 * Mi) };
    assert.deepEqual(cgroups(), { container: was, pod: was }, 'the cgroups before the resize');
    assert.deepEqual(plain(c0.allocatedResources), { cpu: '100m', memory: '32Mi' }, 'allocated before the resize');
    assert.deepEqual(plain(c0.resources), { requests: { cpu: '100m', memory: '32Mi' }, limits: { cpu: '200m', memory: '64Mi' } });

    // The resize, through the pod's resize subresource.
    const scrape = () => kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/metrics`);
    const m0 = scrape();
    const resources = { requests: { cpu: '150m', memory: '48Mi' }, limits: { cpu: '300m', memory: '96Mi' } };
    const current = await core.readNamespacedPod({ name: 'resized', namespace: ns });
    current.spec!.containers[0]!.resources = resources;
    const written = await core.replaceNamespacedPodResize({ name: 'resized', namespace: ns, body: current });
    const generation = written.metadata!.generation!;
    assert.ok(generation > before.metadata!.generation!, `the resize is a new generation (${generation})`);

    // Done: the kubelet has seen the new generation, runs the container with the new resources,
    // and no resize is pending or in progress.
    const after = await eventually(
      'the resize done in the status',
      60_000,
      async () => {
        const p: V1Pod = await core.readNamespacedPod({ name: 'resized', namespace: ns });
        const c = p.status?.containerStatuses?.[0];
        const resizing = p.status?.conditions?.some((x) => x.type === 'PodResizePending' || x.type === 'PodResizeInProgress');
        return (p.status?.observedGeneration ?? 0) >= generation && c?.resources?.limits?.cpu === '300m' && !resizing ? p : undefined;
      },
      500,
    );
    const c1 = after.status!.containerStatuses![0]!;
    assert.deepEqual(plain(c1.resources), resources, 'status.containerStatuses[0].resources: what the container runs with now');
    assert.deepEqual(plain(c1.allocatedResources), resources.requests, 'status.containerStatuses[0].allocatedResources: the new requests');
    assert.equal(after.status!.qosClass, 'Burstable');
    // Not restarted: the same container, started once.
    assert.equal(c1.containerID, c0.containerID, 'the same container');
    assert.equal(c1.restartCount, 0);
    assert.equal(String(c1.state?.running?.startedAt), String(c0.state?.running?.startedAt), 'the same start');
    assert.equal(c1.lastState?.terminated, undefined, 'no termination');

    // The cgroups: 150m -> 153 shares, 300m -> 30000 us, 96Mi; the pod's as its only container's.
    const now = { shares: '153', quota: '30000', memory: String(96 * Mi) };
    assert.deepEqual(cgroups(), { container: now, pod: now }, 'the cgroups after the resize');

    // The metrics as upstream counts them: each requirement's operation, the resize's actuation, no resize left.
    const m1 = scrape();
    const grew = (series: string) => seriesValue(m1, series) - seriesValue(m0, series);
    for (const [resource, requirement] of [
      ['memory', 'requests'],
      ['memory', 'limits'],
      ['cpu', 'requests'],
      ['cpu', 'limits'],
    ])
      assert.equal(
        grew(`kubelet_container_requested_resizes_total{resource="${resource}",requirement="${requirement}",operation="increase"}`),
        1,
        `${resource} ${requirement} increase`,
      );
    assert.ok(grew('kubelet_pod_resize_duration_milliseconds_count{success="true"}') >= 1, 'the resize actuated');
    assert.match(m1, /^kubelet_pod_in_progress_resizes 0$/m);
  }));

/** Millicores of a quantity ("1500m", "2"). */
const milli = (q: string | undefined) => (q?.endsWith('m') ? Number(q.slice(0, -1)) : Math.round(Number(q ?? 0) * 1000));

// A resize that does not fit next to the other pods waits (PodResizePending, Deferred), and is
// tried again when a pod goes, as upstream's RetryPendingResizes: not at the next sync, not
// minutes later.
test('a Deferred resize is accepted as soon as the pod holding the room goes, counted by its retry trigger', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    const node = await core.readNode({ name: nodeName() });
    const onNode = await core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${nodeName()}` });
    const used = onNode.items
      .filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed')
      .flatMap((p) => p.spec!.containers)
      .reduce((n, c) => n + milli(c.resources?.requests?.cpu), 0);
    const free = milli(node.status!.allocatable!.cpu) - used;
    assert.ok(free >= 400, `room for the test on the node (${free}m free)`);
    const withCPU = (name: string, cpu: string) => {
      const body = podSpec(name, { terminationGracePeriodSeconds: 1 });
      body.spec!.containers[0]!.resources = { requests: { cpu, memory: '16Mi' } };
      return body;
    };
    // The hog leaves 200m; grow takes 100m of it, then asks 400m.
    await core.createNamespacedPod({ namespace: ns, body: withCPU('hog', `${free - 200}m`) });
    await core.createNamespacedPod({ namespace: ns, body: withCPU('grow', '100m') });
    for (const name of ['hog', 'grow'])
      await eventually(
        `${name} Running`,
        60_000,
        async () => (await core.readNamespacedPod({ name, namespace: ns })).status?.phase === 'Running',
      );
    const scrape = () => kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/metrics`);
    const accepted = (m: string) =>
      ['pods_removed', 'pod_terminated'].reduce(
        (n, t) => n + seriesValue(m, `kubelet_pod_deferred_accepted_resizes_total{retry_trigger="${t}"}`),
        0,
      );
    const before = accepted(scrape());
    const current = await core.readNamespacedPod({ name: 'grow', namespace: ns });
    current.spec!.containers[0]!.resources = { requests: { cpu: '400m', memory: '16Mi' } };
    const generation = (await core.replaceNamespacedPodResize({ name: 'grow', namespace: ns, body: current })).metadata!.generation!;
    const pending = await eventually('PodResizePending Deferred', 30_000, async () =>
      (await core.readNamespacedPod({ name: 'grow', namespace: ns })).status?.conditions?.find(
        (c) => c.type === 'PodResizePending' && c.reason === 'Deferred' && c.observedGeneration === generation,
      ),
    );
    assert.match(pending.message ?? '', /^Node didn't have enough resource: cpu, requested: 400, used: \d+, capacity: \d+$/);

    const deleted = Date.now();
    await core.deleteNamespacedPod({ name: 'hog', namespace: ns });
    await eventually(
      'the resize allocated',
      30_000,
      async () => {
        const p = await core.readNamespacedPod({ name: 'grow', namespace: ns });
        const pendingNow = p.status?.conditions?.some((c) => c.type === 'PodResizePending');
        return !pendingNow && p.status?.containerStatuses?.[0]?.allocatedResources?.cpu === '400m';
      },
      250,
    );
    const took = Date.now() - deleted;
    // The hog stops within its 1 s grace; the retry follows at once (a sync alone never tries again).
    assert.ok(took < 15_000, `accepted ${took} ms after the delete`);
    assert.equal(accepted(scrape()) - before, 1, 'kubelet_pod_deferred_accepted_resizes_total counts it by its trigger');
  }));
