import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { logger } from '../log/log.ts';
import { fileSource, staticPod } from './static-file.ts';

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

test('fileSource: a file removed and written back with the same content is a REMOVE, then an ADD of the same UID', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kts-static-'));
  const seen: string[] = [];
  const sink = {
    update: (p: Pod) => void seen.push(`update ${p.metadata!.uid}`),
    remove: (uid: string) => void seen.push(`remove ${uid}`),
  };
  const text = 'apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: ns}\nspec: {containers: [{name: c, image: busybox}]}\n';
  const file = join(dir, 'web.yaml');
  writeFileSync(file, text);
  const src = fileSource(dir, 'node-a', sink, logger('test'), 60_000);
  const settle = () => new Promise((r) => setTimeout(r, 300));
  try {
    const uid = seen[0]?.split(' ')[1];
    assert.deepEqual(seen, [`update ${uid}`]);
    rmSync(file);
    writeFileSync(file, text);
    await settle();
    assert.deepEqual(seen, [`update ${uid}`, `remove ${uid}`, `update ${uid}`]);
    writeFileSync(file, text); // rewritten in place, unchanged: nothing to report
    await settle();
    assert.equal(seen.length, 3);
  } finally {
    src.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
