// Credential provider plugins (--image-credential-provider-config, -bin-dir) against a real
// registry that wants credentials: the one image-pull-secrets.test.ts serves, and the tests'
// own counting plugin (test/fixtures/credential-provider/counting-provider) in token mode,
// which logs each request so that the calls, the cache and the token can be checked. Pods
// have no imagePullSecrets: the plugin's credentials are their only ones.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { clients, ensureStack, eventually, kubectlInput, podSpec, ROOT, restartKubelet, withNamespace } from './stack.ts';
import { privateBusybox } from './registry.ts';

const PLUGIN = join(ROOT, 'test/fixtures/credential-provider/counting-provider');
const KUBELET_LOG = join(ROOT, '_output/local/logs/kubelet-ts.log');
const AUDIENCE = 'kubelet-ts-e2e-registry';

// The node authorizer lets a kubelet ask for a token only for audiences its pods' volumes name,
// or those the cluster grants it (ServiceAccountNodeAudienceRestriction): the administrator's
// step of upstream's credential provider docs, the verb request-serviceaccounts-token-audience.
const GRANT = JSON.stringify({
  apiVersion: 'v1',
  kind: 'List',
  items: [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'kts-e2e-credential-provider-audience' },
      rules: [{ verbs: ['request-serviceaccounts-token-audience'], apiGroups: [''], resources: [AUDIENCE] }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'kts-e2e-credential-provider-audience' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'kts-e2e-credential-provider-audience' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:nodes' }],
    },
  ],
});
before(() => {
  ensureStack();
  kubectlInput(GRANT, 'apply', '-f', '-');
});
// The stack's kubelet again, without the plugins.
after(() => {
  restartKubelet();
  kubectlInput(GRANT, 'delete', '--ignore-not-found', '-f', '-');
});

test('credential providers: a pod without pull secrets pulls a private image with the plugin; the cache spares a second call; a failure is ErrImagePull', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    const { registry, image, username, password, rightAuth, work, close } = await privateBusybox('kts-credprov-');

    // The plugin, its config (token mode: the pod's service account token for AUDIENCE, the
    // cache per service account), and the files it reads and writes.
    const binDir = join(work, 'bin');
    mkdirSync(binDir);
    copyFileSync(PLUGIN, join(binDir, 'e2e-counting'));
    chmodSync(join(binDir, 'e2e-counting'), 0o755);
    const calls = join(work, 'calls');
    const failFile = join(work, 'fail');
    const config = join(work, 'credential-providers.yaml');
    writeFileSync(
      config,
      `apiVersion: kubelet.config.k8s.io/v1
kind: CredentialProviderConfig
providers:
- name: e2e-counting
  matchImages: ["${registry.address}"]
  defaultCacheDuration: 10m
  apiVersion: credentialprovider.kubelet.k8s.io/v1
  tokenAttributes:
    serviceAccountTokenAudience: ${AUDIENCE}
    requireServiceAccount: false
    cacheType: ServiceAccount
  env:
  - {name: CALLS_FILE, value: "${calls}"}
  - {name: FAIL_FILE, value: "${failFile}"}
  - {name: AUTH_KEY, value: "${registry.address}"}
  - {name: USERNAME, value: "${username}"}
  - {name: PASSWORD, value: "${password}"}
  - {name: CACHE_KEY_TYPE, value: Registry}
`,
    );
    const requests = () =>
      existsSync(calls)
        ? readFileSync(calls, 'utf8')
            .trim()
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as { image: string; serviceAccountToken?: string; kind: string; apiVersion: string })
        : [];
    const pod = (name: string, serviceAccountName?: string): V1Pod => {
      const p = podSpec(name, serviceAccountName ? { serviceAccountName } : {}, image);
      p.spec!.containers[0]!.imagePullPolicy = 'Always';
      return p;
    };
    const running = (name: string) =>
      eventually(`${name} Running`, 60_000, async () => {
        const p = await core.readNamespacedPod({ name, namespace: ns });
        return p.status?.phase === 'Running' && p.status.containerStatuses?.[0]?.ready ? p : undefined;
      });
    const logOffset = existsSync(KUBELET_LOG) ? readFileSync(KUBELET_LOG).length : 0;

    try {
      restartKubelet(undefined, {
        KTS_KUBELET_FLAGS: `--image-credential-provider-config ${config} --image-credential-provider-bin-dir ${binDir}`,
      });

      // (a) No imagePullSecrets: the plugin's credentials pull the private image.
      await core.createNamespacedPod({ namespace: ns, body: pod('first') });
      const first = await running('first');
      assert.equal(first.status!.containerStatuses![0]!.image, image);
      const afterFirst = requests();
      assert.equal(afterFirst.length, 1, 'the plugin was called once');
      const req = afterFirst[0]!;
      assert.equal(req.kind, 'CredentialProviderRequest');
      assert.equal(req.apiVersion, 'credentialprovider.kubelet.k8s.io/v1');
      assert.equal(req.image, `${registry.address}/e2e/busybox`, 'the repository, without the tag');
      // Token mode: a token of the pod's service account, for the provider's audience, bound to the pod.
      const claims = JSON.parse(Buffer.from(req.serviceAccountToken!.split('.')[1]!, 'base64url').toString('utf8'));
      assert.equal(claims.sub, `system:serviceaccount:${ns}:default`);
      assert.deepEqual([claims.aud].flat(), [AUDIENCE]);
      assert.equal(claims['kubernetes.io']?.pod?.name, 'first');
      assert.ok(
        registry.requests.some((r) => r.status === 200 && r.authorization === rightAuth),
        'the registry served the plugin credentials',
      );

      // (b) A second pod of the same service account: pulled again (Always) with the cached credentials.
      const served = registry.requests.length;
      await core.createNamespacedPod({ namespace: ns, body: pod('second') });
      await running('second');
      assert.ok(
        registry.requests.slice(served).some((r) => r.authorization === rightAuth),
        'the second pull went to the registry',
      );
      assert.equal(requests().length, 1, 'no second call: the cache (per service account, 10m) answered');

      // (c) The plugin fails (another service account: not in the cache, so the plugin is run):
      // upstream logs the plugin's error and pulls without its credentials, which the registry refuses.
      writeFileSync(failFile, 'e2e: the token service refused the request');
      await core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'other' } } });
      await core.createNamespacedPod({ namespace: ns, body: pod('refused', 'other') });
      await eventually('refused: ErrImagePull or ImagePullBackOff', 60_000, async () => {
        const p = await core.readNamespacedPod({ name: 'refused', namespace: ns });
        return ['ErrImagePull', 'ImagePullBackOff'].includes(p.status?.containerStatuses?.[0]?.state?.waiting?.reason ?? '');
      });
      const failed = await eventually('refused: a Failed event', 30_000, async () =>
        (await core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=refused' })).items.find(
          (e) => e.reason === 'Failed' && e.message?.startsWith(`Failed to pull image "${image}"`),
        ),
      );
      assert.match(failed.message!, /401|unauthorized|authorization failed/i);
      assert.ok(requests().length >= 2, 'the plugin was run for the other service account');
      const log = readFileSync(KUBELET_LOG).subarray(logOffset).toString('utf8');
      assert.match(
        log,
        /Failed to provide credentials for image.*e2e: the token service refused the request/,
        "the plugin's message in the kubelet's log",
      );
    } finally {
      for (const name of ['first', 'second', 'refused'])
        await core.deleteNamespacedPod({ name, namespace: ns, gracePeriodSeconds: 0 }).catch(() => {});
      await close();
    }
  }));
