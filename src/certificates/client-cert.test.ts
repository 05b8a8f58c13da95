import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { kubeletKubeconfig } from './client-cert.ts';
import { certificateManager, rotationDeadline } from './certificate-manager.ts';
import { CLIENT_SIGNER } from './csr.ts';
import { certificateValidity, newPrivateKey, selfSignedServingCert } from './pki.ts';
import { ApiError, type ApiClient } from '../apiserver/client.ts';
import { storeCurrent, loadCurrent } from './store.ts';
import { connectionFrom } from '../apiserver/kubeconfig.ts';

test('rotation falls between 70% and 90% of the lifetime', () => {
  const nb = new Date('2026-01-01T00:00:00Z'),
    na = new Date('2026-01-11T00:00:00Z');
  assert.equal(rotationDeadline(nb, na, () => 0).toISOString(), '2026-01-08T00:00:00.000Z');
  assert.equal(rotationDeadline(nb, na, () => 1).toISOString(), '2026-01-10T00:00:00.000Z');
  assert.equal(rotationDeadline(nb, na, () => 0.5).toISOString(), '2026-01-09T00:00:00.000Z');
});

test('the written kubeconfig points at the current certificate, as upstream', () => {
  const doc = parse(kubeletKubeconfig('https://172.30.255.10:6443', Buffer.from('CA'), '/var/lib/kubelet/pki/kubelet-client-current.pem'));
  const conn = connectionFrom(doc, '/', 'k', (p) => Buffer.from(`file:${p}`));
  assert.equal(conn.server, 'https://172.30.255.10:6443');
  assert.equal(conn.ca!.toString(), 'CA');
  assert.equal(conn.cert!.toString(), 'file:/var/lib/kubelet/pki/kubelet-client-current.pem');
  assert.equal(conn.key!.toString(), 'file:/var/lib/kubelet/pki/kubelet-client-current.pem');
});

test('storeCurrent writes a dated file and switches the current link', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kts-pki-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  storeCurrent(dir, 'kubelet-client', 'CERT1', 'KEY1', new Date('2026-11-22T12:00:00Z'));
  assert.equal(readlinkSync(join(dir, 'kubelet-client-current.pem')), 'kubelet-client-2026-11-22-12-00-00.pem');
  storeCurrent(dir, 'kubelet-client', 'CERT2', 'KEY2', new Date('2026-11-23T12:00:00Z'));
  assert.equal(loadCurrent(dir, 'kubelet-client')!.pem, 'CERT2\nKEY2\n');
  assert.equal(readFileSync(join(dir, 'kubelet-client-2026-11-22-12-00-00.pem'), 'utf8'), 'CERT1\nKEY1\n', 'the old file stays');
});

test('an expired certificate is renewed through the client whenExpired gives (the bootstrap credentials), not its own', {
  timeout: 5000,
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kts-certmgr-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const key = newPrivateKey();
  storeCurrent(dir, 'kubelet-client', selfSignedServingCert(key, 'old', [], new Date(Date.now() - 2 * 365 * 86_400_000)), key);
  const issued = selfSignedServingCert(newPrivateKey(), 'new', []);
  const asked: string[] = [];
  const fake = (who: string, works: boolean) =>
    ({
      create: async () => {
        asked.push(who);
        if (!works) throw new ApiError(401, 'Unauthorized', 'POST csr: 401 Unauthorized');
        return { metadata: { name: 'node-csr-1' } };
      },
      get: async () => ({ status: { certificate: Buffer.from(issued).toString('base64') } }),
    }) as unknown as ApiClient;
  const quiet = { info() {}, v() {}, warn() {}, error() {} };
  let got!: (pem: string) => void;
  const handed = new Promise<string>((r) => (got = r));
  const seen = { expiresAt: [] as (number | undefined)[], rotatedAges: [] as number[] };
  const m = certificateManager(
    fake('own', false),
    dir,
    { prefix: 'kubelet-client', signer: CLIENT_SIGNER, subject: { commonName: 'system:node:n' } },
    {
      log: quiet,
      onCertificate: got,
      whenExpired: () => fake('bootstrap', true),
      observe: { expiresAt: (ms) => seen.expiresAt.push(ms), renewFailed() {}, rotated: (age) => seen.rotatedAges.push(age) },
    },
  );
  t.after(() => m.stop());
  assert.equal(await handed, loadCurrent(dir, 'kubelet-client')!.pem);
  assert.match(certificateValidity(loadCurrent(dir, 'kubelet-client')!.pem)!.subject, /CN=new/);
  assert.deepEqual(asked, ['bootstrap']);
  assert.ok(seen.expiresAt[0]! < Date.now(), 'the expired one was read first');
  // The replaced certificate's age (client-go's certificateRotation): since its notBefore, two years and an hour
  // ago (a self-signed one begins an hour early).
  assert.equal(seen.rotatedAges.length, 1);
  assert.ok(Math.abs(seen.rotatedAges[0]! - (2 * 365 * 86_400 + 3600)) < 60, `${seen.rotatedAges[0]}`);
});
