import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { caCertHash, parseToken, verifyClusterInfo, verifyDetachedJWS } from './discovery.ts';

const dir = mkdtempSync(join(tmpdir(), 'kts-join-'));
after(() => rmSync(dir, { recursive: true, force: true }));
execFileSync(
  'openssl',
  [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    join(dir, 'ca.key'),
    '-out',
    join(dir, 'ca.crt'),
    '-subj',
    '/CN=kubernetes',
    '-days',
    '1',
  ],
  { stdio: 'ignore' },
);
const caPem = readFileSync(join(dir, 'ca.crt'), 'utf8');
// The pin as kubeadm documents computing it with openssl.
const pin =
  'sha256:' +
  execFileSync(
    'sh',
    ['-c', `openssl x509 -pubkey -in ${join(dir, 'ca.crt')} | openssl pkey -pubin -outform der | sha256sum | cut -d' ' -f1`],
    { encoding: 'utf8' },
  ).trim();
const token = parseToken('abcdef.0123456789abcdef');
const kubeconfig = `apiVersion: v1\nkind: Config\nclusters:\n- name: ''\n  cluster:\n    server: https://172.30.255.10:6443\n    certificate-authority-data: ${Buffer.from(caPem).toString('base64')}\n`;
const sign = (content: string, secret: string, kid = 'abcdef') => {
  const header = Buffer.from(JSON.stringify({ alg: 'HS256', kid })).toString('base64url');
  return `${header}..${createHmac('sha256', secret)
    .update(`${header}.${Buffer.from(content).toString('base64url')}`)
    .digest('base64url')}`;
};

test('caCertHash equals the openssl recipe kubeadm documents', () => assert.equal(caCertHash(caPem), pin));

test('a signed cluster-info with a matching pin is trusted', () => {
  const info = verifyClusterInfo({ kubeconfig, 'jws-kubeconfig-abcdef': sign(kubeconfig, token.secret) }, token, [pin]);
  assert.equal(info.server, 'https://172.30.255.10:6443');
  assert.equal(info.caPem, caPem);
});

test('every way to be wrong is refused with its reason', () => {
  const good = { kubeconfig, 'jws-kubeconfig-abcdef': sign(kubeconfig, token.secret) };
  assert.throws(() => verifyClusterInfo(good, token, ['sha256:' + '0'.repeat(64)]), /matches none of --discovery-token-ca-cert-hash/);
  assert.throws(() => verifyClusterInfo(good, token, []), /refusing to trust an unpinned CA/);
  assert.throws(
    () => verifyClusterInfo({ kubeconfig, 'jws-kubeconfig-abcdef': sign(kubeconfig, 'ffffffffffffffff') }, token, [pin]),
    /wrong token secret/,
  );
  assert.throws(
    () => verifyClusterInfo({ kubeconfig, 'jws-kubeconfig-abcdef': sign(kubeconfig + 'x', token.secret) }, token, [pin]),
    /wrong token secret/,
    'tampered content',
  );
  assert.throws(() => verifyClusterInfo({ kubeconfig }, token, [pin]), /no signature for token ID "abcdef"/);
  assert.throws(() => parseToken('abc.def'), /invalid bootstrap token/);
  assert.equal(verifyDetachedJWS('not-a-jws', kubeconfig, token), false);
});
