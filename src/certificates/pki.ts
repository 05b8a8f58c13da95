// Keys, certificate requests and self-signed certificates. node:crypto makes the keys,
// signs and parses; the PKCS#10 (RFC 2986) and X.509 (RFC 5280) structures are written
// with ./der.ts, as Go's x509.CreateCertificateRequest and x509.CreateCertificate lay them out.
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, randomBytes, sign, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import {
  bitString,
  boolean,
  contextConstructed,
  contextPrimitive,
  integer,
  namedBits,
  nullValue,
  objectIdentifier as oid,
  octetString,
  sequence,
  setOf,
  time,
  utf8String,
} from './der.ts';

export interface Subject {
  commonName: string;
  organizations?: string[];
}

/**
 * A new private key in PKCS#8 PEM: ECDSA P-256, as upstream's certificate manager makes for
 * each CSR (generateCSR), or RSA 2048, as upstream's self-signed serving certificate
 * (certutil.GenerateSelfSignedCertKey).
 */
export function newPrivateKey(type: 'ec' | 'rsa' = 'ec'): string {
  const { privateKey } =
    type === 'ec' ? generateKeyPairSync('ec', { namedCurve: 'P-256' }) : generateKeyPairSync('rsa', { modulusLength: 2048 });
  return privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
}

/** A PKCS#10 certificate request in PEM for the subject (and SANs, for serving certificates). */
export function certificateRequest(keyPem: string, subject: Subject, sans: string[] = []): string {
  const key = createPrivateKey(keyPem);
  const extensions = sans.length ? [sequence(oid('1.2.840.113549.1.9.14'), setOf(sequence(subjectAltName(sans))))] : []; // extensionRequest
  const info = sequence(integer(0), name(subject), spki(key), contextConstructed(0, ...extensions));
  return pem('CERTIFICATE REQUEST', signed(info, key));
}

/** A self-signed serving certificate valid for a year, as the kubelet makes when it has none. */
export function selfSignedServingCert(keyPem: string, host: string, sans: string[], now = new Date()): string {
  const key = createPrivateKey(keyPem);
  const subject = name({ commonName: `${host}@${Math.floor(now.getTime() / 1000)}` });
  const tbs = sequence(
    contextConstructed(0, integer(2)), // v3
    integer(Buffer.concat([Buffer.from([1]), randomBytes(15)])), // positive, 128 bits
    signatureAlgorithm(key),
    subject, // issuer
    sequence(time(new Date(now.getTime() - 3_600_000)), time(new Date(now.getTime() + 365 * 86_400_000))),
    subject,
    spki(key),
    contextConstructed(
      3,
      sequence(
        extension('2.5.29.19', true, sequence(boolean(true))), // basicConstraints: a CA
        extension('2.5.29.15', true, namedBits([0, 2, 5])), // keyUsage: digitalSignature, keyEncipherment, keyCertSign
        extension('2.5.29.37', false, sequence(oid('1.3.6.1.5.5.7.3.1'))), // extKeyUsage: serverAuth
        subjectAltName([...new Set([host, ...sans])]),
      ),
    ),
  );
  return pem('CERTIFICATE', signed(tbs, key));
}

/** Validity of the first certificate in a PEM bundle, or undefined when there is none. */
export function certificateValidity(pem: string): { notBefore: Date; notAfter: Date; subject: string } | undefined {
  const first = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(pem)?.[0];
  if (!first) return undefined;
  const c = new X509Certificate(first);
  return { notBefore: new Date(c.validFrom), notAfter: new Date(c.validTo), subject: c.subject };
}

// One attribute per RDN, organizations before the common name, as Go's pkix.Name.ToRDNSequence.
// UTF8String, not PrintableString, which cannot hold the '@' of a self-signed CN (Go refuses it).
function name(s: Subject): Buffer {
  const rdn = (type: string, value: string) => setOf(sequence(oid(type), utf8String(value)));
  return sequence(...(s.organizations ?? []).map((o) => rdn('2.5.4.10', o)), rdn('2.5.4.3', s.commonName));
}

const spki = (key: KeyObject) => createPublicKey(key).export({ type: 'spki', format: 'der' });

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return sequence(oid(id), ...(critical ? [boolean(true)] : []), octetString(value));
}

// GeneralNames: dNSName [2] or iPAddress [7], 4 bytes for IPv4 as Go's marshalSANs.
function subjectAltName(names: string[]): Buffer {
  const general = names.map((n) => (isIP(n) ? contextPrimitive(7, ipBytes(n)) : contextPrimitive(2, Buffer.from(n, 'ascii'))));
  return extension('2.5.29.17', false, sequence(...general));
}

/** SHA-256 with the key's own algorithm, as Go picks for RSA and P-256 keys. RSA's parameters are NULL. */
function signatureAlgorithm(key: KeyObject): Buffer {
  if (key.asymmetricKeyType === 'rsa') return sequence(oid('1.2.840.113549.1.1.11'), nullValue()); // sha256WithRSAEncryption
  if (key.asymmetricKeyType === 'ec') return sequence(oid('1.2.840.10045.4.3.2')); // ecdsa-with-SHA256
  throw new Error(`cannot sign with a ${key.asymmetricKeyType} key`);
}

/** The signed structure: to-be-signed, algorithm, signature (an ECDSA one in DER, node:crypto's default). */
function signed(tbs: Buffer, key: KeyObject): Buffer {
  return sequence(tbs, signatureAlgorithm(key), bitString(sign('sha256', tbs, key)));
}

function pem(label: string, der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g)!;
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

/** An IP address's bytes: 4 for IPv4, 16 for IPv6 (the groups after '::' at the end, zeros between). */
function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split('.').map(Number));
  let text = ip.replace(/%.*$/, ''); // a zone is not part of the address
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text); // ::ffff:10.0.0.1: the last two groups, dotted
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail = ''] = text.split('::');
  const groups = (s: string) => (s ? s.split(':').map((g) => Number.parseInt(g, 16)) : []);
  const front = groups(head),
    back = groups(tail);
  const out = Buffer.alloc(16);
  for (const [i, g] of front.entries()) out.writeUInt16BE(g, 2 * i);
  for (const [i, g] of back.entries()) out.writeUInt16BE(g, 16 - 2 * (back.length - i));
  return out;
}
