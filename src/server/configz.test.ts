import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaults, parseKubeletConfig } from '../config/kubelet-config.ts';
import { configzDocument } from './configz.ts';

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
  assert.deepEqual([k.podPidsLimit, k.oomScoreAdj, k.serializeImagePulls], [-1, -999, true], "upstream's defaults");
  for (const empty of [
    'readOnlyPort',
    'tlsCertFile',
    'systemReserved',
    'registerWithTaints',
    'imageServiceEndpoint',
    'protectKernelDefaults',
    'singleProcessOOMKill',
    'tlsCipherSuites',
  ])
    assert.equal(empty in k, false, empty);
  assert.equal(k.serverTLSBootstrap, false, 'false is a value, not an empty field');
  // What round-trips: the document reads back as the same configuration.
  assert.deepEqual(parseKubeletConfig(JSON.stringify(k)), c);
  assert.deepEqual(parseKubeletConfig(JSON.stringify(configzDocument(defaults).kubeletconfig)), defaults);
  const readOnly = { ...defaults, readOnlyPort: 10255 };
  assert.equal(configzDocument(readOnly).kubeletconfig.readOnlyPort, 10255);
  assert.deepEqual(parseKubeletConfig(JSON.stringify(configzDocument(readOnly).kubeletconfig)), readOnly);
});
