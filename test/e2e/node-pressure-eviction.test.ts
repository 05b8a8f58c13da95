// Node pressure as an operator sees it, without endangering the machine: the kubelet is
// restarted with thresholds set relative to what the node has free (memory.available 800 MiB
// below it, nodefs.available 1000 MiB below it, pid.available 300 below it), and a pod
// crosses them. The node reports the condition, the hog is evicted (Failed/Evicted,
// DisruptionTarget, an Event), a Guaranteed pod keeps running, BestEffort pods are refused
// under memory pressure, and the condition clears after the (shortened) transition period.
// Also: critical pod preemption on a full node, and node allocatable on the kubepods cgroup.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  clients,
  ensureStack,
  reimportImages,
  restartKubelet,
  eventually,
  kubectl,
  nodeName,
  podSpec,
  seriesValue,
  withNamespace,
} from './stack.ts';

before(() => ensureStack());

const nodeCondition = async (type: string) =>
  (await clients().core.readNode({ name: nodeName() })).status?.conditions?.find((c) => c.type === type);
const memoryAvailable = () =>
  (
    JSON.parse(kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/stats/summary`)) as {
      node: { memory: { availableBytes: number } };
    }
  ).node.memory.availableBytes;

// Whatever happens, the kubelet goes back to the stack's own configuration. Disk pressure
// reclaims every unused image first: the images the tests use are imported again.
after(async () => {
  restartKubelet();
  reimportImages();
  await eventually('MemoryPressure False again', 60_000, async () => (await nodeCondition('MemoryPressure'))?.status === 'False', 1000);
});

test('a container writing past its ephemeral-storage limit: the pod ends Failed/Evicted, with no node pressure (localStorageEviction)', () =>
  withNamespace(async (ns) => {
    const image = podSpec('x').spec!.containers[0]!.image;
    const command = ['/bin/sh', '-c', 'dd if=/dev/zero of=/file bs=1M count=10; sleep 3600'];
    await clients().core.createNamespacedPod({
      namespace: ns,
      body: podSpec('writer', {
        restartPolicy: 'OnFailure',
        containers: [{ name: 'bar', image, command, resources: { limits: { 'ephemeral-storage': '5Mi' } } }],
      }),
    });
    const p = await failed(ns, 'writer', 90_000);
    assert.equal(p.status?.reason, 'Evicted');
    assert.equal(p.status?.message, 'Pod ephemeral local storage usage exceeds the total limit of containers 5Mi. ');
  }));

test('localStorageCapacityIsolation: false: an emptyDir past its sizeLimit is not evicted, no ephemeral-storage is offered, a pod requesting it is refused', (t) =>
  withNamespace(async (ns) => {
    t.after(() => restartKubelet());
    restartKubelet('localStorageCapacityIsolation: false\n');
    // As upstream's MachineInfo setter, the kubelet stops sending the capacity but does not remove
    // what a registered Node already has: take it off, and it must stay off.
    const node = nodeName();
    kubectl(
      'patch',
      'node',
      node,
      '--subresource=status',
      '--type=json',
      '-p',
      JSON.stringify([
        { op: 'remove', path: '/status/capacity/ephemeral-storage' },
        { op: 'remove', path: '/status/allocatable/ephemeral-storage' },
      ]),
    );
    const image = podSpec('x').spec!.containers[0]!.image;
    await clients().core.createNamespacedPod({
      namespace: ns,
      body: podSpec('filler', {
        containers: [
          {
            name: 'main',
            image,
            command: ['/bin/sh', '-c', 'dd if=/dev/zero of=/data/file bs=1M count=10; sleep 3600'],
            volumeMounts: [{ name: 'data', mountPath: '/data' }],
          },
        ],
        volumes: [{ name: 'data', emptyDir: { sizeLimit: '5Mi' } }],
      }),
    });
    await clients().core.createNamespacedPod({
      namespace: ns,
      body: podSpec('wants-storage', {
        nodeName: node,
        containers: [{ name: 'main', image, resources: { requests: { 'ephemeral-storage': '1Mi' } } }],
      }),
    });
    const refused = await failed(ns, 'wants-storage', 60_000);
    assert.equal(refused.status?.reason, 'OutOfephemeral-storage');
    // Three eviction rounds (10 s each) with the emptyDir over its limit: still running.
    await new Promise((r) => setTimeout(r, 35_000));
    const filler = await clients().core.readNamespacedPod({ name: 'filler', namespace: ns });
    assert.equal(filler.status?.phase, 'Running', filler.status?.message);
    const n = await clients().core.readNode({ name: node });
    assert.equal(n.status?.capacity?.['ephemeral-storage'], undefined);
    assert.equal(
      JSON.parse(kubectl('get', '--raw', `/api/v1/nodes/${node}/proxy/configz`)).kubeletconfig.localStorageCapacityIsolation,
      false,
    );
  }));

test('memory pressure: the BestEffort hog is evicted, the Guaranteed pod stays, BestEffort pods are refused, the condition clears', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    const MiB = 2 ** 20;
    // 1500 MiB under the free memory: once the hog is gone, the node is that far above the
    // threshold, which a build beside the tests (make e2e compiles the conformance binaries at
    // the lowest priority on a cold machine, a GB or more) must not eat into; with 800 MiB it
    // did, and the Guaranteed pod was evicted after the hog.
    const threshold = Math.floor(memoryAvailable() - 1500 * MiB);
    restartKubelet(
      [
        'evictionHard:',
        `  memory.available: "${Math.floor(threshold / 1024)}Ki"`,
        'evictionPressureTransitionPeriod: 30s',
        // Without "pods" here the threshold is not also applied to the pods' share (allocatable):
        // with a threshold this close to the free memory that share would be under it for good.
        'enforceNodeAllocatable: []',
        '',
      ].join('\n'),
    );

    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('guaranteed', {
        containers: [
          {
            name: 'main',
            image: podSpec('x').spec!.containers[0]!.image,
            command: ['sleep', '3600'],
            resources: { requests: { cpu: '50m', memory: '32Mi' }, limits: { cpu: '50m', memory: '32Mi' } },
          },
        ],
      }),
    });
    await eventually(
      'guaranteed Running',
      60_000,
      async () => (await core.readNamespacedPod({ name: 'guaranteed', namespace: ns })).status?.phase === 'Running',
      500,
    );
    assert.equal((await nodeCondition('MemoryPressure'))?.status, 'False', 'no pressure before the hog');

    // Three tmpfs volumes of 900 MiB each (2700 MiB, 1200 past the threshold): a memory-backed
    // emptyDir is sized to the node's allocatable memory, which this threshold (close to the free
    // memory) makes as small as the memory in use plus 1500 MiB; one large file did not always
    // fit (ENOSPC, a restart).
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('hog', {
        containers: [
          {
            name: 'main',
            image: podSpec('x').spec!.containers[0]!.image,
            command: ['sh', '-c', 'for v in a b c; do dd if=/dev/zero of=/$v/zeros bs=1M count=900 || exit 1; done; sleep 3600'],
            volumeMounts: [
              { name: 'a', mountPath: '/a' },
              { name: 'b', mountPath: '/b' },
              { name: 'c', mountPath: '/c' },
            ],
          },
        ],
        volumes: [
          { name: 'a', emptyDir: { medium: 'Memory' } },
          { name: 'b', emptyDir: { medium: 'Memory' } },
          { name: 'c', emptyDir: { medium: 'Memory' } },
        ],
      }),
    });

    const pressure = await eventually(
      'MemoryPressure True',
      60_000,
      async () => {
        const c = await nodeCondition('MemoryPressure');
        return c?.status === 'True' ? c : undefined;
      },
      500,
    );
    assert.equal(pressure.reason, 'KubeletHasInsufficientMemory');

    const hog = await failed(ns, 'hog', 60_000);
    assert.equal(hog.status?.reason, 'Evicted');
    assert.match(
      hog.status?.message ?? '',
      /^The node was low on resource: memory\. Threshold quantity: \S+, available: \S+\. Container main was using \S+, request is 0, has larger consumption of memory\. $/,
    );
    const disruption = hog.status?.conditions?.find((c) => c.type === 'DisruptionTarget');
    assert.equal(disruption?.status, 'True');
    assert.equal(disruption?.reason, 'TerminationByKubelet');
    const events = JSON.parse(
      kubectl('get', 'events', '-n', ns, '--field-selector', 'involvedObject.name=hog,reason=Evicted', '-o', 'json'),
    ) as { items: { type: string; message: string }[] };
    assert.ok(
      events.items.some((e) => e.type === 'Warning' && e.message.startsWith('The node was low on resource: memory.')),
      'an Evicted event on the pod',
    );
    await eventually(
      "the hog's container terminated",
      30_000,
      async () => !!(await core.readNamespacedPod({ name: 'hog', namespace: ns })).status?.containerStatuses?.[0]?.state?.terminated,
      500,
    );

    // While the condition holds (30 s after the last sighting), a BestEffort pod is refused by
    // the kubelet itself (bound directly: the scheduler would keep it off the tainted node).
    await core.createNamespacedPod({ namespace: ns, body: podSpec('besteffort', { nodeName: nodeName() }) });
    const refused = await failed(ns, 'besteffort', 30_000);
    assert.equal(refused.status?.reason, 'Evicted');
    assert.equal(refused.status?.message, 'Pod was rejected: The node had condition: [MemoryPressure]. ');

    const cleared = await eventually(
      'MemoryPressure False after the transition period',
      90_000,
      async () => {
        const c = await nodeCondition('MemoryPressure');
        return c?.status === 'False' ? c : undefined;
      },
      1000,
    );
    assert.equal(cleared.reason, 'KubeletHasSufficientMemory');
    assert.ok(
      Date.parse(cleared.lastTransitionTime as unknown as string) - Date.parse(pressure.lastTransitionTime as unknown as string) >= 30_000,
      'it held for the transition period',
    );

    const guaranteed = await core.readNamespacedPod({ name: 'guaranteed', namespace: ns });
    assert.equal(guaranteed.status?.phase, 'Running', 'the Guaranteed pod survives');
    assert.equal(guaranteed.status?.containerStatuses?.[0]?.restartCount, 0);
    const evictions = JSON.parse(kubectl('get', 'events', '-n', ns, '--field-selector', 'reason=Evicted', '-o', 'json')) as {
      items: { involvedObject: { name: string } }[];
    };
    // (The refused pod's event has reason Evicted too, as upstream's.)
    assert.deepEqual(
      [...new Set(evictions.items.map((e) => e.involvedObject.name))].sort(),
      ['besteffort', 'hog'],
      'only the hog was evicted',
    );
    const metrics = scrapeMetrics();
    assert.ok(seriesValue(metrics, 'kubelet_evictions{eviction_signal="memory.available"}') >= 1, 'kubelet_evictions counts it');
    assert.ok(
      seriesValue(metrics, 'kubelet_eviction_stats_age_seconds_count{eviction_signal="memory.available"}') >= 1,
      'and the age of the stats it went by',
    );
  }));

/** The pod once it is Failed (evicted, refused or preempted). */
const failed = (ns: string, name: string, timeoutMs: number) =>
  eventually(
    `${name} Failed`,
    timeoutMs,
    async () => {
      const p = await clients().core.readNamespacedPod({ name, namespace: ns });
      return p.status?.phase === 'Failed' ? p : undefined;
    },
    500,
  );

const scrapeMetrics = () => kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/metrics`);

const nodeSummary = () =>
  JSON.parse(kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/stats/summary`)) as {
    node: { fs: { availableBytes: number }; rlimit: { maxpid: number; curproc: number } };
  };

/**
 * One pressure scenario: the kubelet restarted with a threshold (config lines), a Guaranteed
 * keeper and a BestEffort hog (its command) that crosses it; the condition turns True, the
 * hog ends Failed/Evicted naming the resource, the keeper runs on, the condition clears.
 */
async function pressureEviction(
  ns: string,
  o: { config: string[]; condition: string; reason: string; resource: string; hog: string; volumes?: boolean },
) {
  const { core } = clients();
  restartKubelet([...o.config, 'evictionPressureTransitionPeriod: 10s', ''].join('\n'));
  const image = podSpec('x').spec!.containers[0]!.image;
  // The keeper stays within what it requests, ephemeral storage included: upstream ranks pods
  // over their requests first, so the hog goes first whatever the stats show at that moment.
  const resources = { cpu: '50m', memory: '32Mi', 'ephemeral-storage': '100Mi' };
  await core.createNamespacedPod({
    namespace: ns,
    body: podSpec('keeper', {
      containers: [{ name: 'main', image, command: ['sleep', '3600'], resources: { requests: resources, limits: resources } }],
    }),
  });
  await eventually(
    'keeper Running',
    60_000,
    async () => (await core.readNamespacedPod({ name: 'keeper', namespace: ns })).status?.phase === 'Running',
    500,
  );
  assert.equal((await nodeCondition(o.condition))?.status, 'False', `no ${o.condition} before the hog`);
  await core.createNamespacedPod({
    namespace: ns,
    body: podSpec('hog', {
      containers: [
        {
          name: 'main',
          image,
          command: ['sh', '-c', o.hog],
          ...(o.volumes ? { volumeMounts: [{ name: 'fill', mountPath: '/fill' }] } : {}),
        },
      ],
      ...(o.volumes ? { volumes: [{ name: 'fill', emptyDir: {} }] } : {}),
    }),
  });
  const pressure = await eventually(
    `${o.condition} True`,
    90_000,
    async () => {
      const c = await nodeCondition(o.condition);
      return c?.status === 'True' ? c : undefined;
    },
    500,
  );
  assert.equal(pressure.reason, o.reason);
  const hog = await failed(ns, 'hog', 90_000);
  assert.equal(hog.status?.reason, 'Evicted');
  assert.ok(hog.status?.message?.startsWith(`The node was low on resource: ${o.resource}. `), hog.status?.message);
  await eventually(`${o.condition} False again`, 90_000, async () => (await nodeCondition(o.condition))?.status === 'False', 1000);
  const keeper = await core.readNamespacedPod({ name: 'keeper', namespace: ns });
  assert.equal(keeper.status?.phase, 'Running', 'the keeper survives');
}

test('disk pressure: a pod filling its emptyDir past nodefs.available is evicted, the condition clears', () =>
  withNamespace(async (ns) => {
    const MiB = 2 ** 20;
    // The hog writes 2000 MiB more than the threshold leaves free: the node-level reclaim that
    // comes first (unused images) may free some of it on a machine that has run other suites.
    const threshold = Math.floor((nodeSummary().node.fs.availableBytes - 1000 * MiB) / MiB);
    await pressureEviction(ns, {
      config: ['evictionHard:', `  nodefs.available: "${threshold}Mi"`],
      condition: 'DiskPressure',
      reason: 'KubeletHasDiskPressure',
      resource: 'ephemeral-storage',
      hog: 'dd if=/dev/zero of=/fill/zeros bs=1M count=3000 && sleep 3600',
      volumes: true,
    });
  }));

test('PID pressure: a pod forking past pid.available is evicted, the condition clears', () =>
  withNamespace(async (ns) => {
    const { rlimit } = nodeSummary().node;
    await pressureEviction(ns, {
      config: ['evictionHard:', `  pid.available: "${rlimit.maxpid - rlimit.curproc - 300}"`],
      condition: 'PIDPressure',
      reason: 'KubeletHasInsufficientPID',
      resource: 'pids',
      hog: 'for i in $(seq 600); do sleep 3600 & done; wait',
    });
  }));

test('a critical pod bound to a full node preempts a lower-priority pod, which ends Failed/Preempting', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    const node = await core.readNode({ name: nodeName() });
    const milli = (q: string | undefined) => (q === undefined ? 0 : q.endsWith('m') ? Number(q.slice(0, -1)) : Number(q) * 1000);
    const running = await core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${nodeName()},status.phase=Running` });
    const used = running.items.reduce(
      (n, p) => n + (p.spec?.containers ?? []).reduce((m, c) => m + milli(c.resources?.requests?.cpu), 0),
      0,
    );
    const free = milli(node.status?.allocatable?.cpu) - used;
    // The low-priority pod takes all but 100m of the free cpu; the critical one needs 500m.
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('low', {
        containers: [
          {
            name: 'main',
            image: podSpec('x').spec!.containers[0]!.image,
            command: ['sleep', '3600'],
            resources: { requests: { cpu: `${free - 100}m` } },
          },
        ],
      }),
    });
    await eventually(
      'low Running',
      60_000,
      async () => (await core.readNamespacedPod({ name: 'low', namespace: ns })).status?.phase === 'Running',
      500,
    );
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('critical', {
        nodeName: nodeName(),
        priorityClassName: 'system-node-critical',
        containers: [
          {
            name: 'main',
            image: podSpec('x').spec!.containers[0]!.image,
            command: ['sleep', '3600'],
            resources: { requests: { cpu: '500m' } },
          },
        ],
      }),
    });
    const low = await failed(ns, 'low', 60_000);
    assert.equal(low.status?.reason, 'Preempting');
    assert.equal(low.status?.message, 'Preempted in order to admit critical pod');
    assert.equal(low.status?.conditions?.find((c) => c.type === 'DisruptionTarget')?.reason, 'TerminationByKubelet');
    await eventually(
      'critical Running',
      60_000,
      async () => (await core.readNamespacedPod({ name: 'critical', namespace: ns })).status?.phase === 'Running',
      500,
    );
    assert.ok(
      seriesValue(scrapeMetrics(), 'kubelet_preemptions{preemption_signal="cpu"}') >= 1,
      'the preemption is counted by the resource it was for',
    );
  }));

test('node allocatable is enforced: the kubepods cgroup is limited to capacity less the reservations', async () => {
  const node = await clients().core.readNode({ name: nodeName() });
  const ki = Number(/^(\d+)Ki$/.exec(node.status?.capacity?.memory ?? '')?.[1]);
  const read = (f: string) => Number(readFileSync(f, 'utf8').trim());
  // No kubeReserved or systemReserved on the local stack: all of the capacity.
  assert.equal(read('/sys/fs/cgroup/memory/kubepods/memory.limit_in_bytes'), ki * 1024);
  assert.equal(read('/sys/fs/cgroup/cpu/kubepods/cpu.shares'), Number(node.status?.capacity?.cpu) * 1024);
});
