// Image pulls over the wire, from the stack's registry (hack/registry.sh: the distribution
// registry holding the images hack/build-images.sh builds, which containerd tries first for
// docker.io and registry.k8s.io): what a user sees when the kubelet pulls, with
// imagePullPolicy Always and for an image the node no longer has.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CoreV1Event } from '@kubernetes/client-node';
import { BUSYBOX, clients, crictl, ensureStack, eventually, kubectl, podSpec, withNamespace } from './stack.ts';

before(() => ensureStack());

const LOCAL_PATH = 'docker.io/rancher/local-path-provisioner:v0.0.30';
const phase = async (ns: string, name: string) => (await clients().core.readNamespacedPod({ name, namespace: ns })).status?.phase;
const events = async (ns: string, name: string) =>
  (await clients().core.listNamespacedEvent({ namespace: ns, fieldSelector: `involvedObject.name=${name}` })).items;
/** The node's image of that name as crictl reports it, or undefined. */
const nodeImage = (name: string) =>
  (JSON.parse(crictl('images', '-o', 'json')).images as { id: string; repoTags: string[]; size: string }[]).find((i) =>
    i.repoTags.includes(name),
  );
/** The Pulling and Pulled events of the pod's container, once both are there. */
async function pullEvents(ns: string, pod: string): Promise<{ pulling: CoreV1Event; pulled: CoreV1Event }> {
  return eventually(`Pulling and Pulled events on ${pod}`, 60_000, async () => {
    const list = await events(ns, pod);
    const pulling = list.find((e) => e.reason === 'Pulling');
    const pulled = list.find((e) => e.reason === 'Pulled');
    return pulling && pulled ? { pulling, pulled } : undefined;
  });
}
// A Go duration (goDuration): the pull's own time, then with its wait for a pull slot (serializeImagePulls).
const DURATION = '(?:\\d+(?:\\.\\d+)?(?:ns|µs|ms|s)|\\d+m[\\d.]+s|0s)';
const PULLED = (image: string) =>
  new RegExp(
    `^Successfully pulled image "${image.replace(/[.]/g, '\\.')}" in ${DURATION} \\(${DURATION} including waiting\\)\\. Image size: (\\d+) bytes\\.$`,
  );

test("imagePullPolicy Always: the image is pulled from the registry even though the node has it, with upstream's events", () =>
  withNamespace(async (ns) => {
    const before = nodeImage(BUSYBOX);
    assert.ok(before, `the node has ${BUSYBOX} (hack/build-images.sh)`);
    const body = podSpec('always');
    body.spec!.containers[0]!.imagePullPolicy = 'Always';
    await clients().core.createNamespacedPod({ namespace: ns, body });
    await eventually('pod always Running', 60_000, async () => (await phase(ns, 'always')) === 'Running');
    const { pulling, pulled } = await pullEvents(ns, 'always');
    assert.equal(pulling.message, `Pulling image "${BUSYBOX}"`);
    assert.equal(pulling.involvedObject.fieldPath, 'spec.containers{main}');
    const m = PULLED(BUSYBOX).exec(pulled.message ?? '');
    assert.ok(m, `upstream's Pulled message, got: ${pulled.message}`);
    assert.equal(m[1], before.size, 'the size the runtime reports for the image');
    assert.equal(nodeImage(BUSYBOX)?.id, before.id, 'the registry served the image the node had');
  }));

test('an image the node no longer has is pulled back from the registry, layers and all, and runs', () =>
  withNamespace(async (ns) => {
    const had = nodeImage(LOCAL_PATH);
    assert.ok(had, `the node has ${LOCAL_PATH} (hack/build-images.sh)`);
    crictl('rmi', LOCAL_PATH);
    assert.equal(nodeImage(LOCAL_PATH), undefined, 'removed from the node');
    const body = podSpec('pulled-back', { restartPolicy: 'Never' }, LOCAL_PATH);
    body.spec!.containers[0]!.command = ['local-path-provisioner', '--version'];
    body.spec!.containers[0]!.imagePullPolicy = 'IfNotPresent';
    await clients().core.createNamespacedPod({ namespace: ns, body });
    await eventually('pod pulled-back Succeeded', 90_000, async () => (await phase(ns, 'pulled-back')) === 'Succeeded');
    assert.match(kubectl('-n', ns, 'logs', 'pulled-back'), /v0\.0\.30/);
    const { pulled } = await pullEvents(ns, 'pulled-back');
    assert.match(pulled.message ?? '', PULLED(LOCAL_PATH));
    assert.equal(nodeImage(LOCAL_PATH)?.id, had.id, 'the same image as before');
  }));
