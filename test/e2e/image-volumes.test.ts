// Image volumes (spec.volumes[].image, GA in 1.36) as a container sees them, in the manner of
// upstream's e2e_node image volume tests: the locally built busybox image mounted read-only,
// a file read from it, a subPath of it, the pull reported on the pod; and a volume whose image
// cannot be had keeps the container that mounts it waiting as for its own image. containerd
// mounts image volumes from 2.1 on: with containerd 1.6 (RUNTIME=containerd1) these are skipped.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { BUSYBOX, RUNTIME, clients, crictl, ensureStack, eventually, kubectl, podSpec, withNamespace } from './stack.ts';

before(() => ensureStack());

const skip = RUNTIME === 'containerd2' ? false : `${RUNTIME} cannot mount image volumes (containerd 2.1 and later can)`;
const readPod = (ns: string, name: string) => clients().core.readNamespacedPod({ name, namespace: ns });
const exec = (ns: string, pod: string, script: string) => kubectl('-n', ns, 'exec', pod, '-c', 'main', '--', 'sh', '-c', script).trim();
const events = async (ns: string, name: string) =>
  (await clients().core.listNamespacedEvent({ namespace: ns, fieldSelector: `involvedObject.name=${name}` })).items;

/** A pod whose container mounts an image volume of this image at /img, and its etc directory at /img-etc. */
function withImageVolume(name: string, reference: string, pullPolicy: string): V1Pod {
  return podSpec(name, {
    volumes: [{ name: 'img', image: { reference, pullPolicy } }],
    containers: [
      {
        name: 'main',
        image: BUSYBOX,
        command: ['sleep', '3600'],
        volumeMounts: [
          { name: 'img', mountPath: '/img' },
          { name: 'img', mountPath: '/img-etc', subPath: 'etc' },
        ],
      },
    ],
  });
}

test('an image volume: the image read-only at its mountPath, a subPath of it, the image reported on the pod', { skip }, () =>
  withNamespace(async (ns) => {
    await clients().core.createNamespacedPod({ namespace: ns, body: withImageVolume('reader', BUSYBOX, 'IfNotPresent') });
    const pod = await eventually('pod reader Running', 60_000, async () => {
      const p = await readPod(ns, 'reader');
      return p.status?.phase === 'Running' ? p : undefined;
    });
    // The files of the image itself: busybox_root of hack/build-images.sh.
    assert.match(exec(ns, 'reader', 'cat /img/etc/passwd'), /^root:x:0:0:root:\/root:\/bin\/sh$/m);
    assert.equal(exec(ns, 'reader', 'readlink /img/bin/sh'), 'busybox');
    assert.match(exec(ns, 'reader', 'cat /img-etc/group'), /^nobody:x:65534:$/m, "the subPath is the image's etc");
    assert.equal(exec(ns, 'reader', 'ls /img-etc | sort | tr "\\n" " "'), 'group passwd');
    assert.match(exec(ns, 'reader', 'touch /img/x 2>&1 || echo refused'), /refused/);
    assert.match(exec(ns, 'reader', 'grep " /img " /proc/mounts'), /\sro[,\s]/, 'mounted read-only');

    // The kubelet handed containerd the image, not a host path (upstream's makeMounts).
    const id = pod.status!.containerStatuses![0]!.containerID!.replace(/^containerd:\/\//, '');
    const mounts = JSON.parse(crictl('inspect', '-o', 'json', id)).status.mounts as {
      containerPath: string;
      image?: { image?: string };
      imageSubPath?: string;
      readonly?: boolean;
    }[];
    const img = mounts.find((m) => m.containerPath === '/img');
    const sub = mounts.find((m) => m.containerPath === '/img-etc');
    assert.match(img?.image?.image ?? '', /^sha256:[0-9a-f]{64}$/, 'the resolved image ID');
    assert.equal(sub?.image?.image, img?.image?.image);
    assert.equal(sub?.imageSubPath, 'etc');
    assert.ok(img?.readonly && sub?.readonly);

    // Pulled as a container image is, its event on the pod (no container field path).
    const pulled = (await events(ns, 'reader')).find(
      (e) => e.reason === 'Pulled' && !e.involvedObject.fieldPath && e.message?.includes(`"${BUSYBOX}"`),
    );
    assert.ok(pulled, 'a Pulled event on the pod for the image volume');
  }),
);

test('an image volume whose image cannot be had: the container mounting it waits as for its own image', { skip }, () =>
  withNamespace(async (ns) => {
    const absent = 'kts.local/e2e/absent-image-volume:1';
    const body = withImageVolume('waits', absent, 'Never');
    body.spec!.containers.push({ name: 'other', image: BUSYBOX, command: ['sleep', '3600'] });
    await clients().core.createNamespacedPod({ namespace: ns, body });
    const message = `Container image "${absent}" is not present with pull policy of Never`;
    const statuses = await eventually('main waiting in ErrImageNeverPull, other running', 60_000, async () => {
      const s = (await readPod(ns, 'waits')).status?.containerStatuses ?? [];
      const main = s.find((c) => c.name === 'main'),
        other = s.find((c) => c.name === 'other');
      return main?.state?.waiting?.reason === 'ErrImageNeverPull' && other?.state?.running ? { main, other } : undefined;
    });
    assert.equal(statuses.main.state!.waiting!.message, message);
    const evs = await eventually('the pod and container events', 30_000, async () => {
      const list = await events(ns, 'waits');
      const onPod = list.find((e) => e.reason === 'ErrImageNeverPull' && !e.involvedObject.fieldPath);
      const onContainer = list.find((e) => e.reason === 'Failed' && e.involvedObject.fieldPath === 'spec.containers{main}');
      return onPod && onContainer ? { onPod, onContainer } : undefined;
    });
    assert.equal(evs.onPod.message, message);
    assert.equal(evs.onContainer.message, 'Error: ErrImageNeverPull');
  }),
);
