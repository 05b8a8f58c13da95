// Device plugins as a user meets them, with upstream's sample device plugin (its image built from
// the pinned release by hack/build-images.sh) deployed as upstream's e2e tests deploy it: the
// DaemonSet of manifests/addons/sample-device-plugin.yaml, applied with kubectl. The plugin
// registers example.com/resource with two devices, Dev-1 and Dev-2, and its Allocate answers
// with one bind mount per device (/tmp/Dev-N into the container). The checks follow upstream's
// node e2e tests (test/e2e_node/device_plugin_test.go, podresources_test.go): the Node
// advertises the devices, a pod asking for one runs with it, a pod bound past the scheduler
// asking for more than is free fails admission with UnexpectedAdmissionError, the PodResources
// API names the assignment, a kubelet restart keeps it (the checkpoint), and the resource
// leaves allocatable once the plugin is gone.
import { after, before, test } from 'node:test';
import { readFileSync } from 'node:fs';
import assert from 'node:assert/strict';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { BUSYBOX, ROOT, clients, ensureStack, eventually, kubectl, nodeName, restartKubelet, withNamespace } from './stack.ts';
import { podResources } from './pod-resources.ts';

before(() => ensureStack());

const MANIFEST = `${ROOT}/manifests/addons/sample-device-plugin.yaml`;
const RESOURCE = 'example.com/resource';
/** upstream's makeBusyboxPod command: the fake devices the plugin mounted, by name. */
const LIST_DEVICES = "devs=$(ls /tmp/ | grep -E '^Dev-[0-9]+$') && echo stub devices: $devs && sleep 3600";

// Whatever happens, the plugin goes (a rerun applies it again).
after(() => {
  kubectl('delete', '-f', MANIFEST, '--ignore-not-found', '--wait=false');
});

/**
 * The Node's capacity and allocatable of the sample resource ('' when the Node does not list
 * it), whether it is Ready, and when the kubelet last reported its status (ms).
 */
async function devicesOnNode(): Promise<{ capacity: string; allocatable: string; ready: boolean; heartbeat: number }> {
  const n: V1Node = await clients().core.readNode({ name: nodeName() });
  const ready = n.status?.conditions?.find((c) => c.type === 'Ready');
  return {
    capacity: n.status?.capacity?.[RESOURCE] ?? '',
    allocatable: n.status?.allocatable?.[RESOURCE] ?? '',
    ready: ready?.status === 'True',
    heartbeat: ready?.lastHeartbeatTime ? new Date(ready.lastHeartbeatTime).getTime() : 0,
  };
}

function devicePod(name: string, count: number, over: Partial<V1Pod['spec']> = {}): V1Pod {
  return {
    metadata: { name },
    spec: {
      terminationGracePeriodSeconds: 1,
      containers: [
        { name: 'main', image: BUSYBOX, command: ['sh', '-c', LIST_DEVICES], resources: { limits: { [RESOURCE]: `${count}` } } },
      ],
      ...over,
    } as V1Pod['spec'],
  };
}

/** The devices of RESOURCE the PodResources API lists for a pod's container (undefined: the pod is not listed). */
async function assignedDevices(ns: string, pod: string, container = 'main'): Promise<string[] | undefined> {
  const { podResources: pods } = await podResources((c) => c.List);
  const p = pods.find((x) => x.namespace === ns && x.name === pod);
  if (!p) return undefined;
  const c = p.containers.find((x) => x.name === container);
  return (c?.devices ?? [])
    .filter((d) => d.resourceName === RESOURCE)
    .flatMap((d) => d.deviceIds)
    .sort();
}

/**
 * What an operator looks at when a plugin's devices do not show: the plugin's pod (restarts,
 * why it waits), its last lines, and the kubelet's lines about device plugins.
 */
function pluginDiagnostics(): string {
  const run = (what: string, f: () => string) => {
    try {
      return `${what}:\n${f().trim()}`;
    } catch (e) {
      return `${what}: ${(e as Error).message.split('\n')[0]}`;
    }
  };
  const sel = ['-n', 'kube-system', '-l', 'k8s-app=sample-device-plugin'];
  return [
    run('plugin pods', () =>
      kubectl(
        'get',
        'pods',
        ...sel,
        '-o',
        'jsonpath={range .items[*]}{.metadata.name} {.status.phase} {.status.containerStatuses[*].restartCount} {.status.containerStatuses[*].state}{"\\n"}{end}',
      ),
    ),
    run('plugin log', () => kubectl('logs', ...sel, '--tail=15', '--all-containers')),
    run('kubelet log', () =>
      readFileSync(`${ROOT}/_output/local/logs/kubelet-ts.log`, 'utf8')
        .split('\n')
        .filter((l) => /device plugin|Device plugin|ListAndWatch|registration|Endpoint/.test(l))
        .slice(-15)
        .join('\n'),
    ),
  ].join('\n');
}

// About a minute: the plugin waits 10 s before it registers again after a kubelet restart.
test(
  'the sample device plugin: devices on the Node, a pod with one, admission, PodResources, a kubelet restart',
  { timeout: 3 * 60_000 },
  () =>
    withNamespace(async (ns) => {
      try {
        await devicePluginScenario(ns);
      } catch (e) {
        (e as Error).message += `\n${pluginDiagnostics()}`;
        throw e;
      }
    }),
);

async function devicePluginScenario(ns: string): Promise<void> {
  const { core } = clients();
  const node = nodeName();
  const readPod = (name: string) => core.readNamespacedPod({ name, namespace: ns });

  // The plugin's DaemonSet, as a user deploys it: its pod runs on the node and registers.
  kubectl('apply', '-f', MANIFEST);
  await eventually(
    'the sample device plugin pod Running',
    60_000,
    async () =>
      kubectl(
        '-n',
        'kube-system',
        'get',
        'pods',
        '-l',
        'k8s-app=sample-device-plugin',
        '--field-selector',
        `spec.nodeName=${node}`,
        '-o',
        'jsonpath={.items[*].status.phase}',
      ).trim() === 'Running',
    500,
  );
  const advertised = await eventually(
    `Node ${node} listing ${RESOURCE}: 2 in capacity and allocatable`,
    60_000,
    async () => {
      const d = await devicesOnNode();
      return d.capacity === '2' && d.allocatable === '2' ? d : undefined;
    },
    500,
  );
  assert.ok(advertised.ready, 'the Node stays Ready');

  // The kubelet's view of what it can hand out: both devices of the resource.
  const allocatable = await eventually('the PodResources API answering GetAllocatableResources', 30_000, () =>
    podResources((c) => c.GetAllocatableResources),
  );
  assert.deepEqual(
    allocatable.devices
      .filter((d) => d.resourceName === RESOURCE)
      .flatMap((d) => d.deviceIds)
      .sort(),
    ['Dev-1', 'Dev-2'],
    'GetAllocatableResources lists Dev-1 and Dev-2',
  );

  // A pod asking for one device, placed by the scheduler (which sees the Node's allocatable),
  // runs with exactly one of them: the plugin's Allocate mounts /tmp/Dev-N into the container.
  await core.createNamespacedPod({ namespace: ns, body: devicePod('one', 1) });
  const one = await eventually(
    'pod one Running',
    60_000,
    async () => {
      const p = await readPod('one');
      return p.status?.phase === 'Running' ? p : undefined;
    },
    500,
  );
  assert.equal(one.spec!.nodeName, node);
  const logs = await eventually('pod one listing its device', 20_000, async () => {
    const l = kubectl('-n', ns, 'logs', 'one');
    return /stub devices:/.test(l) ? l : undefined;
  });
  const device = /^stub devices: (Dev-[12])$/m.exec(logs)?.[1];
  assert.ok(device, `pod one sees exactly one device in /tmp: ${JSON.stringify(logs)}`);
  const mounts = kubectl('-n', ns, 'exec', 'one', '--', 'cat', '/proc/mounts');
  assert.match(mounts, new RegExp(` /tmp/${device} `), `/tmp/${device} is a mount in the container (the plugin's Allocate response)`);
  assert.deepEqual(await assignedDevices(ns, 'one'), [device], 'the PodResources API lists the device for pod one');
  // ResourceHealthStatus (beta, on): the container's status names its device and its health.
  assert.deepEqual(
    JSON.parse(JSON.stringify(one.status?.containerStatuses?.[0]?.allocatedResourcesStatus ?? null)),
    [{ name: RESOURCE, resources: [{ resourceID: device, health: 'Healthy' }] }],
    'pod one status: allocatedResourcesStatus',
  );

  // A pod asking for two, bound to the node past the scheduler (as upstream's node e2e tests
  // place their pods): one device is free, so the kubelet's admission refuses it, and never
  // lists it in the PodResources API.
  await core.createNamespacedPod({ namespace: ns, body: devicePod('two', 2, { nodeName: node }) });
  const two = await eventually(
    'pod two Failed',
    30_000,
    async () => {
      const p = await readPod('two');
      return p.status?.phase === 'Failed' ? p : undefined;
    },
    500,
  );
  assert.equal(two.status!.reason, 'UnexpectedAdmissionError');
  assert.equal(
    two.status!.message,
    `Pod was rejected: Allocate failed due to requested number of devices unavailable for ${RESOURCE}. Requested: 2, Available: 1, which is unexpected`,
  );
  const events = await core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=two' });
  assert.ok(
    events.items.some((e) => e.reason === 'UnexpectedAdmissionError' && e.type === 'Warning'),
    `an UnexpectedAdmissionError event: ${events.items.map((e) => `${e.reason}: ${e.message}`).join('; ')}`,
  );
  assert.equal(await assignedDevices(ns, 'two'), undefined, 'a pod refused at admission is not in the PodResources API');

  // The kubelet restarts: the running pod keeps its container and its device (the
  // checkpoint), the plugin registers again, and the Node lists the devices again.
  const containerID = one.status!.containerStatuses![0]!.containerID;
  const restartedAt = Math.floor(Date.now() / 1000) * 1000; // heartbeats are in whole seconds
  restartKubelet();
  // (The status the restarted kubelet reported: a heartbeat from after the restart.)
  await eventually(
    `Node ${node} Ready with ${RESOURCE} 2 in capacity and allocatable, reported after the restart`,
    60_000,
    async () => {
      const d = await devicesOnNode();
      return d.heartbeat >= restartedAt && d.ready && d.capacity === '2' && d.allocatable === '2';
    },
    500,
  );
  const again = await readPod('one');
  assert.equal(again.metadata!.uid, one.metadata!.uid);
  assert.equal(again.status!.phase, 'Running');
  assert.equal(again.status!.containerStatuses![0]!.containerID, containerID, 'the same container still runs');
  assert.equal(again.status!.containerStatuses![0]!.restartCount, 0);
  const kept = await eventually('the PodResources API answering after the restart', 30_000, async () => assignedDevices(ns, 'one'));
  assert.deepEqual(kept, [device], 'pod one keeps its device across the kubelet restart');
  assert.match(kubectl('-n', ns, 'exec', 'one', '--', 'ls', '/tmp'), new RegExp(`^${device}$`, 'm'));

  // The plugin goes: its devices leave allocatable (upstream keeps them in capacity, as
  // unhealthy, for the endpoint's 5-minute grace period).
  kubectl('delete', '-f', MANIFEST, '--wait=true', '--timeout=60s');
  await eventually(
    'the sample device plugin pod gone',
    60_000,
    async () => kubectl('-n', 'kube-system', 'get', 'pods', '-l', 'k8s-app=sample-device-plugin', '-o', 'name').trim() === '',
    500,
  );
  await eventually(
    `${RESOURCE} out of Node ${node}'s allocatable`,
    30_000,
    async () => {
      const d = await devicesOnNode();
      return d.allocatable === '' || d.allocatable === '0';
    },
    500,
  );
}
