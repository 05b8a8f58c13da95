import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cacheFilename, decodeIntent, decodePulledRecord, encodeIntent, encodePulledRecord } from './records.ts';

test('cacheFilename: "sha256-" and the hex sha256 of the key, as upstream names the files', () => {
  // Names upstream's own test data carries for these keys (pullmanager/testdata).
  const cases: [string, string][] = [
    ['docker.io/testing/test:latest', 'sha256-aef2af226629a35d5f3ef0fdbb29fdbebf038d0acd8850590e8c48e1e283aa56'],
    ['testimageref', 'sha256-b3c0cc4278800b03a308ceb2611161430df571ca733122f0a40ac8b9792a9064'],
    ['testimage-anonpull', 'sha256-a2eace2182b24cdbbb730798e47b10709b9ef5e0f0c1624a3bc06c8ca987727a'],
  ];
  for (const [key, want] of cases) assert.equal(cacheFilename(key), want, key);
});

test('encode: the v1beta1 JSON upstream writes, fields in struct order, empty parts left out', () => {
  assert.equal(
    encodeIntent({ image: 'docker.io/testing/test:latest' }),
    '{"kind":"ImagePullIntent","apiVersion":"kubelet.config.k8s.io/v1beta1","image":"docker.io/testing/test:latest"}\n',
  );
  const t = Date.parse('2024-10-21T12:26:40.789Z');
  const cases: [Parameters<typeof encodePulledRecord>[0], string][] = [
    [
      { lastUpdatedTime: t, imageRef: 'empty', credentialMapping: {} },
      '{"kind":"ImagePulledRecord","apiVersion":"kubelet.config.k8s.io/v1beta1","lastUpdatedTime":"2024-10-21T12:26:40Z","imageRef":"empty"}\n',
    ],
    [
      { lastUpdatedTime: t, imageRef: 'anon', credentialMapping: { 'docker.io/testing/test': { nodePodsAccessible: true } } },
      '{"kind":"ImagePulledRecord","apiVersion":"kubelet.config.k8s.io/v1beta1","lastUpdatedTime":"2024-10-21T12:26:40Z","imageRef":"anon","credentialMapping":{"docker.io/testing/test":{"nodePodsAccessible":true}}}\n',
    ],
    [
      {
        lastUpdatedTime: t,
        imageRef: 'sha256:abc',
        credentialMapping: {
          'r.io/b': { kubernetesServiceAccounts: [{ name: 'sa', namespace: 'ns', uid: 'u2' }] },
          'r.io/a': { kubernetesSecrets: [{ name: 'pull', namespace: 'ns', uid: 'u1', credentialHash: 'h<&>' }] },
        },
      },
      '{"kind":"ImagePulledRecord","apiVersion":"kubelet.config.k8s.io/v1beta1","lastUpdatedTime":"2024-10-21T12:26:40Z","imageRef":"sha256:abc","credentialMapping":{"r.io/a":{"kubernetesSecrets":[{"uid":"u1","namespace":"ns","name":"pull","credentialHash":"h\\u003c\\u0026\\u003e"}]},"r.io/b":{"kubernetesServiceAccounts":[{"uid":"u2","namespace":"ns","name":"sa"}]}}}\n',
    ],
  ];
  for (const [r, want] of cases) {
    assert.equal(encodePulledRecord(r), want, r.imageRef);
    // And back, to the second.
    assert.deepEqual(decodePulledRecord(want).value, { ...r, lastUpdatedTime: Math.floor(t / 1000) * 1000 });
  }
});

test('decode: v1alpha1 and v1beta1 read (only v1beta1 is current); unknown fields, kinds and versions refused', () => {
  const alpha =
    '{"kind":"ImagePulledRecord","apiVersion":"kubelet.config.k8s.io/v1alpha1","lastUpdatedTime":"2024-10-21T12:26:40Z","imageRef":"ref","credentialMapping":{"docker.io/testing/test":{"kubernetesServiceAccounts":[{"uid":"u","namespace":"default","name":"sa"}]}}}';
  const d = decodePulledRecord(alpha);
  assert.equal(d.current, false);
  assert.deepEqual(d.value.credentialMapping, {
    'docker.io/testing/test': { kubernetesServiceAccounts: [{ uid: 'u', namespace: 'default', name: 'sa' }] },
  });
  assert.deepEqual(decodeIntent('{"kind":"ImagePullIntent","apiVersion":"kubelet.config.k8s.io/v1alpha1","image":"a:1"}'), {
    value: { image: 'a:1' },
    current: false,
  });
  assert.equal(decodeIntent(encodeIntent({ image: 'a:1' })).current, true);
  const bad: [string, RegExp][] = [
    ['{"kind":"ImagePullIntent","apiVersion":"kubelet.config.k8s.io/v1beta1","image":"a","extra":1}', /unknown field "extra"/],
    ['{"kind":"ImagePulledRecord","apiVersion":"kubelet.config.k8s.io/v1beta1","image":"a"}', /expected ImagePullIntent/],
    [
      '{"kind":"ImagePullIntent","apiVersion":"kubelet.config.k8s.io/v1","image":"a"}',
      /no kind "ImagePullIntent" is registered for version/,
    ],
    ['{"kind":"ImagePullIntent",', /not JSON/],
  ];
  for (const [text, re] of bad) assert.throws(() => decodeIntent(text), re, text);
  // Upstream's broken-record test data: not JSON.
  assert.throws(
    () => decodePulledRecord('{"kind":"ImagePulledRecord","apiVersion":"kubelet.config.k8s.io/v1alpha1","imageRef":"x":"y"}'),
    /not JSON/,
  );
  assert.throws(
    () =>
      decodePulledRecord(
        '{"kind":"ImagePulledRecord","apiVersion":"kubelet.config.k8s.io/v1beta1","imageRef":"x","credentialMapping":{"i":{"kubernetesSecrets":[{"uid":"u","namespace":"n","name":"s","credentialHash":"h","x":1}]}}}',
      ),
    /unknown field "x"/,
  );
});
