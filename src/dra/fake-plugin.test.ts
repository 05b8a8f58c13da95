// The DRA handler and manager against fake DRA drivers: grpc-js servers on unix sockets in a
// temporary root, registering through the real plugin manager as a driver's kubelet plugin does
// (a registration socket under plugins_registry, the DRA service on its own socket), and
// recording NodePrepareResources and NodeUnprepareResources as the driver receives them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server, ServerCredentials, type UntypedServiceImplementation } from '@grpc/grpc-js';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { Logger } from '../log/log.ts';
import { DRA_PLUGIN } from '../plugin-manager/handler.ts';
import { PluginManager } from '../plugin-manager/manager.ts';
import { registrationService } from '../plugin-manager/proto.ts';
import type { ResourceClaim } from './claims.ts';
import { CHECKPOINT_FILE, decodeCheckpoint } from './checkpoint.ts';
import type { Claim } from './generated/k8s/io/kubelet/pkg/apis/dra/v1/Claim.ts';
import type { Device } from './generated/k8s/io/kubelet/pkg/apis/dra/v1/Device.ts';
import { DraManager } from './manager.ts';
import { DraPlugins } from './plugins.ts';
import { type DraService, draService } from './proto.ts';

const quiet: Logger = { info() {}, v() {}, warn() {}, error() {} };
const until = async (cond: () => boolean, what: string) => {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(cond(), what);
};

const listen = async (server: Server, socket: string) =>
  new Promise<void>((res, rej) => server.bindAsync(`unix://${socket}`, ServerCredentials.createInsecure(), (e) => (e ? rej(e) : res())));

/**
 * A DRA driver's kubelet plugin: Registration on plugins_registry/<driver>-reg.sock, the DRA
 * service (the versions it lists) on plugins/<driver>/dra.sock. devices: what it prepares per
 * claim name; errors: the claims it fails.
 */
async function fakeDriver(
  root: string,
  driver: string,
  services: DraService[],
  devices: Record<string, Device[]>,
  errors: Record<string, string> = {},
) {
  const calls: { service: DraService; method: string; claims: Claim[] }[] = [];
  const registered: boolean[] = [];
  const dir = join(root, 'plugins', driver);
  mkdirSync(dir, { recursive: true });
  const endpoint = join(dir, 'dra.sock');
  const regSocket = join(root, 'plugins_registry', `${driver}-reg.sock`);
  const dra = new Server();
  for (const service of services) {
    const answer =
      (method: string, result: (c: Claim) => object) => (call: { request: { claims: Claim[] } }, cb: (e: null, r: object) => void) => {
        calls.push({ service, method, claims: call.request.claims });
        cb(null, { claims: Object.fromEntries(call.request.claims.map((c) => [c.uid, result(c)])) });
      };
    dra.addService(draService(service), {
      NodePrepareResources: answer('NodePrepareResources', (c) =>
        errors[c.name!] ? { error: errors[c.name!] } : { devices: devices[c.name!] ?? [] },
      ),
      NodeUnprepareResources: answer('NodeUnprepareResources', () => ({})),
    } as UntypedServiceImplementation);
  }
  await listen(dra, endpoint);
  const reg = new Server();
  reg.addService(registrationService(), {
    GetInfo: (_c: unknown, cb: (e: null, r: object) => void) =>
      cb(null, { type: DRA_PLUGIN, name: driver, endpoint, supportedVersions: services }),
    NotifyRegistrationStatus(call: { request: { pluginRegistered: boolean } }, cb: (e: null, r: object) => void) {
      registered.push(call.request.pluginRegistered);
      cb(null, {});
    },
  });
  await listen(reg, regSocket);
  return {
    calls,
    registered,
    /** The driver's pod went away: both sockets gone. */
    stop() {
      reg.forceShutdown();
      dra.forceShutdown();
      rmSync(regSocket, { force: true });
      rmSync(endpoint, { force: true });
    },
  };
}

const result = (request: string, driver: string, device: string) => ({ request, driver, pool: 'n1', device });

/** The apiserver: the claims by name, the Node n1, and the ResourceSlice collections deleted. */
function fakeApi(claims: ResourceClaim[]) {
  const deleted: string[] = [];
  return {
    deleted,
    async get<T>(path: string): Promise<T> {
      if (path === '/api/v1/nodes/n1') return {} as T;
      const claim = claims.find((c) => path === `/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims/${c.metadata!.name}`);
      if (!claim) throw new Error(`GET ${path}: 404 not found`);
      return claim as T;
    },
    async delete<T>(path: string): Promise<T> {
      deleted.push(decodeURIComponent(path));
      return {} as T;
    },
  };
}

const pod = (uid: string, claims: object[], statuses: object[], containers: object[]): Pod =>
  ({
    metadata: { name: uid, namespace: 'ns', uid },
    spec: { resourceClaims: claims, containers },
    status: { resourceClaimStatuses: statuses },
  }) as Pod;

test('claims prepared by their drivers over gRPC, per driver, shared, unprepared when the last pod goes', async () => {
  const root = mkdtempSync(join(tmpdir(), 'dra-'));
  // Pod a: a GPU claim from its template (two GPUs, one per request) and a NIC claim it shares with pod b.
  const gpuClaim: ResourceClaim = {
    metadata: {
      name: 'a-gpu-x1',
      namespace: 'ns',
      uid: 'uid-gpu',
      ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'a', uid: 'a', controller: true }],
    },
    status: {
      allocation: { devices: { results: [result('first', 'gpu.example.com', 'gpu-0'), result('second', 'gpu.example.com', 'gpu-1')] } },
      reservedFor: [{ resource: 'pods', name: 'a', uid: 'a' }],
    },
  };
  const nicClaim: ResourceClaim = {
    metadata: { name: 'nic', namespace: 'ns', uid: 'uid-nic' },
    status: {
      allocation: { devices: { results: [result('nic', 'net.example.com', 'eth1')] } },
      reservedFor: [
        { resource: 'pods', name: 'a', uid: 'a' },
        { resource: 'pods', name: 'b', uid: 'b' },
      ],
    },
  };
  const brokenClaim: ResourceClaim = {
    metadata: { name: 'broken', namespace: 'ns', uid: 'uid-broken' },
    status: {
      allocation: { devices: { results: [result('gpu', 'gpu.example.com', 'gpu-2')] } },
      reservedFor: [{ resource: 'pods', name: 'c', uid: 'c' }],
    },
  };
  const elsewhere: ResourceClaim = {
    metadata: { name: 'elsewhere', namespace: 'ns', uid: 'uid-elsewhere' },
    status: {
      allocation: { devices: { results: [result('x', 'other.example.com', 'x-0')] } },
      reservedFor: [{ resource: 'pods', name: 'd', uid: 'd' }],
    },
  };
  const api = fakeApi([gpuClaim, nicClaim, brokenClaim, elsewhere]);
  // What the dra_* metrics see: each operation of a pod, and each gRPC call to a driver.
  const seen: string[] = [];
  const plugins = new DraPlugins({
    api,
    nodeName: 'n1',
    log: quiet,
    wipingDelayMs: 100,
    observe: (driver, method, code, seconds) => seen.push(`${driver} ${method} ${code} ${seconds >= 0}`),
  });
  const pm = new PluginManager({ rootDir: root, log: quiet });
  pm.addHandler(DRA_PLUGIN, plugins);
  const active = new Set<string>();
  const newManager = () =>
    new DraManager({
      rootDir: root,
      api,
      plugins,
      log: quiet,
      activePods: () => active,
      sourcesReady: () => true,
      observe: (operation, seconds, isError) => seen.push(`${operation} ${isError} ${seconds >= 0}`),
    });
  const manager = newManager();
  const drivers: Awaited<ReturnType<typeof fakeDriver>>[] = [];
  try {
    pm.start();
    manager.start();
    // The GPU driver serves v1; the NIC driver was built before v1 and serves only v1beta1.
    const gpu = await fakeDriver(
      root,
      'gpu.example.com',
      ['v1.DRAPlugin', 'v1beta1.DRAPlugin'],
      {
        'a-gpu-x1': [
          { requestNames: ['first'], poolName: 'n1', deviceName: 'gpu-0', cdiDeviceIds: ['example.com/gpu=gpu-0'] },
          { requestNames: ['second'], poolName: 'n1', deviceName: 'gpu-1', cdiDeviceIds: ['example.com/gpu=gpu-1'], shareId: 'share-1' },
        ],
      },
      { broken: 'no such GPU' },
    );
    const net = await fakeDriver(root, 'net.example.com', ['v1beta1.DRAPlugin'], {
      nic: [{ poolName: 'n1', deviceName: 'eth1', cdiDeviceIds: ['example.com/net=eth1'] }],
    });
    drivers.push(gpu, net);
    await until(() => gpu.registered.length > 0 && net.registered.length > 0, 'both drivers told their registration');
    assert.deepEqual([gpu.registered, net.registered], [[true], [true]]);
    await until(() => plugins.get('gpu.example.com').connected && plugins.get('net.example.com').connected, 'both connected');

    const a = pod(
      'a',
      [
        { name: 'gpus', resourceClaimTemplateName: 'two-gpus' },
        { name: 'net', resourceClaimName: 'nic' },
      ],
      [{ name: 'gpus', resourceClaimName: 'a-gpu-x1' }],
      [
        { name: 'first', resources: { claims: [{ name: 'gpus', request: 'first' }, { name: 'net' }] } },
        { name: 'both', resources: { claims: [{ name: 'gpus' }] } },
        { name: 'none' },
      ],
    );
    active.add('a');
    await manager.prepareResources(a);
    assert.deepEqual(gpu.calls, [
      { service: 'v1.DRAPlugin', method: 'NodePrepareResources', claims: [{ namespace: 'ns', uid: 'uid-gpu', name: 'a-gpu-x1' }] },
    ]);
    assert.deepEqual(net.calls, [
      { service: 'v1beta1.DRAPlugin', method: 'NodePrepareResources', claims: [{ namespace: 'ns', uid: 'uid-nic', name: 'nic' }] },
    ]);
    const cdi = (m: DraManager, p: Pod) => Object.fromEntries(p.spec!.containers.map((c) => [c.name, m.cdiDevices(p, c)]));
    assert.deepEqual(cdi(manager, a), {
      first: ['example.com/gpu=gpu-0', 'example.com/net=eth1'],
      both: ['example.com/gpu=gpu-0', 'example.com/gpu=gpu-1'],
      none: [],
    });

    // Pod b shares the NIC claim, prepared already: no call.
    const b = pod('b', [{ name: 'n', resourceClaimName: 'nic' }], [], [{ name: 'app', resources: { claims: [{ name: 'n' }] } }]);
    active.add('b');
    await manager.prepareResources(b);
    assert.equal(net.calls.length, 1);

    // The driver's own failure of a claim, and a driver that is not on this node: the pod does not start.
    const c = pod('c', [{ name: 'g', resourceClaimName: 'broken' }], [], []);
    await assert.rejects(manager.prepareResources(c), {
      message: 'prepare dynamic resources: NodePrepareResources failed for ResourceClaim broken: no such GPU',
    });
    const d = pod('d', [{ name: 'x', resourceClaimName: 'elsewhere' }], [], []);
    await assert.rejects(manager.prepareResources(d), {
      message: 'prepare dynamic resources: DRA driver other.example.com is not registered',
    });
    assert.deepEqual(seen, [
      'gpu.example.com /k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources 0 true',
      'net.example.com /k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodePrepareResources 0 true',
      'PrepareResources false true',
      'PrepareResources false true',
      // The driver answered (OK) with a claim's error: the operation failed, not the call.
      'gpu.example.com /k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources 0 true',
      'PrepareResources true true',
      'PrepareResources true true',
    ]);
    // Prepared: a's two claims (one for each driver); c's broken one is not.
    assert.deepEqual(manager.claimsInUse(), { 'gpu.example.com': 1, 'net.example.com': 1, '<any>': 2 });

    // The checkpoint has the claims with their pods (c's failed at its driver, d's never got on one);
    // a restarted kubelet gives the same devices.
    const saved = decodeCheckpoint(readFileSync(join(root, CHECKPOINT_FILE), 'utf8'));
    assert.deepEqual(
      saved.map((s) => [s.claimName, [...s.podUIDs].sort()]),
      [
        ['a-gpu-x1', ['a']],
        ['nic', ['a', 'b']],
        ['broken', ['c']],
      ],
    );
    const restarted = newManager();
    restarted.start();
    restarted.stop();
    assert.deepEqual(cdi(restarted, a), cdi(manager, a));

    // Pod a goes: only its own claim is unprepared; then pod b: the shared one.
    gpu.calls.length = 0;
    net.calls.length = 0;
    await manager.unprepareResources(a);
    assert.deepEqual(gpu.calls, [
      { service: 'v1.DRAPlugin', method: 'NodeUnprepareResources', claims: [{ namespace: 'ns', uid: 'uid-gpu', name: 'a-gpu-x1' }] },
    ]);
    assert.deepEqual(net.calls, []);
    await manager.unprepareResources(b);
    await manager.unprepareResources(b);
    assert.deepEqual(net.calls, [
      { service: 'v1beta1.DRAPlugin', method: 'NodeUnprepareResources', claims: [{ namespace: 'ns', uid: 'uid-nic', name: 'nic' }] },
    ]);
    // Pod c's claim was never prepared, but the driver may have started on it: it is unprepared too.
    gpu.calls.length = 0;
    await manager.unprepareResources(c);
    assert.deepEqual(
      gpu.calls.map((x) => x.method),
      ['NodeUnprepareResources'],
    );
    assert.deepEqual(decodeCheckpoint(readFileSync(join(root, CHECKPOINT_FILE), 'utf8')), []);
    // A pod with no claim here changes nothing: no checkpoint written (a full disk cannot hold up its start or stop).
    rmSync(join(root, CHECKPOINT_FILE));
    await manager.prepareResources({ metadata: { uid: 'e', name: 'e', namespace: 'ns' }, spec: { containers: [] } });
    await manager.unprepareResources({ metadata: { uid: 'e', name: 'e', namespace: 'ns' }, spec: { containers: [] } });
    await manager.unprepareResources(b);
    assert.equal(existsSync(join(root, CHECKPOINT_FILE)), false);

    // The NIC driver's pod goes: deregistered, and its slices on this node deleted after the delay.
    api.deleted.length = 0;
    net.stop();
    await until(() => api.deleted.length > 0, "the driver's slices deleted");
    assert.deepEqual(api.deleted, ['/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.driver=net.example.com,spec.nodeName=n1']);
    assert.throws(() => plugins.get('net.example.com'), { message: 'DRA driver net.example.com is not registered' });
  } finally {
    manager.stop();
    pm.stop();
    plugins.stop();
    for (const d of drivers) d.stop();
    rmSync(root, { recursive: true, force: true });
  }
});
