// Ensure-secret-pulled-images (KEP-2535, KubeletEnsureSecretPulledImages, on in v1.36) with the
// default imagePullCredentialsVerificationPolicy, NeverVerifyPreloadedImages: a private image
// one pod pulled with its secret is not there for the taking by a pod of another namespace,
// IfNotPresent or not. The registry is image-pull-secrets.test.ts's (served by the test on the
// node IP, HTTP basic auth, busybox's bytes under a name containerd has never seen).
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import {
  clients,
  ensureStack,
  eventually,
  imageId,
  KUBELET_ROOT_DIR,
  kubectl,
  nodeName,
  podSpec,
  restartKubelet,
  seriesValue,
  withNamespace,
} from './stack.ts';
import { privateBusybox } from './registry.ts';

const RECORDS = join(KUBELET_ROOT_DIR, 'image_manager');

before(() => ensureStack());

test('ensure-secret-pulled-images: another namespace without the secret gets ErrImagePull for the present image; its own secret runs it; the records are on disk; an allowlisted image runs for anyone', () =>
  withNamespace((owner) =>
    withNamespace(async (other) => {
      const { core } = clients();
      // Its close() also forgets the kubelet's record of busybox's ID (stack.ts forgetPulledImage).
      const { registry, image, username, password, rightAuth, close } = await privateBusybox('kts-pulled-');
      let restarted = false;
      const repository = image.slice(0, image.lastIndexOf(':'));

      const secret = async (namespace: string, name: string, extra: Record<string, string> = {}) =>
        (
          await core.createNamespacedSecret({
            namespace,
            body: {
              metadata: { name },
              type: 'kubernetes.io/dockerconfigjson',
              stringData: { '.dockerconfigjson': JSON.stringify({ auths: { [registry.address]: { username, password, ...extra } } }) },
            },
          })
        ).metadata!.uid!;
      const pod = (name: string, secrets: string[]): V1Pod => {
        const p = podSpec(name, {}, image);
        p.spec!.containers[0]!.imagePullPolicy = 'IfNotPresent';
        if (secrets.length) p.spec!.imagePullSecrets = secrets.map((s) => ({ name: s }));
        return p;
      };
      const running = (namespace: string, name: string) =>
        eventually(`${namespace}/${name} Running`, 20_000, async () => {
          const p = await core.readNamespacedPod({ name, namespace });
          return p.status?.phase === 'Running' && p.status.containerStatuses?.[0]?.ready ? p : undefined;
        });
      const events = async (namespace: string, name: string) =>
        (await core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${name}` })).items;

      try {
        // (a) Pod A, its namespace's secret: pulls the private image and runs.
        const ownerSecret = await secret(owner, 'regcred');
        await core.createNamespacedPod({ namespace: owner, body: pod('a', ['regcred']) });
        await running(owner, 'a');
        const id = imageId(image);
        const pulledA = (await events(owner, 'a')).find((e) => e.reason === 'Pulled');
        assert.match(
          pulledA?.message ?? '',
          new RegExp(`^Successfully pulled image "${image.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}" in `),
        );

        // The records, in upstream's layout and format: no intent left, the record of the image
        // ID naming the secret that pulled it with the hash of its credentials.
        assert.deepEqual(
          readdirSync(join(RECORDS, 'pulling')).filter((f) => f.startsWith('sha256-')),
          [],
          'no pull intent left',
        );
        // The files on disk as the kubelet counted them after its last write.
        const m = kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/metrics`);
        assert.equal(seriesValue(m, 'kubelet_imagemanager_ondisk_pullintents'), 0);
        assert.equal(
          seriesValue(m, 'kubelet_imagemanager_ondisk_pulledrecords'),
          readdirSync(join(RECORDS, 'pulled')).filter((f) => f.startsWith('sha256-') && !f.endsWith('.tmp')).length,
        );
        const recordFile = join(RECORDS, 'pulled', `sha256-${createHash('sha256').update(id).digest('hex')}`);
        assert.ok(existsSync(recordFile), `${recordFile} exists`);
        const record = JSON.parse(readFileSync(recordFile, 'utf8'));
        assert.equal(record.kind, 'ImagePulledRecord');
        assert.equal(record.apiVersion, 'kubelet.config.k8s.io/v1beta1');
        assert.equal(record.imageRef, id);
        const hash = createHash('sha256').update(JSON.stringify({ username, password })).digest('hex');
        assert.deepEqual(record.credentialMapping[repository], {
          kubernetesSecrets: [{ uid: ownerSecret, namespace: owner, name: 'regcred', credentialHash: hash }],
        });

        // (b) Pod B, another namespace, no secret, IfNotPresent: the image is on the node, but
        // the kubelet pulls it again with B's (no) credentials, which the registry refuses.
        const servedBeforeB = registry.requests.length;
        await core.createNamespacedPod({ namespace: other, body: pod('b', []) });
        await eventually('b: ErrImagePull or ImagePullBackOff', 20_000, async () => {
          const p = await core.readNamespacedPod({ name: 'b', namespace: other });
          return ['ErrImagePull', 'ImagePullBackOff'].includes(p.status?.containerStatuses?.[0]?.state?.waiting?.reason ?? '');
        });
        const failed = await eventually('b: a Failed event naming the 401', 20_000, async () =>
          (await events(other, 'b')).find((e) => e.reason === 'Failed' && e.message?.startsWith(`Failed to pull image "${image}"`)),
        );
        // containerd 1.6 says 401 Unauthorized, 2.x "authorization failed: no basic auth credentials".
        assert.match(failed.message!, /401|unauthorized|authorization failed/i);
        assert.ok(
          registry.requests.slice(servedBeforeB).some((r) => r.authorization === undefined),
          'B asked the registry, without credentials',
        );
        assert.ok(!(await events(other, 'b')).some((e) => e.reason === 'Started'), 'B never started');

        // (c) Pod C, the other namespace with its own secret for the same account (another email:
        // another credential hash): the kubelet verifies with a pull that the registry accepts,
        // the layers already on the node; C runs and its secret joins the record.
        const otherSecret = await secret(other, 'own', { email: 'c@example.com' });
        const servedBeforeC = registry.requests.length;
        await core.createNamespacedPod({ namespace: other, body: pod('c', ['own']) });
        await running(other, 'c');
        assert.ok(
          registry.requests
            .slice(servedBeforeC)
            .some((r) => r.status === 200 && r.authorization === rightAuth && r.path.includes('/manifests/')),
          "C's pull went to the registry with its credentials",
        );
        const reasonsC = (await events(other, 'c')).map((e) => `${e.reason}: ${e.message}`);
        assert.ok(
          reasonsC.some((m) => m.startsWith(`Pulling: Pulling image "${image}"`)),
          reasonsC.join('\n'),
        );
        const merged = JSON.parse(readFileSync(recordFile, 'utf8')).credentialMapping[repository].kubernetesSecrets as {
          namespace: string;
          uid: string;
        }[];
        assert.deepEqual(
          merged.map((s) => `${s.namespace}/${s.uid}`).sort(),
          [`${owner}/${ownerSecret}`, `${other}/${otherSecret}`].sort(),
        );

        // (d) Pod A2, A's namespace and secret again: on record, so no pull.
        const servedBeforeA2 = registry.requests.length;
        await core.createNamespacedPod({ namespace: owner, body: pod('a2', ['regcred']) });
        await running(owner, 'a2');
        const pulledA2 = (await events(owner, 'a2')).find((e) => e.reason === 'Pulled');
        assert.equal(pulledA2?.message, `Container image "${image}" already present on machine and can be accessed by the pod`);
        assert.equal(registry.requests.length, servedBeforeA2, 'no request to the registry');

        // (e) The policy NeverVerifyAllowlistedImages with the repository on
        // preloadedImagesVerificationAllowlist: the image runs for a pod with no secret at all,
        // without asking the registry.
        restartKubelet(
          `imagePullCredentialsVerificationPolicy: NeverVerifyAllowlistedImages\npreloadedImagesVerificationAllowlist: ["${repository}"]\n`,
        );
        restarted = true;
        const servedBeforeD = registry.requests.length;
        await eventually('d created once the kubelet is back', 60_000, async () =>
          core.createNamespacedPod({ namespace: other, body: pod('d', []) }).then(() => true),
        );
        await eventually(
          `${other}/d Running`,
          60_000,
          async () => (await core.readNamespacedPod({ name: 'd', namespace: other })).status?.phase === 'Running',
        );
        const pulledD = (await events(other, 'd')).find((e) => e.reason === 'Pulled');
        assert.equal(pulledD?.message, `Container image "${image}" already present on machine and can be accessed by the pod`);
        assert.equal(registry.requests.length, servedBeforeD, 'no request to the registry');
      } finally {
        if (restarted) restartKubelet();
        for (const [namespace, name] of [
          [owner, 'a'],
          [owner, 'a2'],
          [other, 'b'],
          [other, 'c'],
          [other, 'd'],
        ] as const)
          await core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 }).catch(() => {});
        await close();
      }
    }),
  ));
