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
