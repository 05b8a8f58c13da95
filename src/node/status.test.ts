import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NodeStatus } from 'kubernetes-types/core/v1.js';
import {
  conditionsOverwritten,
  nodeAddresses,
  nodeForRegistration,
  CONTROLLER_MANAGED_ATTACH,
  PROVIDED_NODE_IP,
  UNINITIALIZED_TAINT,
  nodeStatus,
  nodeStatusEvents,
  nodeStatusPatch,
  notReadyReason,
  statusChanged,
  nodeImages,
  capacityAndAllocatable,
  type StatusInputs,
} from './status.ts';

const inputs = (over: Partial<StatusInputs> = {}): StatusInputs => ({
  host: {
    machineID: 'm',
    systemUUID: 'u',
    bootID: 'b',
    kernelVersion: '6.1',
    osImage: 'Debian',
    architecture: 'amd64',
    cpuCores: 2,
    memoryBytes: 4 * 2 ** 30,
    hugepages: { 'hugepages-2Mi': 0 },
  },
  fs: { capacityBytes: 100 * 2 ** 30 },
  nodeIPs: ['172.30.255.10'],
  hostname: 'vm',
  kubeletVersion: 'v1.36.3',
  kubeletPort: 10250,
  maxPods: 110,
  reserved: [],
  evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '10%' },
  runtime: { runtimeReady: true, networkReady: true, version: 'containerd://1.6.20' },
  images: [],
  now: new Date('2026-11-22T12:00:00.123Z'),
  pressure: [],
  ...over,
});

test('not-ready reasons in upstream words', () => {
  const cases: [StatusInputs['runtime'], RegExp | undefined][] = [
    [{ runtimeReady: true, networkReady: true }, undefined],
    [{}, /^container runtime is down$/],
    [
      { runtimeReady: true, networkReady: false, reason: 'NetworkPluginNotReady', message: 'cni plugin not initialized' },
      /^container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:cni plugin not initialized$/,
    ],
    [
      { runtimeReady: true, networkReady: true, plegProblem: 'pleg was last seen active 3m0s ago; threshold is 3m0s' },
      /^PLEG is not healthy: /,
    ],
  ];
  for (const [r, want] of cases) {
    const got = notReadyReason(r);
    if (want) assert.match(got ?? '', want);
    else assert.equal(got, undefined);
  }
});

test('allocatable withholds reservations and hard eviction thresholds', () => {
  const { capacity, allocatable } = capacityAndAllocatable({ ...inputs(), reserved: [{ cpu: '100m', memory: '1Gi' }] });
  assert.deepEqual(capacity, { cpu: '2', memory: '4Gi', 'ephemeral-storage': '100Gi', pods: '110', 'hugepages-2Mi': '0' });
  assert.equal(allocatable.cpu, '1900m');
  assert.equal(allocatable.memory, `${3 * 1024 - 100}Mi`);
  assert.equal(allocatable['ephemeral-storage'], '90Gi');
});

test('localStorageCapacityIsolation: ephemeral-storage in capacity and allocatable only while on, as upstream GetCapacity', () => {
  const reserved = [{ 'ephemeral-storage': '1Gi' }];
  const rows: [boolean | undefined, string | undefined, string | undefined][] = [
    [undefined, '100Gi', '89Gi'],
    [true, '100Gi', '89Gi'],
    // Off: no capacity, so no allocatable either, and the reservation and nodefs threshold have nothing to withhold from.
    [false, undefined, undefined],
  ];
  for (const [on, cap, alloc] of rows) {
    const { capacity, allocatable } = capacityAndAllocatable({ ...inputs(), reserved, localStorageCapacityIsolation: on });
    assert.equal(capacity['ephemeral-storage'], cap, `capacity, ${on}`);
    assert.equal(allocatable['ephemeral-storage'], alloc, `allocatable, ${on}`);
    assert.equal(capacity.memory, '4Gi', 'the rest stays');
  }
});

test('device plugin resources: all devices in capacity, the healthy ones allocatable, a removed one at 0', () => {
  const { capacity, allocatable } = capacityAndAllocatable({
    ...inputs(),
    devices: {
      capacity: { 'example.com/resource': 3, 'example.com/gone': 0 },
      allocatable: { 'example.com/resource': 2, 'example.com/gone': 0 },
    },
  });
  assert.equal(capacity['example.com/resource'], '3');
  assert.equal(allocatable['example.com/resource'], '2');
  assert.equal(capacity['example.com/gone'], '0');
  assert.equal(allocatable['example.com/gone'], '0');
});

test('Ready follows the runtime, and keeps its transition time while unchanged', () => {
  const first = nodeStatus(inputs({ runtime: {} }));
  const ready = first.conditions!.find((c) => c.type === 'Ready')!;
  assert.equal(ready.status, 'False');
  assert.equal(ready.reason, 'KubeletNotReady');
  assert.equal(ready.lastTransitionTime, '2026-11-22T12:00:00Z');
  const later = nodeStatus(inputs({ runtime: {}, now: new Date('2026-11-22T12:00:10Z') }), first);
  assert.equal(later.conditions!.find((c) => c.type === 'Ready')!.lastTransitionTime, '2026-11-22T12:00:00Z');
  assert.equal(statusChanged(first, later), false, 'only heartbeats moved');
  const recovered = nodeStatus(inputs({ now: new Date('2026-11-22T12:00:20Z') }), later);
  const r = recovered.conditions!.find((c) => c.type === 'Ready')!;
  assert.deepEqual([r.status, r.reason, r.lastTransitionTime], ['True', 'KubeletReady', '2026-11-22T12:00:20Z']);
  assert.equal(statusChanged(later, recovered), true);
  assert.equal(recovered.nodeInfo!.containerRuntimeVersion, 'containerd://1.6.20');
  assert.deepEqual(recovered.addresses, [
    { type: 'InternalIP', address: '172.30.255.10' },
    { type: 'Hostname', address: 'vm' },
  ]);
});

test("nodeInfo.swap: the node's swap capacity when it has swap, nothing without (upstream's MachineInfo setter)", () => {
  const swapOf = (swapBytes?: number) =>
    (nodeStatus(inputs({ host: { ...inputs().host, swapBytes } })).nodeInfo as { swap?: { capacity: number } }).swap;
  assert.deepEqual(swapOf(2 * 2 ** 30), { capacity: 2 * 2 ** 30 });
  assert.equal(swapOf(0), undefined);
  assert.equal(swapOf(undefined), undefined);
});

test('node images: biggest first, digests before tags, capped', () => {
  const imgs = nodeImages(
    [
      { repoTags: ['a:1'], repoDigests: ['a@sha256:1'], size: 10 },
      { repoTags: ['b:1'], repoDigests: [], size: 30 },
      { repoTags: [], repoDigests: [], size: 99 },
    ],
    50,
  );
  assert.deepEqual(imgs, [
    { names: ['b:1'], sizeBytes: 30 },
    { names: ['a@sha256:1', 'a:1'], sizeBytes: 10 },
  ]);
  assert.equal(
    nodeImages(
      [
        { repoTags: ['a'], repoDigests: [], size: 1 },
        { repoTags: ['b'], repoDigests: [], size: 2 },
      ],
      1,
    ).length,
    1,
  );
});

test('pressure conditions follow the eviction manager: True with upstream reasons, the others False', () => {
  const byType = (s: ReturnType<typeof nodeStatus>) => Object.fromEntries(s.conditions!.map((c) => [c.type, [c.status, c.reason]]));
  assert.deepEqual(byType(nodeStatus(inputs({ pressure: ['MemoryPressure', 'PIDPressure'] }))), {
    MemoryPressure: ['True', 'KubeletHasInsufficientMemory'],
    DiskPressure: ['False', 'KubeletHasNoDiskPressure'],
    PIDPressure: ['True', 'KubeletHasInsufficientPID'],
    Ready: ['True', 'KubeletReady'],
  });
  assert.deepEqual(byType(nodeStatus(inputs({ pressure: ['DiskPressure'] }))).DiskPressure, ['True', 'KubeletHasDiskPressure']);
});

test('declaredFeatures: in the status when given, and a change is a change to send', () => {
  const without = nodeStatus(inputs());
  assert.equal('declaredFeatures' in without, false);
  const withFeatures = nodeStatus(inputs({ declaredFeatures: ['RestartAllContainersOnContainerExits'] }));
  assert.deepEqual((withFeatures as { declaredFeatures?: string[] }).declaredFeatures, ['RestartAllContainersOnContainerExits']);
  assert.equal(statusChanged(without, withFeatures), true);
});

test("runtimeHandlers: CRI Status's handlers with both features (false when unsaid), none before the runtime listed any", () => {
  const cases: [string, StatusInputs['runtimeHandlers'], unknown][] = [
    ['not listed yet', undefined, undefined],
    ['a runtime without handlers (containerd 1.6)', [], undefined],
    [
      'containerd 2: the default handler and runc',
      [
        { name: '', features: { recursiveReadOnlyMounts: true, userNamespaces: true } },
        { name: 'runc', features: { recursiveReadOnlyMounts: true } },
        { name: 'old', features: null },
      ],
      [
        { name: '', features: { recursiveReadOnlyMounts: true, userNamespaces: true } },
        { name: 'runc', features: { recursiveReadOnlyMounts: true, userNamespaces: false } },
        { name: 'old', features: { recursiveReadOnlyMounts: false, userNamespaces: false } },
      ],
    ],
  ];
  for (const [name, handlers, want] of cases)
    assert.deepEqual(nodeStatus(inputs({ runtimeHandlers: handlers })).runtimeHandlers, want, name);
});

test('volumesInUse: in the status once known, an empty list too (a merge patch must empty it), and a change is sent', () => {
  assert.equal('volumesInUse' in nodeStatus(inputs()), false);
  const used = nodeStatus(inputs({ volumesInUse: ['kubernetes.io/csi/d^v1'] }));
  assert.deepEqual(used.volumesInUse, ['kubernetes.io/csi/d^v1']);
  const none = nodeStatus(inputs({ volumesInUse: [] }));
  assert.deepEqual(none.volumesInUse, []);
  assert.equal(statusChanged(used, none), true);
});

test('Ready while the node shuts down: False, KubeletNotReady, "node is shutting down" (after any runtime problem)', () => {
  const cases: [StatusInputs['runtime'], string | undefined, string | undefined][] = [
    [{ runtimeReady: true, networkReady: true }, undefined, undefined],
    [{ runtimeReady: true, networkReady: true }, 'node is shutting down', 'node is shutting down'],
    [{}, 'node is shutting down', 'container runtime is down, node is shutting down'],
  ];
  for (const [r, shutdown, want] of cases) assert.equal(notReadyReason(r, shutdown), want);
  const ready = nodeStatus(inputs({ shutdown: 'node is shutting down' })).conditions!.find((c) => c.type === 'Ready')!;
  assert.deepEqual([ready.status, ready.reason, ready.message], ['False', 'KubeletNotReady', 'node is shutting down']);
});

test('conditionsOverwritten: the lifecycle controller set Ready Unknown; our own status echoed back is not', () => {
  const cond = (type: string, status: string, reason: string) => ({
    type,
    status,
    reason,
    lastHeartbeatTime: 'a',
    lastTransitionTime: 'b',
  });
  const sent = { conditions: [cond('Ready', 'True', 'KubeletReady'), cond('DiskPressure', 'False', 'KubeletHasNoDiskPressure')] };
  const echoed = { conditions: sent.conditions.map((c) => ({ ...c, lastHeartbeatTime: 'later' })), volumesAttached: [] };
  const unknown = { conditions: [cond('Ready', 'Unknown', 'NodeStatusUnknown'), cond('DiskPressure', 'Unknown', 'NodeStatusUnknown')] };
  assert.equal(conditionsOverwritten(sent, echoed), false);
  assert.equal(conditionsOverwritten(sent, unknown), true);
  assert.equal(conditionsOverwritten(sent, { conditions: [sent.conditions[0]!] }), true, 'a condition gone');
  assert.equal(conditionsOverwritten(undefined, unknown), false, 'nothing sent yet: the next beat sends anyway');
});

test('registration with an external cloud provider: its taint, the node IP given as an annotation, providerID', () => {
  const cloud = { external: true, providerID: 'kind://podman/kind/kind-worker', nodeIPSpecified: true, nodeIPs: ['10.0.0.5'] };
  const n = nodeForRegistration('w1', 'amd64', {}, [{ key: 'a', effect: 'NoSchedule' }], cloud);
  assert.deepEqual(n.spec, {
    taints: [{ key: 'a', effect: 'NoSchedule' }, UNINITIALIZED_TAINT],
    providerID: 'kind://podman/kind/kind-worker',
  });
  assert.equal(n.metadata?.annotations?.[PROVIDED_NODE_IP], '10.0.0.5');
  // providerID alone (kind passes --provider-id without a cloud provider): no taint, no annotation.
  const plain = nodeForRegistration('w1', 'amd64', {}, [], { ...cloud, external: false });
  assert.deepEqual(plain.spec, { providerID: 'kind://podman/kind/kind-worker' });
  assert.equal(plain.metadata?.annotations?.[PROVIDED_NODE_IP], undefined);
  assert.deepEqual(nodeForRegistration('w1', 'amd64', {}, []).spec, {});
});

test('the attach annotation: set with enableControllerAttachDetach (the default), left out without (the kubelet attaches)', () => {
  assert.deepEqual(nodeForRegistration('w1', 'amd64', {}, []).metadata?.annotations, { [CONTROLLER_MANAGED_ATTACH]: 'true' });
  assert.deepEqual(nodeForRegistration('w1', 'amd64', {}, [], undefined, false).metadata?.annotations, {});
});

test("nodeAddresses: the kubelet's, unless an external cloud controller owns them (upstream's NodeAddress setter)", () => {
  const base = { nodeIPs: ['10.0.0.5'], hostname: 'w1' };
  const both = [
    { type: 'InternalIP', address: '10.0.0.5' },
    { type: 'Hostname', address: 'w1' },
  ];
  const cloud = (nodeIPSpecified: boolean) => ({ ...base, cloud: { external: true, providerID: '', nodeIPSpecified } });
  const rows: [string, ReturnType<typeof nodeAddresses>, ReturnType<typeof nodeAddresses>][] = [
    ['no cloud provider', nodeAddresses(base, [{ type: 'ExternalIP', address: '1.2.3.4' }]), both],
    ['external, --node-ip given, none yet', nodeAddresses(cloud(true), []), both],
    ['external, no --node-ip, none yet: the hostname alone', nodeAddresses(cloud(false), undefined), [{ type: 'Hostname', address: 'w1' }]],
    ["external, the controller's set: left alone", nodeAddresses(cloud(true), [{ type: 'InternalIP', address: '10.9.9.9' }]), undefined],
    [
      'dual-stack --node-ip: an InternalIP of each family, the primary first',
      nodeAddresses({ ...base, nodeIPs: ['fd00::5', '10.0.0.5'] }, undefined),
      [
        { type: 'InternalIP', address: 'fd00::5' },
        { type: 'InternalIP', address: '10.0.0.5' },
        { type: 'Hostname', address: 'w1' },
      ],
    ],
  ];
  for (const [name, got, want] of rows) assert.deepEqual(got, want, name);
});

test("the status patch is a strategic merge patch as upstream's: conditions merge by type, addresses are replaced", () => {
  const status = {
    conditions: [{ type: 'Ready', status: 'True' }],
    addresses: [
      { type: 'InternalIP', address: '172.30.252.3' },
      { type: 'Hostname', address: 'kind-worker' },
    ],
  };
  assert.deepEqual(nodeStatusPatch(status), {
    status: { conditions: status.conditions, addresses: [{ $patch: 'replace' }, ...status.addresses] },
  });
  assert.deepEqual(nodeStatusPatch({ conditions: [] }), { status: { conditions: [] } }, 'no addresses: no directive');
});

test("status.features as upstream's NodeFeatures setter: the runtime's, only when it reports any", () => {
  const withFeatures = nodeStatus(
    inputs({ runtime: { runtimeReady: true, networkReady: true, features: { supplementalGroupsPolicy: true } } }),
  ) as { features?: unknown };
  assert.deepEqual(withFeatures.features, { supplementalGroupsPolicy: true });
  assert.equal((nodeStatus(inputs()) as { features?: unknown }).features, undefined, 'no features reported: the field is left out');
});

test("nodeStatusEvents: upstream's setters' events against the Node as last seen", () => {
  const cond = (type: string, status: string) => ({ type, status });
  const st = (ready: string, memory = 'False', bootID = 'b1'): NodeStatus => ({
    conditions: [cond('MemoryPressure', memory), cond('DiskPressure', 'False'), cond('PIDPressure', 'False'), cond('Ready', ready)],
    nodeInfo: { bootID } as NodeStatus['nodeInfo'],
  });
  const reasons = (seen: Parameters<typeof nodeStatusEvents>[1], next: NodeStatus, lastUnschedulable = false) =>
    nodeStatusEvents('vm', seen, next, lastUnschedulable).map((e) => `${e.type} ${e.reason}`);
  const cases: [string, Parameters<typeof nodeStatusEvents>[1], NodeStatus, string[], boolean?][] = [
    [
      'a new Node: each pressure condition set, Ready new (no event)',
      { status: {} },
      st('True'),
      ['Normal NodeHasSufficientMemory', 'Normal NodeHasNoDiskPressure', 'Normal NodeHasSufficientPID'],
    ],
    ['nothing changed', { status: st('True') }, st('True'), []],
    ['Ready went False', { status: st('True') }, st('False'), ['Normal NodeNotReady']],
    ['Ready came back', { status: st('False') }, st('True'), ['Normal NodeReady']],
    ['memory pressure', { status: st('True') }, st('True', 'True'), ['Normal NodeHasInsufficientMemory']],
    [
      'a Node controller set Unknown',
      { status: st('Unknown', 'Unknown') },
      st('True'),
      ['Normal NodeHasSufficientMemory', 'Normal NodeReady'],
    ],
    ['a new boot ID', { status: st('True', 'False', 'b0') }, st('True'), ['Warning Rebooted']],
    ['cordoned', { status: st('True'), unschedulable: true }, st('True'), ['Normal NodeNotSchedulable']],
    ['uncordoned', { status: st('True'), unschedulable: false }, st('True'), ['Normal NodeSchedulable'], true],
  ];
  for (const [name, seen, next, want, last] of cases) assert.deepEqual(reasons(seen, next, last), want, name);
  assert.deepEqual(nodeStatusEvents('vm', { status: st('False') }, st('True'), false), [
    { type: 'Normal', reason: 'NodeReady', message: 'Node vm status is now: NodeReady' },
  ]);
  assert.equal(
    nodeStatusEvents('vm', { status: st('True', 'False', 'b0') }, st('True'), false)[0]?.message,
    'Node vm has been rebooted, boot id: b1',
  );
});
