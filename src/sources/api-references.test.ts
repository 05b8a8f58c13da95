import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, PodSpec, Volume } from 'kubernetes-types/core/v1.js';
import { apiObjectReference } from './api-references.ts';
import { staticPod } from './static-file.ts';

const spec = (s: Partial<PodSpec>): Pod => ({ spec: { containers: [{ name: 'c', image: 'busybox' }], ...s } });
const vol = (v: Omit<Volume, 'name'>): Pod => spec({ volumes: [{ name: 'v', ...v }] });

// upstream's podutil.HasAPIObjectReference, case by case.
test('apiObjectReference: what a static pod may not name, worded as upstream', () => {
  const rows: [string, Pod, ReturnType<typeof apiObjectReference>][] = [
    ['nothing', spec({}), undefined],
    [
      'hostPath, emptyDir, downwardAPI, a volume with no source',
      spec({
        volumes: [{ name: 'a', hostPath: { path: '/x' } }, { name: 'b', emptyDir: {} }, { name: 'c', downwardAPI: {} }, { name: 'd' }],
      }),
      undefined,
    ],
    ['a service account', spec({ serviceAccountName: 'default' }), { resource: 'serviceaccounts' }],
    ['an image pull secret', spec({ imagePullSecrets: [{ name: 'reg' }] }), { resource: 'secrets' }],
    [
      'an env secret',
      spec({ containers: [{ name: 'c', image: 'b', env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] }] }),
      { resource: 'secrets' },
    ],
    ['a secret volume', vol({ secret: { secretName: 's' } }), { resource: 'secrets' }],
    [
      'a config map in envFrom',
      spec({ containers: [{ name: 'c', image: 'b', envFrom: [{ configMapRef: { name: 'm' } }] }] }),
      { resource: 'configmaps' },
    ],
    ['a claim', spec({ resourceClaims: [{ name: 'gpu' }] }), { resource: 'resourceclaims' }],
    ['a PVC', vol({ persistentVolumeClaim: { claimName: 'data' } }), { resource: 'persistentvolumeclaims' }],
    ['an ephemeral volume', vol({ ephemeral: {} }), { resource: 'persistentvolumeclaims (via ephemeral volumes)' }],
    ['a CSI volume', vol({ csi: { driver: 'd' } }), { resource: 'csidrivers (via CSI volumes)' }],
    [
      'a projected token',
      vol({ projected: { sources: [{ downwardAPI: {} }, { serviceAccountToken: { path: 't' } }] } }),
      { resource: 'serviceaccounts (via projected volumes)' },
    ],
    ['a projected downward API alone', vol({ projected: { sources: [{ downwardAPI: {} }] } }), undefined],
    ['an unknown volume type', vol({ madeUp: {} } as never), { error: 'unknown volume type for volume  "v"' }],
  ];
  for (const [name, pod, want] of rows) assert.deepEqual(apiObjectReference(pod), want, name);
});

test("a static pod naming a secret is refused with upstream's message, unless PreventStaticPodAPIReferences is off", () => {
  const manifest = JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web' },
    spec: { containers: [{ name: 'c', image: 'busybox' }], volumes: [{ name: 's', secret: { secretName: 'tls' } }] },
  });
  assert.throws(() => staticPod(manifest, '/etc/kubernetes/manifests/web.yaml', 'n1'), /web\.yaml: static pods may not reference secrets$/);
  assert.equal(staticPod(manifest, '/etc/kubernetes/manifests/web.yaml', 'n1', false).metadata?.name, 'web-n1');
});
