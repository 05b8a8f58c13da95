// The device manager against a fake device plugin served by grpc-js over a temporary unix socket.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials, makeClientConstructor, Server, ServerCredentials, type ServerWritableStream } from '@grpc/grpc-js';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { Logger } from '../log/log.ts';
import { admitDevices } from '../pods/admission.ts';
import { readCheckpoint } from './checkpoint.ts';
import { DeviceManager } from './manager.ts';
import type { WithResourcesStatus } from '../status/allocated-resources.ts';
import { deviceServices } from './proto.ts';
import { allocatableResources, podResources, startPodResourcesServer } from './pod-resources.ts';
import { TopologyManager, topologyConfig } from '../topologymanager/manager.ts';

const R = 'example.com/resource';
const quiet: Logger = { info() {}, v() {}, warn() {}, error() {} };
const until = async (cond: () => boolean, what: string) => {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(cond(), what);
};

/** A device plugin: its devices can change, and it records what the kubelet asked. */
async function fakePlugin(socket: string, opts: { preStartRequired?: boolean; preferred?: string[] } = {}) {
  let devices: { ID: string; health: string; topology?: { nodes: { ID: number }[] } }[] = [
    { ID: 'dev-0', health: 'Healthy' },
    { ID: 'dev-1', health: 'Healthy' },
  ];
  const streams = new Set<ServerWritableStream<unknown, unknown>>();
  const calls: string[] = [];
  const asked: { available: string[]; mustInclude: string[] }[] = [];
  const server = new Server();
  server.addService(deviceServices().devicePlugin, {
    GetDevicePluginOptions: (_c: unknown, cb: (e: null, r: object) => void) =>
      cb(null, { preStartRequired: !!opts.preStartRequired, getPreferredAllocationAvailable: !!opts.preferred }),
    ListAndWatch(call: ServerWritableStream<unknown, unknown>) {
      streams.add(call);
      call.write({ devices });
      call.on('cancelled', () => streams.delete(call));
    },
    GetPreferredAllocation(
      call: { request: { containerRequests: { allocationSize: number; availableDeviceIDs: string[]; mustIncludeDeviceIDs: string[] }[] } },
      cb: (e: null, r: object) => void,
    ) {
      const req = call.request.containerRequests[0]!;
      calls.push(`preferred ${req.allocationSize}`);
      asked.push({ available: [...req.availableDeviceIDs].sort(), mustInclude: [...req.mustIncludeDeviceIDs].sort() });
      cb(null, { containerResponses: [{ deviceIDs: opts.preferred }] });
    },
    Allocate(call: { request: { containerRequests: { devicesIds: string[] }[] } }, cb: (e: null, r: object) => void) {
      const ids = call.request.containerRequests[0]!.devicesIds;
      calls.push(`allocate ${ids.join(',')}`);
      cb(null, {
        containerResponses: [
          {
            envs: { DEVICES: ids.join(',') },
            devices: ids.map((id) => ({ containerPath: `/dev/${id}`, hostPath: `/dev/host-${id}`, permissions: 'rw' })),
            cdiDevices: [{ name: `example.com/resource=${ids[0]}` }],
          },
        ],
      });
    },
    PreStartContainer(call: { request: { devicesIds: string[] } }, cb: (e: null, r: object) => void) {
      calls.push(`prestart ${call.request.devicesIds.join(',')}`);
      cb(null, {});
    },
  });
  await new Promise<void>((res, rej) =>
    server.bindAsync(`unix://${socket}`, ServerCredentials.createInsecure(), (e) => (e ? rej(e) : res())),
  );
  return {
    calls,
    asked,
    set(next: typeof devices) {
      devices = next;
      for (const s of streams) s.write({ devices });
    },
    stop() {
      for (const s of streams) s.end();
      server.forceShutdown();
      rmSync(socket, { force: true });
    },
  };
}

function register(kubeletSocket: string, req: object): Promise<void> {
  const Ctor = makeClientConstructor(deviceServices().registration, 'Registration');
  const client = new Ctor(`unix://${kubeletSocket}`, credentials.createInsecure()) as unknown as {
    Register(r: object, cb: (e: Error | null) => void): void;
    close(): void;
  };
  return new Promise((res, rej) =>
    client.Register(req, (e) => {
      client.close();
      return e ? rej(e) : res();
    }),
  );
}

const pod = (uid: string, n: number): Pod => ({
  metadata: { uid, name: uid, namespace: 'ns' },
  spec: { containers: [{ name: 'c', resources: { limits: { [R]: String(n) } } }] },
});

test('register, ListAndWatch, capacity, admission, Allocate, checkpoint, plugin gone', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'devmgr-'));
  let now = 1_000_000;
  const active = new Set<string>();
  const m = new DeviceManager({
    dir,
    log: quiet,
    activePods: () => active,
    sourcesReady: () => true,
    now: () => now,
  });
  // Sockets left in the directory are removed at start: the plugin starts after.
  await m.start();
  const plugin = await fakePlugin(join(dir, 'plugin.sock'), { preStartRequired: true });
  try {
    await assert.rejects(
      register(join(dir, 'kubelet.sock'), { version: 'v1alpha', endpoint: 'plugin.sock', resourceName: R }),
      /not supported/,
    );
    await register(join(dir, 'kubelet.sock'), { version: 'v1beta1', endpoint: 'plugin.sock', resourceName: R });
    await until(() => m.capacity().capacity[R] === 2, 'two devices registered');

    // One device turns unhealthy: still in capacity, not allocatable.
    plugin.set([
      { ID: 'dev-0', health: 'Healthy' },
      { ID: 'dev-1', health: 'Unhealthy' },
    ]);
    await until(() => m.capacity().allocatable[R] === 1, 'one healthy');
    assert.deepEqual(m.capacity(), { capacity: { [R]: 2 }, allocatable: { [R]: 1 } });

    // Admission: two are not there; one is.
    assert.deepEqual(admitDevices(pod('p2', 2), m.admissionInput(pod('p2', 2))), {
      admit: false,
      reason: 'UnexpectedAdmissionError',
      message: `Pod was rejected: Allocate failed due to requested number of devices unavailable for ${R}. Requested: 2, Available: 1, which is unexpected`,
    });
    const p1 = pod('p1', 1);
    assert.deepEqual(admitDevices(p1, m.admissionInput(p1)), { admit: true });
    assert.equal(m.reserve(p1), undefined);
    active.add('p1');
    // The device is taken: another pod is refused.
    assert.equal(admitDevices(pod('p3', 1), m.admissionInput(pod('p3', 1))).admit, false);

    // Container creation: Allocate, PreStartContainer, the answer merged for CRI.
    const opts = await m.containerOptions(p1, p1.spec!.containers[0]!);
    assert.deepEqual(plugin.calls, ['allocate dev-0', 'prestart dev-0']);
    assert.deepEqual(opts, {
      envs: [{ name: 'DEVICES', value: 'dev-0' }],
      mounts: [],
      devices: [{ containerPath: '/dev/dev-0', hostPath: '/dev/host-dev-0', permissions: 'rw' }],
      annotations: {},
      cdiDevices: ['example.com/resource=dev-0'],
    });
    // A restart of the container reuses the answer.
    await m.containerOptions(p1, p1.spec!.containers[0]!);
    assert.deepEqual(plugin.calls, ['allocate dev-0', 'prestart dev-0', 'prestart dev-0']);

    // The checkpoint, read back by a new manager (a restarted kubelet).
    const cp = readCheckpoint(dir)!;
    assert.equal(cp.PodDeviceEntries?.[0]?.PodUID, 'p1');
    assert.deepEqual(cp.RegisteredDevices, { [R]: ['dev-0'] });
    // PodResources List and GetAllocatableResources from the manager.
    assert.deepEqual(podResources(p1, m), {
      name: 'p1',
      namespace: 'ns',
      containers: [
        { name: 'c', devices: [{ resourceName: R, deviceIds: ['dev-0'], topology: null }], cpuIds: [], memory: [], dynamicResources: [] },
      ],
    });
    assert.deepEqual(allocatableResources(m).devices, [{ resourceName: R, deviceIds: ['dev-0'], topology: null }]);
    // With the CPU manager's static policy: the container's exclusive CPUs and the node's allocatable ones.
    const cpus = { containerCPUs: (uid: string, c: string) => (uid === 'p1' && c === 'c' ? [1, 2] : []), allocatableCPUs: () => [1, 2, 3] };
    assert.deepEqual(podResources(p1, { ...cpus, containerDevices: (u, c) => m.containerDevices(u, c) }).containers?.[0]?.cpuIds, [1, 2]);
    assert.deepEqual(allocatableResources({ ...cpus, allocatableDevices: () => [] }).cpuIds, [1, 2, 3]);
    // With the memory manager's Static policy: the container's blocks and each node's allocatable, as containerMemoryFromBlock.
    const block = { numaAffinity: [0, 1], type: 'memory', size: 1073741824 };
    const mem = { containerMemory: () => [block], allocatableMemory: () => [{ ...block, numaAffinity: [0] }] };
    assert.deepEqual(podResources(p1, { ...mem, containerDevices: () => [] }).containers?.[0]?.memory, [
      { memoryType: 'memory', size: '1073741824', topology: { nodes: [{ ID: '0' }, { ID: '1' }] } },
    ]);
    assert.deepEqual(allocatableResources({ ...mem, allocatableDevices: () => [] }).memory, [
      { memoryType: 'memory', size: '1073741824', topology: { nodes: [{ ID: '0' }] } },
    ]);

    // The pod ends: its device is free again.
    active.delete('p1');
    assert.equal(admitDevices(pod('p3', 1), m.admissionInput(pod('p3', 1))).admit, true);

    // The plugin goes away (its socket removed): all unhealthy at once, gone after the grace.
    plugin.stop();
    await until(() => m.capacity().allocatable[R] === 0, 'unhealthy once the plugin is gone');
    assert.deepEqual(m.capacity(), { capacity: { [R]: 2 }, allocatable: { [R]: 0 } });
    now += 5 * 60_000 + 1;
    assert.deepEqual(m.capacity(), { capacity: { [R]: 0 }, allocatable: { [R]: 0 } });
  } finally {
    plugin.stop();
    await m.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a restarted kubelet keeps assignments from the checkpoint; the plugin re-registers', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'devmgr-'));
  const active = new Set(['p1']);
  const deps = { dir, log: quiet, activePods: () => active, sourcesReady: () => true };
  const first = new DeviceManager(deps);
  await first.start();
  let plugin = await fakePlugin(join(dir, 'plugin.sock'), { preferred: ['dev-1'] });
  try {
    await register(join(dir, 'kubelet.sock'), { version: 'v1beta1', endpoint: 'plugin.sock', resourceName: R });
    await until(() => first.capacity().allocatable[R] === 2, 'registered');
    const p1 = pod('p1', 1);
    assert.equal(first.reserve(p1), undefined);
    // The plugin prefers dev-1: asked before Allocate.
    await first.containerOptions(p1, p1.spec!.containers[0]!);
    assert.deepEqual(plugin.calls, ['preferred 1', 'allocate dev-1']);
    await first.stop();
    plugin.stop();

    const second = new DeviceManager(deps);
    await second.start();
    // Registered before, not yet again: at 0 until its plugin is back.
    assert.deepEqual(second.capacity(), { capacity: { [R]: 0 }, allocatable: { [R]: 0 } });
    assert.deepEqual(second.inUse(), new Map([[R, new Set(['dev-1'])]]));
    plugin = await fakePlugin(join(dir, 'plugin.sock'));
    await register(join(dir, 'kubelet.sock'), { version: 'v1beta1', endpoint: 'plugin.sock', resourceName: R });
    await until(() => second.capacity().allocatable[R] === 2, 're-registered');
    // The container's devices and answer are kept: no new Allocate.
    const opts = await second.containerOptions(p1, p1.spec!.containers[0]!);
    assert.deepEqual(plugin.calls, []);
    assert.deepEqual(opts?.envs, [{ name: 'DEVICES', value: 'dev-1' }]);
    // dev-1 is taken: a new pod gets dev-0.
    assert.equal(second.reserve(pod('p2', 1)), undefined);
    active.add('p2');
    assert.deepEqual(second.inUse(), new Map([[R, new Set(['dev-1', 'dev-0'])]]));
    await second.stop();
  } finally {
    plugin.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('PodResources API over its socket', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'podres-'));
  const p = pod('p1', 1);
  const requests: string[] = [];
  const server = await startPodResourcesServer(
    dir,
    {
      pods: () => [p],
      containerDevices: () => [{ resourceName: R, deviceIds: ['dev-0'], numaNodes: [0] }],
      allocatableDevices: () => [{ resourceName: R, deviceId: 'dev-0', numaNodes: [] }],
    },
    { request: (e) => requests.push(e) },
  );
  const Ctor = makeClientConstructor(deviceServices().podResources, 'PodResourcesLister');
  const client = new Ctor(`unix://${server.socket}`, credentials.createInsecure()) as unknown as Record<
    string,
    (r: object, cb: (e: Error | null, r: unknown) => void) => void
  >;
  const call = (method: string, req: object) =>
    new Promise((res, rej) => client[method]!.call(client, req, (e, r) => (e ? rej(e) : res(r))));
  try {
    assert.deepEqual(await call('List', {}), {
      podResources: [
        {
          name: 'p1',
          namespace: 'ns',
          containers: [
            {
              name: 'c',
              devices: [{ resourceName: R, deviceIds: ['dev-0'], topology: { nodes: [{ ID: '0' }] } }],
              cpuIds: [],
              memory: [],
              dynamicResources: [],
            },
          ],
        },
      ],
    });
    assert.deepEqual(await call('GetAllocatableResources', {}), {
      devices: [{ resourceName: R, deviceIds: ['dev-0'], topology: null }],
      cpuIds: [],
      memory: [],
    });
    await assert.rejects(call('Get', { podName: 'x', podNamespace: 'ns' }), /pod x in namespace ns not found/);
    assert.deepEqual(requests, ['list', 'get_allocatable', 'get']);
  } finally {
    (client as unknown as { close(): void }).close();
    server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('device health (ResourceHealthStatus): a change wakes the pod holding the device, its status names each device', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'devmgr-'));
  const woken: string[][] = [];
  const m = new DeviceManager({ dir, log: quiet, activePods: () => ['p1'], sourcesReady: () => true, podsChanged: (u) => woken.push(u) });
  await m.start();
  const plugin = await fakePlugin(join(dir, 'plugin.sock'));
  try {
    await register(join(dir, 'kubelet.sock'), { version: 'v1beta1', endpoint: 'plugin.sock', resourceName: R });
    await until(() => m.capacity().allocatable[R] === 2, 'registered');
    const p1 = pod('p1', 1);
    assert.equal(m.reserve(p1), undefined);
    const [held] = m.inUse().get(R)!;
    const status = { containerStatuses: [{ name: 'c', image: 'i', imageID: '', ready: false, restartCount: 0 }] };
    const entry = (health: string) => [{ name: R, resources: [{ resourceID: held, health }] }];
    // Before Allocate (a pod whose image cannot be pulled still shows its device).
    assert.deepEqual(
      (m.allocatedResourcesStatus(p1, status).containerStatuses![0] as WithResourcesStatus).allocatedResourcesStatus,
      entry('Healthy'),
    );
    // The other device turning unhealthy concerns no pod.
    const other = held === 'dev-0' ? 'dev-1' : 'dev-0';
    plugin.set([
      { ID: held!, health: 'Healthy' },
      { ID: other, health: 'Unhealthy' },
    ]);
    await until(() => m.capacity().allocatable[R] === 1, 'one unhealthy');
    assert.deepEqual(woken, []);
    plugin.set([
      { ID: held!, health: 'Unhealthy' },
      { ID: other, health: 'Unhealthy' },
    ]);
    await until(() => woken.length === 1, 'the pod woken');
    assert.deepEqual(woken, [['p1']]);
    assert.deepEqual(
      (m.allocatedResourcesStatus(p1, status).containerStatuses![0] as WithResourcesStatus).allocatedResourcesStatus,
      entry('Unhealthy'),
    );
    // A pod without devices keeps its status as it was.
    assert.equal(m.allocatedResourcesStatus(pod('p2', 0), status), status);
  } finally {
    plugin.stop();
    await m.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a topology manager hint provider: NUMA hints from ListAndWatch, aligned devices, GetPreferredAllocation asked within the affinity', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'devmgr-'));
  const active = new Set<string>();
  const m = new DeviceManager({ dir, log: quiet, activePods: () => active, sourcesReady: () => true, numaNodes: [0, 1] });
  await m.start();
  // The plugin prefers dev-3 and dev-2 (node 1) and one outside any affinity.
  const plugin = await fakePlugin(join(dir, 'plugin.sock'), { preferred: ['dev-3', 'dev-2'] });
  const on = (id: string, node: number) => ({ ID: id, health: 'Healthy', topology: { nodes: [{ ID: node }] } });
  const topology = new TopologyManager(
    topologyConfig({ policyName: 'single-numa-node', scopeName: 'container', options: {}, numa: { nodes: [0, 1], distances: new Map() } }),
    () => [],
  );
  topology.addHintProvider(m);
  try {
    await register(join(dir, 'kubelet.sock'), { version: 'v1beta1', endpoint: 'plugin.sock', resourceName: R });
    await until(() => m.capacity().allocatable[R] === 2, 'registered');
    plugin.set([on('dev-0', 0), on('dev-1', 1), on('dev-2', 1), on('dev-3', 1)]);
    await until(() => m.capacity().allocatable[R] === 4, 'devices with topology');
    const p = pod('p1', 2);
    assert.deepEqual(
      m.hints(p, p.spec!.containers[0]!)?.[R]?.map((h) => [h.affinity!.list(), h.preferred]),
      [
        [[1], true],
        [[0, 1], false],
      ],
    );
    // Four devices fit no single node: refused as upstream.
    const four = pod('p4', 4);
    assert.deepEqual(topology.admit(four), {
      admit: false,
      reason: 'TopologyAffinityError',
      message: 'Pod was rejected: Resources cannot be allocated with Topology locality',
    });
    assert.deepEqual(m.inUse(), new Map());
    // Two: on node 1, reserved at admission.
    assert.deepEqual(topology.admit(p), { admit: true });
    active.add('p1');
    assert.deepEqual(topology.affinity('p1', 'c').affinity?.list(), [1]);
    assert.deepEqual(m.inUse(), new Map([[R, new Set(['dev-1', 'dev-2'])]]));
    // At creation the plugin is asked among node 1's devices (the aligned ones), and its choice taken.
    const opts = await m.containerOptions(p, p.spec!.containers[0]!);
    assert.deepEqual(plugin.asked, [{ available: ['dev-1', 'dev-2', 'dev-3'], mustInclude: [] }]);
    assert.deepEqual(plugin.calls, ['preferred 2', 'allocate dev-3,dev-2']);
    assert.deepEqual(opts?.envs, [{ name: 'DEVICES', value: 'dev-3,dev-2' }]);
    assert.deepEqual(m.containerDevices('p1', 'c'), [{ resourceName: R, deviceIds: ['dev-3', 'dev-2'], numaNodes: [1] }]);
    // One more: node 1 has one left, node 0 one: both preferred.
    const q = pod('q', 1);
    assert.deepEqual(
      m.hints(q, q.spec!.containers[0]!)?.[R]?.map((h) => [h.affinity!.list(), h.preferred]),
      [
        [[0], true],
        [[1], true],
        [[0, 1], false],
      ],
    );
  } finally {
    await m.stop();
    plugin.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a 1-NUMA node with a device on a node it lacks (test/e2e/device-topology.test.ts's scenario): restricted aligns and refuses, single-numa-node's hint is any node", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'devmgr-'));
  const active = new Set<string>();
  const m = new DeviceManager({ dir, log: quiet, activePods: () => active, sourcesReady: () => true, numaNodes: [0] });
  await m.start();
  const plugin = await fakePlugin(join(dir, 'plugin.sock'), { preferred: ['numa0-b'] });
  const on = (id: string, node: number) => ({ ID: id, health: 'Healthy', topology: { nodes: [{ ID: node }] } });
  const manager = (policyName: string) => {
    const t = new TopologyManager(
      topologyConfig({ policyName, scopeName: 'container', options: {}, numa: { nodes: [0], distances: new Map() } }),
      () => [],
    );
    t.addHintProvider(m);
    return t;
  };
  try {
    await register(join(dir, 'kubelet.sock'), { version: 'v1beta1', endpoint: 'plugin.sock', resourceName: R });
    await until(() => m.capacity().allocatable[R] === 2, 'registered');
    plugin.set([on('numa0-a', 0), on('numa0-b', 0), on('numa1-a', 1)]);
    await until(() => m.capacity().allocatable[R] === 3, 'devices with topology');
    const single = manager('single-numa-node');
    const s = pod('s', 1);
    assert.deepEqual(single.admit(s), { admit: true });
    assert.equal(single.affinity('s', 'c').affinity, undefined, 'the default mask comes back as no affinity');
    m.updateAllocatedDevices();
    assert.deepEqual(m.inUse(), new Map());

    const restricted = manager('restricted');
    const one = pod('one', 1);
    assert.deepEqual(restricted.admit(one), { admit: true });
    active.add('one');
    assert.deepEqual(restricted.affinity('one', 'c').affinity?.list(), [0]);
    await m.containerOptions(one, one.spec!.containers[0]!);
    assert.deepEqual(plugin.asked, [{ available: ['numa0-a', 'numa0-b'], mustInclude: [] }]);
    assert.deepEqual(m.containerDevices('one', 'c'), [{ resourceName: R, deviceIds: ['numa0-b'], numaNodes: [0] }]);
    assert.deepEqual(restricted.admit(pod('two', 2)), {
      admit: false,
      reason: 'TopologyAffinityError',
      message: 'Pod was rejected: Resources cannot be allocated with Topology locality',
    });
    // The none policy admits it, with node 0's last device and node 1's.
    assert.deepEqual(manager('none').admit(pod('two', 2)), { admit: true });
    assert.deepEqual(m.inUse(), new Map([[R, new Set(['numa0-b', 'numa0-a', 'numa1-a'])]]));
  } finally {
    await m.stop();
    plugin.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
