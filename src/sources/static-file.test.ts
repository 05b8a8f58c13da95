import { test } from 'node:test';
import assert from 'node:assert/strict';
import { staticPod } from './static-file.ts';

const manifest = (name = 'web', image = 'busybox:1.36') =>
  `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}, namespace: kube-system}\nspec:\n  containers: [{name: c, image: ${image}}]\n`;

test('a static pod: name suffixed with the node, UID from node, file and content, source annotations', () => {
  const p = staticPod(manifest(), '/etc/kubernetes/manifests/web.yaml', 'vm');
  assert.equal(p.metadata!.name, 'web-vm');
  assert.equal(p.metadata!.namespace, 'kube-system');
  assert.match(p.metadata!.uid!, /^[0-9a-f]{32}$/);
  assert.equal(p.metadata!.annotations!['kubernetes.io/config.source'], 'file');
  assert.equal(p.metadata!.annotations!['kubernetes.io/config.hash'], p.metadata!.uid);
  assert.equal(p.spec!.nodeName, 'vm');
  assert.equal(staticPod(manifest(), '/etc/kubernetes/manifests/web.yaml', 'vm').metadata!.uid, p.metadata!.uid, 'stable');
  assert.notEqual(
    staticPod(manifest('web', 'busybox:1.37'), '/etc/kubernetes/manifests/web.yaml', 'vm').metadata!.uid,
    p.metadata!.uid,
    'an edit is a new pod',
  );
  assert.notEqual(staticPod(manifest(), '/etc/kubernetes/manifests/web.yaml', 'other').metadata!.uid, p.metadata!.uid, 'another node');
  assert.equal(
    staticPod(
      '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"j"},"spec":{"containers":[{"name":"c","image":"i"}]}}',
      '/m/j.json',
      'vm',
    ).metadata!.namespace,
    'default',
    'json, default namespace',
  );
});

test('bad manifests are refused naming the file and the reason', () => {
  const cases: [string, RegExp][] = [
    ['key: [unclosed', /m\.yaml: invalid YAML/],
    ['apiVersion: v1\nkind: Deployment\n', /want apiVersion v1, kind Pod/],
    [
      'apiVersion: v1\nkind: Pod\nmetadata: {name: Bad_Name}\nspec: {containers: [{name: c, image: i}]}',
      /metadata.name "Bad_Name" is not a valid/,
    ],
    ['apiVersion: v1\nkind: Pod\nmetadata: {name: ok}\nspec: {containers: []}', /spec.containers: at least one container/],
    ['apiVersion: v1\nkind: Pod\nmetadata: {name: ok}\nspec: {containers: [{name: c}]}', /spec.containers\[0\].image: required/],
  ];
  for (const [text, re] of cases) assert.throws(() => staticPod(text, '/m.yaml', 'vm'), re);
});
