// Dynamic resource allocation on the cluster of kubelet-ts nodes with a real DRA driver:
// upstream's DRA test driver of the pinned release, deployed as a driver's users deploy one
// (manifests/addons/dra-test-driver.yaml: its kubelet plugin as a DaemonSet, RBAC, a DeviceClass).
// Checked as a user and an operator would: the plugin registers with each worker's kubelet and
// publishes the node's devices; a pod whose claim comes from a ResourceClaimTemplate runs with
// the claim allocated on its node and reserved for it, and its container has the environment
// the driver's CDI spec injects (containerd's CDI, from the device the kubelet names); once the
// pod is gone, its claim is unprepared (the CDI spec removed from the node) and deleted; once
// the driver is uninstalled, each kubelet deletes its node's ResourceSlices.
// Upstream's equivalents: the [sig-node] DRA tests of test/e2e/dra (which run the plugin inside
// e2e.test behind proxy pods) and test/e2e/dra/test-driver/deploy/example/pod-inline.yaml.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { CHECKPOINT_FILE, decodeCheckpoint } from '../../src/dra/checkpoint.ts';
import { BUSYBOX, ROOT, eventually, pinned } from './stack.ts';
import { WORKERS, ck, ckJSON, ensureCluster, inNode } from './cluster.ts';

before(() => ensureCluster());

const MANIFEST = `${ROOT}/manifests/addons/dra-test-driver.yaml`;
const DRIVER = 'test-driver.cdi.k8s.io';
const DRIVER_NS = 'dra-test-driver';
const PLUGIN_LABEL = 'app.kubernetes.io/name=dra-test-driver-kubelet-plugin';
// The driver's default paths (k8s.io/dynamic-resource-allocation/kubeletplugin, app/server.go).
const REG_SOCKET = `/var/lib/kubelet/plugins_registry/${DRIVER}-reg.sock`;
const CDI_DIR = '/var/run/cdi';
const ns = `dra-${randomBytes(3).toString('hex')}`;

before(() => {
  // The image is built from the pin and tagged with it (hack/build-images.sh --cluster): a
  // manifest naming another tag would leave the plugin pods unable to pull, and say so late.
  const version = pinned('KUBE_VERSION');
  assert.ok(readFileSync(MANIFEST, 'utf8').includes(`dra-test-driver:${version}`), `${MANIFEST} names the image of ${version}`);
  ck(['apply', '-f', MANIFEST]);
  ck(['create', 'namespace', ns]);
});
after(() => {
  // The pods first, while the driver can still unprepare their claims; then what the test applied.
  try {
    ck(['delete', 'namespace', ns, '--wait=true', '--timeout=100s']);
  } finally {
    ck(['delete', '-f', MANIFEST, '--ignore-not-found', '--wait=false']);
  }
});

type Meta = { name: string; uid: string; ownerReferences?: { kind: string; uid: string; controller?: boolean }[] };
type Pod = {
  metadata: Meta;
  spec: { nodeName?: string };
  status: {
    phase?: string;
    containerStatuses?: { ready: boolean }[];
    resourceClaimStatuses?: { name: string; resourceClaimName?: string }[];
  };
};
type Slice = { spec: { driver: string; nodeName?: string; pool: { name: string }; devices?: { name: string }[] } };
type Claim = {
  metadata: Meta;
  status?: {
    allocation?: { devices?: { results?: { request: string; driver: string; pool: string; device: string }[] } };
    reservedFor?: { resource: string; name: string; uid: string }[];
  };
};

const driverSlices = () => ckJSON<{ items: Slice[] }>('get', 'resourceslices', '--field-selector', `spec.driver=${DRIVER}`).items;
const apply = (obj: object) => ck(['-n', ns, 'apply', '-f', '-'], JSON.stringify(obj));
const get = <T>(...args: string[]): T | undefined => {
  try {
    return ckJSON<T>('-n', ns, 'get', ...args);
  } catch {
    return undefined;
  }
};
/** The node's plugins as its kubelet counts them (upstream's plugin_manager_total_plugins). */
const registeredOn = (node: string) =>
  ck(['get', '--raw', `/api/v1/nodes/${node}/proxy/metrics`])
    .split('\n')
    .some(
      (l) =>
        l.startsWith('plugin_manager_total_plugins{') &&
        l.includes(`socket_path="${REG_SOCKET}"`) &&
        l.includes('state="actual_state_of_world"') &&
        l.endsWith(' 1'),
    );
const cdiSpecs = (node: string) => inNode(node, 'ls', CDI_DIR).split('\n').filter(Boolean);
const checkpointed = (node: string) => decodeCheckpoint(inNode(node, 'cat', `/var/lib/kubelet/${CHECKPOINT_FILE}`));
/** The variables the test driver sets (upstream's envLineRE in test/e2e/dra/utils/builder.go), sorted. */
const driverEnv = (pod: string, container: string) =>
  ck(['-n', ns, 'exec', pod, '-c', container, '--', 'env'])
    .split('\n')
    .filter((l) => /^(?:admin|user|claim)_[a-zA-Z0-9_]*=.*$/.test(l))
    .sort();

/**
 * The driver at work, as the first test checks it and the last needs it (each may run alone):
 * its plugin rolled out, registered with each worker's kubelet, and a ResourceSlice of each
 * worker published. Returns the slices by node.
 */
async function driverAtWork(): Promise<Map<string | undefined, Slice>> {
  ck(['-n', DRIVER_NS, 'rollout', 'status', 'ds/dra-test-driver-kubelet-plugin', '--timeout=180s']);
  for (const w of WORKERS) await eventually(`the plugin registered with the kubelet of ${w}`, 60_000, async () => registeredOn(w));
  return eventually('a ResourceSlice of the driver for each worker', 60_000, async () => {
    const m = new Map(driverSlices().map((s) => [s.spec.nodeName, s]));
    return WORKERS.every((w) => m.has(w)) ? m : undefined;
  });
}

test("the driver's kubelet plugin runs on each worker, registers with its kubelet and publishes the node's devices", {
  timeout: 5 * 60_000,
}, async () => {
  const byNode = await driverAtWork();
  const plugins = ckJSON<{ items: Pod[] }>('-n', DRIVER_NS, 'get', 'pods', '-l', PLUGIN_LABEL).items;
  assert.deepEqual(plugins.map((p) => p.spec.nodeName).sort(), WORKERS, 'one plugin per worker, none on the tainted control plane');
  for (const w of WORKERS) {
    const s = byNode.get(w)!;
    assert.equal(s.spec.pool.name, w, 'one pool per node, named after it');
    assert.deepEqual((s.spec.devices ?? []).map((d) => d.name).sort(), ['device-00', 'device-01', 'device-02', 'device-03']);
  }
});

test('a pod with a claim from a ResourceClaimTemplate: allocated on its node, reserved for it, its CDI environment in the container; unprepared and deleted with the pod', {
  timeout: 5 * 60_000,
}, async () => {
  apply({
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceClaimTemplate',
    metadata: { name: 'one-device' },
    spec: {
      spec: {
        devices: {
          requests: [{ name: 'my-device', exactly: { deviceClassName: DRIVER } }],
          // The test driver turns each parameter into an env variable user_<key>.
          config: [{ opaque: { driver: DRIVER, parameters: { a: 'b' } } }],
        },
      },
    },
  });
  // As upstream's pod-inline.yaml: one container with the claim, one without.
  apply({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'with-claim' },
    spec: {
      terminationGracePeriodSeconds: 1,
      containers: [
        { name: 'with-resource', image: BUSYBOX, command: ['sleep', '3600'], resources: { claims: [{ name: 'device' }] } },
        { name: 'without-resource', image: BUSYBOX, command: ['sleep', '3600'] },
      ],
      resourceClaims: [{ name: 'device', resourceClaimTemplateName: 'one-device' }],
    },
  });
  const pod = await eventually('with-claim Running, both containers ready', 180_000, async () => {
    const p = get<Pod>('pod', 'with-claim');
    return p?.status.phase === 'Running' && p.status.containerStatuses?.every((c) => c.ready) ? p : undefined;
  });
  const node = pod.spec.nodeName!;
  assert.ok(WORKERS.includes(node), `the pod runs on a worker: ${node}`);

  // The claim the controller generated for it, named in the pod's status.
  const statuses = pod.status.resourceClaimStatuses ?? [];
  assert.equal(statuses.length, 1, JSON.stringify(statuses));
  assert.equal(statuses[0]!.name, 'device');
  const claimName = statuses[0]!.resourceClaimName!;
  assert.match(claimName, /^with-claim-device-/);
  const claim = get<Claim>('resourceclaim', claimName)!;
  assert.ok(
    claim.metadata.ownerReferences?.some((o) => o.kind === 'Pod' && o.uid === pod.metadata.uid && o.controller),
    'the claim belongs to the pod',
  );
  const results = claim.status?.allocation?.devices?.results ?? [];
  assert.equal(results.length, 1, JSON.stringify(claim.status));
  const { device, ...result } = results[0]!;
  assert.deepEqual(result, { request: 'my-device', driver: DRIVER, pool: node }, "allocated from the pool of the pod's node");
  assert.match(device, /^device-0[0-3]$/);
  assert.deepEqual(
    (claim.status?.reservedFor ?? []).map((r) => [r.resource, r.name, r.uid]),
    [['pods', 'with-claim', pod.metadata.uid]],
  );

  // What the driver's NodePrepareResources made (app/kubeletplugin.go): a CDI spec on the node,
  // one device per request, whose env the container using the claim has and the other has not.
  const claimUID = claim.metadata.uid;
  const specFile = `${DRIVER}-${claimUID}-my-device.json`;
  const cdiDevice = `${DRIVER}/test=claim-${claimUID}-my-device`;
  const env = [`claim_${claimName.replace(/[^a-zA-Z0-9]/g, '_')}_my_device=true`, 'user_a=b'];
  assert.ok(cdiSpecs(node).includes(specFile), `${specFile} in ${CDI_DIR} of ${node}`);
  assert.deepEqual(JSON.parse(inNode(node, 'cat', `${CDI_DIR}/${specFile}`)), {
    cdiVersion: '0.3.0',
    kind: `${DRIVER}/test`,
    devices: [{ name: `claim-${claimUID}-my-device`, containerEdits: { env } }],
  });
  assert.deepEqual(driverEnv('with-claim', 'with-resource'), env);
  assert.deepEqual(driverEnv('with-claim', 'without-resource'), []);
  // The kubelet's record of it (dra_manager_state): the pod, and the device with its CDI name.
  const held = checkpointed(node).find((c) => c.claimUID === claimUID);
  assert.ok(held, `${CHECKPOINT_FILE} on ${node} holds the claim`);
  assert.deepEqual([...held.podUIDs], [pod.metadata.uid]);
  assert.deepEqual(
    held.drivers.get(DRIVER)?.map((d) => [d.poolName, d.deviceName, d.requestNames, d.cdiDeviceIds]),
    [[node, device, ['my-device'], [cdiDevice]]],
  );

  // The kubelet's dra_* metrics: the claim in use, the driver's NodePrepareResources call.
  const metrics = ck(['get', '--raw', `/api/v1/nodes/${node}/proxy/metrics`]);
  const value = (series: string) =>
    Number(
      metrics
        .split('\n')
        .find((l) => l.startsWith(`${series} `))
        ?.split(' ')[1] ?? 'NaN',
    );
  assert.equal(value(`dra_resource_claims_in_use{driver_name="${DRIVER}"}`), 1, 'the claim in use, by its driver');
  assert.equal(value('dra_resource_claims_in_use{driver_name="<any>"}'), 1, 'and in all');
  assert.ok(
    value('dra_operations_duration_seconds_count{operation_name="PrepareResources",is_error="false"}') >= 1,
    'PrepareResources timed',
  );
  // Its full method, of the service the kubelet chose (v1, or v1beta1 for an older driver).
  assert.ok(
    metrics
      .split('\n')
      .some(
        (l) =>
          l.startsWith(`dra_grpc_operations_duration_seconds_count{driver_name="${DRIVER}",method_name="/k8s.io.kubelet.pkg.apis.dra.v1`) &&
          l.includes('.DRAPlugin/NodePrepareResources",grpc_status_code="OK"}'),
      ),
    "the driver's NodePrepareResources call timed",
  );

  // The kubelet unprepares before it lets the pod object go (upstream's
  // PodMightNeedToUnprepareResources): once it is deleted, the spec and the record are gone.
  ck(['-n', ns, 'delete', 'pod', 'with-claim', '--grace-period=1', '--wait=true', '--timeout=90s']);
  assert.ok(!cdiSpecs(node).includes(specFile), `${specFile} removed from ${CDI_DIR} of ${node}`);
  assert.ok(!checkpointed(node).some((c) => c.claimUID === claimUID), `${CHECKPOINT_FILE} on ${node} no longer holds the claim`);
  await eventually(`the generated claim ${claimName} deleted with its pod`, 90_000, async () => !get<Claim>('resourceclaim', claimName));
});

test('uninstalling the driver: its plugins unregister and each kubelet deletes the ResourceSlices of its node', {
  timeout: 8 * 60_000,
}, async () => {
  // What the uninstall takes away must be there first: registered plugins and published slices.
  await driverAtWork();
  // The plugin pods go with the namespace; each removes its sockets when stopped.
  ck(['delete', '-f', MANIFEST, '--wait=false']);
  for (const w of WORKERS) {
    await eventually(`the plugin unregistered from the kubelet of ${w}`, 100_000, async () => !registeredOn(w));
  }
  // The driver leaves its slices; the kubelet deletes a driver's slices on its node once the
  // driver has been away for 30 s (upstream's DRAPluginManager wipingDelay): they are still
  // there once the plugins are gone, and go after.
  assert.deepEqual(
    driverSlices()
      .map((s) => s.spec.nodeName)
      .sort(),
    WORKERS,
    "the slices outlive the plugins, for the kubelet's wiping delay",
  );
  await eventually("the driver's ResourceSlices deleted", 120_000, async () => driverSlices().length === 0, 1000);
});
