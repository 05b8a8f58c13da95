import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaults, parseKubeletConfig } from '../config/kubelet-config.ts';
import { configzDocument, goDuration } from './configz.ts';

test('goDuration prints as Go time.Duration does', () => {
  const cases: [number, string][] = [
    [0, '0s'],
    [300, '300ms'],
    [1000, '1s'],
    [1500, '1.5s'],
    [10_000, '10s'],
    [60_000, '1m0s'],
    [90_000, '1m30s'],
    [120_000, '2m0s'],
    [300_000, '5m0s'],
    [3_600_000, '1h0m0s'],
    [4 * 3_600_000 + 1000, '4h0m1s'],
    [0.5, '500µs'],
    [0.0001, '100ns'],
    [-2000, '-2s'],
  ];
  for (const [ms, want] of cases) assert.equal(goDuration(ms), want, String(ms));
});

test('configz: the effective configuration under upstream field names, empty fields left out', () => {
  const c = parseKubeletConfig(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
staticPodPath: /etc/kubernetes/manifests
syncFrequency: 30s
clusterDNS: [10.96.0.10]
authentication:
  x509:
    clientCAFile: /etc/kubernetes/pki/ca.crt
`);
  const { kubeletconfig: k } = configzDocument(c);
  assert.equal(k.kind, 'KubeletConfiguration');
  assert.equal(k.apiVersion, 'kubelet.config.k8s.io/v1beta1');
  assert.equal(k.staticPodPath, '/etc/kubernetes/manifests');
  assert.equal(k.syncFrequency, '30s');
  assert.equal(k.nodeStatusReportFrequency, '5m0s');
  assert.equal(k.runtimeRequestTimeout, '2m0s');
  assert.deepEqual(k.clusterDNS, ['10.96.0.10']);
  assert.deepEqual(k.authentication, {
    x509: { clientCAFile: '/etc/kubernetes/pki/ca.crt' },
    webhook: { enabled: true, cacheTTL: '2m0s' },
    anonymous: { enabled: false },
  });
  assert.deepEqual(k.authorization, { mode: 'Webhook', webhook: { cacheAuthorizedTTL: '5m0s', cacheUnauthorizedTTL: '30s' } });
  for (const empty of ['readOnlyPort', 'tlsCertFile', 'systemReserved', 'registerWithTaints', 'imageServiceEndpoint'])
    assert.equal(empty in k, false, empty);
  assert.equal(k.serverTLSBootstrap, false, 'false is a value, not an empty field');
  // What round-trips: the document reads back as the same configuration.
  assert.deepEqual(parseKubeletConfig(JSON.stringify(k)), c);
  assert.deepEqual(parseKubeletConfig(JSON.stringify(configzDocument(defaults).kubeletconfig)), defaults);
  const readOnly = { ...defaults, readOnlyPort: 10255 };
  assert.equal(configzDocument(readOnly).kubeletconfig.readOnlyPort, 10255);
  assert.deepEqual(parseKubeletConfig(JSON.stringify(configzDocument(readOnly).kubeletconfig)), readOnly);
});
