import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { certificateRequest, certificateValidity, newPrivateKey, selfSignedServingCert } from './pki.ts';

test('a CSR carries the node identity and is signed by the key', async () => {
  const key = newPrivateKey();
  const csr = await certificateRequest(key, { commonName: 'system:node:vm', organizations: ['system:nodes'] });
  // openssl is the independent judge of the encoding and the signature.
  const out = execFileSync('openssl', ['req', '-noout', '-verify', '-subject'], {
    input: csr,
    encoding: 'utf8',
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  assert.match(out, /CN\s*=\s*system:node:vm/);
  assert.match(out, /O\s*=\s*system:nodes/);
});

test('a self-signed serving certificate names the host and IPs and matches its key', async () => {
  const key = newPrivateKey();
  const pem = await selfSignedServingCert(key, 'vm', ['172.30.255.10'], new Date('2026-11-22T12:00:00Z'));
  const cert = new X509Certificate(pem);
  assert.ok(cert.checkPrivateKey(createPrivateKey(key)));
  assert.match(cert.subjectAltName ?? '', /DNS:vm/);
  assert.match(cert.subjectAltName ?? '', /IP Address:172\.30\.255\.10/);
  assert.ok(cert.verify(cert.publicKey), 'self-signed');
  // Go's parser (the apiserver's) is the one that refused PrintableString '@': openssl shows the string type.
  const asn1 = execFileSync('openssl', ['x509', '-noout', '-subject', '-nameopt', 'show_type'], { input: pem, encoding: 'utf8' });
  assert.match(asn1, /CN=UTF8STRING:vm@/);
  const v = certificateValidity(pem)!;
  assert.equal(v.notAfter.toISOString(), '2027-11-22T12:00:00.000Z');
  assert.equal(certificateValidity('no cert here'), undefined);
});
