import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectionFrom } from './kubeconfig.ts';

const doc = (cluster: Record<string, unknown>) => ({
  'current-context': 'c',
  contexts: [{ name: 'c', context: { cluster: 'k', user: 'u' } }],
  clusters: [{ name: 'k', cluster: { server: 'https://10.0.0.1:6443', ...cluster } }],
  users: [{ name: 'u', user: {} }],
});

test('connectionFrom: the CA file is named only when the CA comes from one (what client-go reloads)', () => {
  const read = (p: string) => Buffer.from(`file:${p}`);
  const rows: [string, Record<string, unknown>, string | undefined, string | undefined][] = [
    [
      'a file, relative to the kubeconfig',
      { 'certificate-authority': 'pki/ca.crt' },
      'file:/etc/kubernetes/pki/ca.crt',
      '/etc/kubernetes/pki/ca.crt',
    ],
    ['an absolute file', { 'certificate-authority': '/ca.crt' }, 'file:/ca.crt', '/ca.crt'],
    ['data', { 'certificate-authority-data': Buffer.from('CA').toString('base64') }, 'CA', undefined],
    [
      'data wins over a file, as client-go',
      { 'certificate-authority-data': Buffer.from('CA').toString('base64'), 'certificate-authority': '/ca.crt' },
      'CA',
      undefined,
    ],
    ['none', {}, undefined, undefined],
  ];
  for (const [name, cluster, ca, caFile] of rows) {
    const c = connectionFrom(doc(cluster), '/etc/kubernetes', 'k', read);
    assert.deepEqual([c.ca?.toString(), c.caFile], [ca, caFile], name);
  }
});

const withUser = (user: Record<string, unknown>, cluster: Record<string, unknown> = {}) => ({
  ...doc(cluster),
  users: [{ name: 'u', user }],
});
const refusals: [string, ReturnType<typeof withUser>, string | undefined][] = [
  ["kubeadm's kubelet.conf: client certificate files", withUser({ 'client-certificate': '/a.crt', 'client-key': '/a.key' }), undefined],
  ['a bootstrap token', withUser({ token: 'abcdef.0123456789abcdef' }), undefined],
  [
    'an exec credential plugin (as a cloud node has it)',
    withUser({ exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'aws', interactiveMode: 'Never' } }),
    undefined,
  ],
  [
    'an exec credential plugin clientcmd would refuse',
    withUser({ exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'aws' } }),
    'invalid kubeconfig k: interactiveMode must be specified for u to use exec authentication plugin',
  ],
  ['an auth-provider', withUser({ 'auth-provider': { name: 'gcp' } }), 'kubeconfig k: not supported by kubelet-ts: user u: auth-provider'],
  [
    'impersonation and a proxy, each named',
    withUser({ token: 't', as: 'someone', 'as-groups': ['g'] }, { 'proxy-url': 'http://proxy:3128' }),
    'kubeconfig k: not supported by kubelet-ts: cluster k: proxy-url, user u: as, user u: as-groups',
  ],
  ['empty values are none', withUser({ token: 't', as: '', 'as-groups': [] }), undefined],
];
for (const [name, kubeconfig, want] of refusals)
  test(`connectionFrom: ${name}`, () => {
    const read = () => Buffer.from('x');
    if (want === undefined) assert.doesNotThrow(() => connectionFrom(kubeconfig, '/etc/kubernetes', 'k', read));
    else assert.throws(() => connectionFrom(kubeconfig, '/etc/kubernetes', 'k', read), { message: want });
  });
