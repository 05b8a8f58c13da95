// imagePullSecrets against a real registry that wants credentials: a registry served by
// this test on the node IP (no outside registry is reachable), plain HTTP, HTTP basic
// auth, holding the busybox image exported from containerd under a name containerd has
// never seen.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { clients, ensureStack, eventually, podSpec, withNamespace } from './stack.ts';
import { privateBusybox } from './registry.ts';

before(() => ensureStack());

test('imagePullSecrets: without them a private registry answers 401; with a dockerconfigjson secret the pod runs', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    const { registry, image, username, password, rightAuth, close } = await privateBusybox('kts-registry-');

    const dockerConfig = (user: string, pass: string) => ({
      '.dockerconfigjson': JSON.stringify({
        auths: { [registry.address]: { username: user, password: pass, auth: Buffer.from(`${user}:${pass}`).toString('base64') } },
      }),
    });
    const pod = (name: string, secrets: string[]): V1Pod => {
      const p = podSpec(name, {}, image);
      if (secrets.length) p.spec!.imagePullSecrets = secrets.map((s) => ({ name: s }));
      return p;
    };
    const waitingReason = async (name: string) =>
      (await core.readNamespacedPod({ name, namespace: ns })).status?.containerStatuses?.[0]?.state?.waiting?.reason;
    const events = async (name: string) =>
      (await core.listNamespacedEvent({ namespace: ns, fieldSelector: `involvedObject.name=${name}` })).items;

    try {
      await core.createNamespacedSecret({
        namespace: ns,
        body: { metadata: { name: 'regcred' }, type: 'kubernetes.io/dockerconfigjson', stringData: dockerConfig(username, password) },
      });
      await core.createNamespacedSecret({
        namespace: ns,
        body: {
          metadata: { name: 'wrongcred' },
          type: 'kubernetes.io/dockerconfigjson',
          stringData: dockerConfig(username, 'not-the-password'),
        },
      });

      // (a) No imagePullSecrets; and a missing secret next to a wrong one: both are refused.
      await core.createNamespacedPod({ namespace: ns, body: pod('anonymous', []) });
      await core.createNamespacedPod({ namespace: ns, body: pod('wrong', ['absent', 'wrongcred']) });
      for (const name of ['anonymous', 'wrong']) {
        await eventually(`${name}: ErrImagePull or ImagePullBackOff`, 30_000, async () =>
          ['ErrImagePull', 'ImagePullBackOff'].includes((await waitingReason(name)) ?? ''),
        );
        const failed = await eventually(`${name}: a Failed event naming the 401`, 30_000, async () =>
          (await events(name)).find((e) => e.reason === 'Failed' && e.message?.startsWith(`Failed to pull image "${image}"`)),
        );
        // containerd 1.6 says 401 Unauthorized, 2.x "authorization failed: no basic auth credentials".
        assert.match(failed.message!, /401|unauthorized|authorization failed/i, name);
        assert.equal(failed.type, 'Warning');
      }
      const missing = (await events('wrong')).find((e) => e.reason === 'FailedToRetrieveImagePullSecret');
      assert.equal(missing?.type, 'Warning', 'a FailedToRetrieveImagePullSecret event');
      assert.equal(missing?.message, 'Unable to retrieve some image pull secrets (absent); attempting to pull the image may not succeed.');
      assert.equal(missing?.involvedObject?.fieldPath, undefined, 'about the pod, not a container');
      assert.ok(
        registry.requests.some((r) => r.authorization === undefined),
        'the anonymous pod asked without credentials',
      );
      assert.ok(
        registry.requests.some((r) => r.authorization?.startsWith('Basic ') && r.authorization !== rightAuth),
        'the wrong secret was sent',
      );
      assert.ok(!registry.requests.some((r) => r.authorization === rightAuth), 'nobody had the right credentials yet');
      // Gone before the image exists on the node, so that they cannot start from it.
      for (const name of ['anonymous', 'wrong']) await core.deleteNamespacedPod({ name, namespace: ns, gracePeriodSeconds: 0 });

      // (b) The secret with the right credentials: pulled and Running.
      await core.createNamespacedPod({ namespace: ns, body: pod('authorized', ['regcred']) });
      const running = await eventually('authorized Running', 30_000, async () => {
        const p = await core.readNamespacedPod({ name: 'authorized', namespace: ns });
        return p.status?.phase === 'Running' && p.status.containerStatuses?.[0]?.ready ? p : undefined;
      });
      assert.equal(running.status!.containerStatuses![0]!.image, image);
      const reasons = (await events('authorized')).map((e) => e.reason);
      for (const r of ['Pulling', 'Pulled', 'Started']) assert.ok(reasons.includes(r), `event ${r} in ${reasons.join(',')}`);

      // (c) The registry resolved the tag for the right Authorization header. (Its layers share
      // their digests with the busybox already on the node, so containerd need not fetch them.)
      const served = registry.requests.filter((r) => r.status === 200 && r.authorization === rightAuth);
      assert.ok(
        served.some((r) => r.path.includes('/manifests/')),
        'manifest served to the secret',
      );
    } finally {
      await core.deleteNamespacedPod({ name: 'authorized', namespace: ns, gracePeriodSeconds: 0 }).catch(() => {});
      await close();
    }
  }));
