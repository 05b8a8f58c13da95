// Device plugins as topology manager hint providers on this 1-NUMA node, as upstream's
// devicemanager topology_hints.go answers: a device plugin served by this test process (on
// KUBELET_ROOT_DIR/device-plugins, registered with the kubelet's kubelet.sock) reports
// example.com/numa with two devices on NUMA node 0 and one on node 1, a node this machine does
// not have (upstream ignores it for the hints). The kubelet restarted with
// topologyManagerPolicy: restricted (single-numa-node would give no affinity at all here: on a
// 1-NUMA machine its hint is the default mask, which upstream turns into "any node"): a pod
// asking one device gets one of node 0's, the one
// the plugin's GetPreferredAllocation picks among node 0's devices only (the affinity's); with
// one of node 0's taken, a pod asking two (node 0's last one and node 1's) is Failed with
// TopologyAffinityError where the none policy would have admitted it. The stack's own
// configuration is restored afterwards.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { credentials, makeClientConstructor, Server, ServerCredentials, type ServerWritableStream } from '@grpc/grpc-js';
import type { V1Pod } from '@kubernetes/client-node';
import { deviceServices } from '../../src/devices/proto.ts';
import { podResources } from './pod-resources.ts';
import { nodeReady } from './pinned-pods.ts';
import { BUSYBOX, KUBELET_ROOT_DIR, clients, ensureStack, eventually, nodeName, restartKubelet, withNamespace } from './stack.ts';

before(() => ensureStack());

const RESOURCE = 'example.com/numa';
const DIR = join(KUBELET_ROOT_DIR, 'device-plugins');
const SOCKET = join(DIR, 'kts-numa-e2e.sock');
const ALIGNED = 'topologyManagerPolicy: restricted\ntopologyManagerScope: container\n';

/** The plugin: its devices with their NUMA node, and what the kubelet asked GetPreferredAllocation. */
async function numaPlugin() {
  const devices = [
    { ID: 'numa0-a', health: 'Healthy', topology: { nodes: [{ ID: 0 }] } },
    { ID: 'numa0-b', health: 'Healthy', topology: { nodes: [{ ID: 0 }] } },
    { ID: 'numa1-a', health: 'Healthy', topology: { nodes: [{ ID: 1 }] } },
  ];
  const asked: { available: string[]; mustInclude: string[]; size: number }[] = [];
  const streams = new Set<ServerWritableStream<unknown, unknown>>();
  const server = new Server();
  server.addService(deviceServices().devicePlugin, {
    GetDevicePluginOptions: (_c: unknown, cb: (e: null, r: object) => void) =>
      cb(null, { preStartRequired: false, getPreferredAllocationAvailable: true }),
    ListAndWatch(call: ServerWritableStream<unknown, unknown>) {
      streams.add(call);
      call.write({ devices });
      call.on('cancelled', () => streams.delete(call));
    },
    GetPreferredAllocation(
      call: { request: { containerRequests: { availableDeviceIDs: string[]; mustIncludeDeviceIDs: string[]; allocationSize: number }[] } },
      cb: (e: null, r: object) => void,
    ) {
      const r = call.request.containerRequests[0]!;
      asked.push({ available: [...r.availableDeviceIDs].sort(), mustInclude: [...r.mustIncludeDeviceIDs].sort(), size: r.allocationSize });
      // The last of the available ones: not what the kubelet would take by itself (the first).
      cb(null, { containerResponses: [{ deviceIDs: [...r.availableDeviceIDs].sort().slice(-r.allocationSize) }] });
    },
    Allocate(call: { request: { containerRequests: { devicesIds: string[] }[] } }, cb: (e: null, r: object) => void) {
      cb(null, { containerResponses: call.request.containerRequests.map((c) => ({ envs: { NUMA_DEVICES: c.devicesIds.join(',') } })) });
    },
    PreStartContainer: (_c: unknown, cb: (e: null, r: object) => void) => cb(null, {}),
  });
  rmSync(SOCKET, { force: true });
  await new Promise<void>((res, rej) =>
    server.bindAsync(`unix://${SOCKET}`, ServerCredentials.createInsecure(), (e) => (e ? rej(e) : res())),
  );
  const Ctor = makeClientConstructor(deviceServices().registration, 'Registration');
  const client = new Ctor(`unix://${join(DIR, 'kubelet.sock')}`, credentials.createInsecure()) as unknown as {
    Register(r: object, cb: (e: Error | null) => void): void;
    close(): void;
  };
  await new Promise<void>((res, rej) =>
    client.Register({ version: 'v1beta1', endpoint: 'kts-numa-e2e.sock', resourceName: RESOURCE }, (e) => {
      client.close();
      return e ? rej(e) : res();
    }),
  );
  return {
    asked,
    stop() {
      for (const s of streams) s.end();
      server.forceShutdown();
      rmSync(SOCKET, { force: true });
    },
  };
}

let plugin: Awaited<ReturnType<typeof numaPlugin>> | undefined;

after(async () => {
  plugin?.stop();
  restartKubelet();
  await eventually('the node Ready again', 90_000, nodeReady, 1000);
});

function numaPod(name: string, count: number): V1Pod {
  return {
    metadata: { name },
    spec: {
      nodeName: nodeName(),
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'main',
          image: BUSYBOX,
          command: ['sh', '-c', 'echo $NUMA_DEVICES && sleep 3600'],
          resources: { limits: { [RESOURCE]: `${count}` } },
        },
      ],
    },
  };
}

test('restricted with a device plugin reporting NUMA nodes: aligned devices, GetPreferredAllocation within the affinity, TopologyAffinityError', {
  timeout: 4 * 60_000,
}, async () => {
  restartKubelet(ALIGNED);
  await eventually('the node Ready with the restricted policy', 90_000, nodeReady, 1000);
  const p = await numaPlugin();
  plugin = p;
  await eventually(
    'the three devices on the Node',
    60_000,
    async () => (await clients().core.readNode({ name: nodeName() })).status?.allocatable?.[RESOURCE] === '3',
    1000,
  );

  await withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedPod({ namespace: ns, body: numaPod('one', 1) });
    const one = await eventually('pod one Running', 90_000, async () => {
      const q = await core.readNamespacedPod({ name: 'one', namespace: ns });
      assert.notEqual(q.status?.phase, 'Failed', `pod one refused: ${q.status?.reason} ${q.status?.message}`);
      return q.status?.phase === 'Running' && q;
    });
    assert.ok(one);
    // Asked among node 0's devices only (the affinity's), nothing to include; its pick taken.
    assert.deepEqual(p.asked, [{ available: ['numa0-a', 'numa0-b'], mustInclude: [], size: 1 }]);
    const { podResources: listed } = await podResources((c) => c.List);
    const main = listed.find((p) => p.namespace === ns && p.name === 'one')?.containers.find((c) => c.name === 'main');
    const devs = main?.devices.filter((d) => d.resourceName === RESOURCE);
    assert.deepEqual(
      devs?.map((d) => [d.deviceIds, d.topology?.nodes.map((n) => Number(n.ID))]),
      [[['numa0-b'], [0]]],
    );

    // Node 0 has one left; two would take node 1's too: no hint at all, so no preferred one: refused.
    await core.createNamespacedPod({ namespace: ns, body: numaPod('two', 2) });
    const refused = await eventually('pod two Failed', 60_000, async () => {
      const q = await core.readNamespacedPod({ name: 'two', namespace: ns });
      return q.status?.phase === 'Failed' && q;
    });
    assert.equal(refused.status?.reason, 'TopologyAffinityError');
    assert.equal(refused.status?.message, 'Pod was rejected: Resources cannot be allocated with Topology locality');
  });
});
