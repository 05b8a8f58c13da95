// Keys, certificate requests and self-signed certificates. node:crypto makes the keys
// and parses certificates; node-forge writes the PKCS#10 and X.509 structures that
// node:crypto cannot (loaded only when a certificate is actually made).
import { generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';

export interface Subject {
  commonName: string;
  organizations?: string[];
}

const forge = async () => (await import('node-forge')).default;

// UTF8String, since node-forge defaults to PrintableString, which cannot hold '@' (Go then
// refuses the whole certificate).
const UTF8 = 12;
function subjectAttrs(s: Subject) {
  return [
    { shortName: 'CN', value: s.commonName, valueTagClass: UTF8 },
    ...(s.organizations ?? []).map((o) => ({ shortName: 'O', value: o, valueTagClass: UTF8 })),
  ];
}

function sanExtension(names: string[]) {
  return { name: 'subjectAltName', altNames: names.map((n) => (isIP(n) ? { type: 7, ip: n } : { type: 2, value: n })) };
}

/** A new RSA private key in PKCS#8 PEM. RSA because node-forge signs only with RSA. */
export function newPrivateKey(): string {
  return generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
}

/** A PKCS#10 certificate request in PEM for the subject (and SANs, for serving certificates). */
export async function certificateRequest(keyPem: string, subject: Subject, sans: string[] = []): Promise<string> {
  const f = await forge();
  const key = f.pki.privateKeyFromPem(keyPem);
  const csr = f.pki.createCertificationRequest();
  csr.publicKey = f.pki.setRsaPublicKey(key.n, key.e);
  csr.setSubject(subjectAttrs(subject));
  if (sans.length) csr.setAttributes([{ name: 'extensionRequest', extensions: [sanExtension(sans)] }]);
  csr.sign(key, f.md.sha256.create());
  return f.pki.certificationRequestToPem(csr);
}

/** A self-signed serving certificate valid for a year, as the kubelet makes when it has none. */
export async function selfSignedServingCert(keyPem: string, host: string, sans: string[], now = new Date()): Promise<string> {
  const f = await forge();
  const key = f.pki.privateKeyFromPem(keyPem);
  const cert = f.pki.createCertificate();
  cert.publicKey = f.pki.setRsaPublicKey(key.n, key.e);
  cert.serialNumber = '01' + randomBytes(15).toString('hex'); // positive, minimally encoded
  cert.validity.notBefore = new Date(now.getTime() - 3_600_000);
  cert.validity.notAfter = new Date(now.getTime() + 365 * 86_400_000);
  const name = subjectAttrs({ commonName: `${host}@${Math.floor(now.getTime() / 1000)}` });
  cert.setSubject(name);
  cert.setIssuer(name);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, keyCertSign: true },
    { name: 'extKeyUsage', serverAuth: true },
    sanExtension([...new Set([host, ...sans])]),
  ]);
  cert.sign(key, f.md.sha256.create());
  return f.pki.certificateToPem(cert);
}

/** Validity of the first certificate in a PEM bundle, or undefined when there is none. */
export function certificateValidity(pem: string): { notBefore: Date; notAfter: Date; subject: string } | undefined {
  const first = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(pem)?.[0];
  if (!first) return undefined;
  const c = new X509Certificate(first);
  return { notBefore: new Date(c.validFrom), notAfter: new Date(c.validTo), subject: c.subject };
}
