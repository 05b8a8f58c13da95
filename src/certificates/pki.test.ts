import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey, createPublicKey, verify } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { certificateRequest, certificateValidity, newPrivateKey, selfSignedServingCert } from './pki.ts';

// openssl is the independent judge of the encodings and signatures.
const openssl = (args: string[], input: string) =>
  execFileSync('openssl', args, { input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });

/** The contents of the DER element at `at` (lengths up to 2 bytes, enough here) and where it ends. */
function element(der: Buffer, at: number): { contents: Buffer; end: number } {
  const first = der[at + 1]!;
  const lengthBytes = first & 0x80 ? first & 0x7f : 0;
  const length = lengthBytes ? der.readUIntBE(at + 2, lengthBytes) : first;
  const start = at + 2 + lengthBytes;
  return { contents: der.subarray(start, start + length), end: start + length };
}

test('a CSR carries the node identity, with an ECDSA P-256 key as upstream, and is signed by it', () => {
  const key = newPrivateKey();
  assert.equal(createPrivateKey(key).asymmetricKeyDetails?.namedCurve, 'prime256v1');
  const csr = certificateRequest(key, { commonName: 'system:node:vm', organizations: ['system:nodes'] });
  const out = openssl(['req', '-noout', '-verify', '-subject', '-nameopt', 'show_type'], csr);
  assert.match(out, /O=UTF8STRING:system:nodes, CN=UTF8STRING:system:node:vm/);
  // node:crypto on the same bytes: CertificationRequest ::= SEQUENCE { info, algorithm, BIT STRING signature }.
  const der = Buffer.from(csr.replace(/-----[A-Z ]+-----|\s/g, ''), 'base64');
  const body = element(der, 0).contents;
  const info = element(body, 0);
  const signature = element(body, element(body, info.end).end).contents.subarray(1); // after the unused-bits byte
  assert.ok(verify('sha256', body.subarray(0, info.end), createPublicKey(key), signature));
  assert.match(openssl(['req', '-noout', '-text'], csr), /Attributes:\s+\(none\)/, 'no SANs, no extension request');
});

test('a serving CSR names the DNS and IP SANs', () => {
  const csr = certificateRequest(newPrivateKey(), { commonName: 'system:node:vm', organizations: ['system:nodes'] }, [
    'vm',
    '172.30.255.10',
    'fd00::1',
    '::ffff:10.0.0.1',
    '2001:db8:1:2:3:4:5:6',
    '::1',
  ]);
  assert.match(
    openssl(['req', '-noout', '-verify', '-text'], csr),
    /DNS:vm, IP Address:172\.30\.255\.10, IP Address:FD00:0:0:0:0:0:0:1, IP Address:0:0:0:0:0:FFFF:A00:1, IP Address:2001:DB8:1:2:3:4:5:6, IP Address:0:0:0:0:0:0:0:1\n/,
  );
});

test('a self-signed serving certificate names the host and IPs and matches its key', () => {
  const key = newPrivateKey('rsa');
  const pem = selfSignedServingCert(key, 'vm', ['172.30.255.10', 'fd00:1:2::3', 'vm'], new Date('2026-11-22T12:00:00Z'));
  const cert = new X509Certificate(pem);
  assert.equal(createPrivateKey(key).asymmetricKeyType, 'rsa');
  assert.ok(cert.checkPrivateKey(createPrivateKey(key)));
  assert.equal(cert.subjectAltName, 'DNS:vm, IP Address:172.30.255.10, IP Address:FD00:1:2:0:0:0:0:3');
  assert.ok(cert.verify(cert.publicKey), 'self-signed');
  assert.ok(cert.ca);
  assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.1'], 'serverAuth');
  // Go's parser (the apiserver's) is the one that refused PrintableString '@': openssl shows the string type.
  const text = openssl(['x509', '-noout', '-text', '-subject', '-nameopt', 'show_type'], pem);
  assert.match(text, /CN=UTF8STRING:vm@1795348800/);
  assert.match(text, /Key Usage: critical\s+Digital Signature, Key Encipherment, Certificate Sign/);
  assert.match(text, /Signature Algorithm: sha256WithRSAEncryption/);
  const v = certificateValidity(pem)!;
  assert.equal(v.notBefore.toISOString(), '2026-11-22T11:00:00.000Z');
  assert.equal(v.notAfter.toISOString(), '2027-11-22T12:00:00.000Z');
  assert.equal(certificateValidity('no cert here'), undefined);
});

test('a self-signed certificate can be made with an ECDSA key too', () => {
  const key = newPrivateKey();
  const cert = new X509Certificate(selfSignedServingCert(key, 'vm', []));
  assert.ok(cert.verify(cert.publicKey));
  assert.ok(cert.checkPrivateKey(createPrivateKey(key)));
  assert.equal(cert.subjectAltName, 'DNS:vm');
});
