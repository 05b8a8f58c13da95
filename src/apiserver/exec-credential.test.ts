import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execInfo, parseExecConfig, parseExecCredential } from './exec-credential.ts';

const V1 = 'client.authentication.k8s.io/v1';
const cluster = () => ({ server: 'https://10.0.0.1:6443', 'certificate-authority-data': 'Q0E=' });

const configs: [string, unknown, string | RegExp][] = [
  ['v1 with interactiveMode Never', { apiVersion: V1, command: 'aws', args: ['eks', 'get-token'], interactiveMode: 'Never' }, ''],
  ['v1beta1: interactiveMode defaults to IfAvailable', { apiVersion: 'client.authentication.k8s.io/v1beta1', command: 'aws' }, ''],
  [
    'v1 must say its interactiveMode',
    { apiVersion: V1, command: 'aws' },
    'interactiveMode must be specified for u to use exec authentication plugin',
  ],
  [
    'Always: a kubelet has no terminal',
    { apiVersion: V1, command: 'aws', interactiveMode: 'Always' },
    /cannot support interactive mode: standard input is not a terminal/,
  ],
  [
    'an unknown interactiveMode',
    { apiVersion: V1, command: 'aws', interactiveMode: 'Sometimes' },
    'invalid interactiveMode for u: "Sometimes"',
  ],
  ['no command', { apiVersion: V1, interactiveMode: 'Never' }, 'command must be specified for u to use exec authentication plugin'],
  ['no apiVersion', { command: 'aws' }, 'apiVersion must be specified for u to use exec authentication plugin'],
  [
    'v1alpha1, removed',
    { apiVersion: 'client.authentication.k8s.io/v1alpha1', command: 'aws' },
    'exec plugin: invalid apiVersion "client.authentication.k8s.io/v1alpha1"',
  ],
  [
    'an env var without a name',
    { apiVersion: V1, command: 'aws', interactiveMode: 'Never', env: [{ value: 'x' }] },
    'env variable name must be specified for u to use exec authentication plugin',
  ],
];
for (const [name, raw, want] of configs)
  test(`parseExecConfig: ${name}`, () => {
    if (want === '') assert.doesNotThrow(() => parseExecConfig(raw, 'u', cluster));
    else assert.throws(() => parseExecConfig(raw, 'u', cluster), { message: want });
  });

test('execInfo: the ExecCredential the plugin gets, spec.cluster only with provideClusterInfo', () => {
  const plain = parseExecConfig({ apiVersion: V1, command: 'aws', interactiveMode: 'Never' }, 'u', cluster);
  assert.equal(execInfo(plain), '{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","spec":{"interactive":false}}');
  const withCluster = parseExecConfig({ apiVersion: V1, command: 'aws', interactiveMode: 'Never', provideClusterInfo: true }, 'u', cluster);
  assert.deepEqual(JSON.parse(execInfo(withCluster)).spec, { cluster: cluster(), interactive: false });
});

const status = (s: unknown, apiVersion = V1) => JSON.stringify({ apiVersion, kind: 'ExecCredential', status: s });
const outputs: [string, string, object | string][] = [
  [
    'a token with its expiry',
    status({ token: 't', expirationTimestamp: '2026-12-06T21:00:00Z' }),
    { token: 't', expiresMs: Date.parse('2026-12-06T21:00:00Z') },
  ],
  ['a certificate and key', status({ clientCertificateData: 'C', clientKeyData: 'K' }), { cert: Buffer.from('C'), key: Buffer.from('K') }],
  ['a certificate alone', status({ clientCertificateData: 'C' }), 'exec plugin returned only certificate or key, not both'],
  ['nothing', status({}), "exec plugin didn't return a token or cert/key pair"],
  ['no status', status(null), "exec plugin didn't return a status field"],
  [
    'another version',
    status({ token: 't' }, 'client.authentication.k8s.io/v1beta1'),
    'exec plugin is configured to use API version client.authentication.k8s.io/v1, plugin returned version client.authentication.k8s.io/v1beta1',
  ],
];
for (const [name, stdout, want] of outputs)
  test(`parseExecCredential: ${name}`, () => {
    if (typeof want === 'string') assert.throws(() => parseExecCredential(stdout, V1), { message: want });
    else assert.deepEqual(parseExecCredential(stdout, V1), want);
  });
