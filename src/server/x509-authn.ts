// Client certificate authentication as upstream's x509 authenticator does it: the TLS
// server requests but does not verify client certificates, so the chain is verified here
// against the client CA bundle (authentication.x509.clientCAFile), and the user is the
// subject's CN with its O values as groups and its UID attribute as UID (CommonNameUserConversion).
import { X509Certificate } from 'node:crypto';
import type { DetailedPeerCertificate, TLSSocket } from 'node:tls';
import type { UserInfo } from './user.ts';

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const ANY_USAGE = '2.5.29.37.0';
const MAX_CHAIN = 8;

/** Every certificate of a PEM bundle. */
export function parseCertBundle(pem: string): X509Certificate[] {
  return (pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map((c) => new X509Certificate(c));
}

/** The certificates the client sent, leaf first; empty when it sent none or the connection is not TLS. */
export function peerChain(socket: unknown): X509Certificate[] {
  const tls = socket as Partial<TLSSocket>;
  if (!tls.encrypted || typeof tls.getPeerCertificate !== 'function') return [];
  const chain: X509Certificate[] = [];
  const seen = new Set<DetailedPeerCertificate>();
  for (
    let c: DetailedPeerCertificate | undefined = tls.getPeerCertificate(true);
    c?.raw && !seen.has(c) && chain.length < MAX_CHAIN;
    c = c.issuerCertificate
  ) {
    seen.add(c);
    chain.push(new X509Certificate(c.raw));
  }
  return chain;
}

const inValidity = (c: X509Certificate, now: Date) => c.validFromDate <= now && now <= c.validToDate;
// Go's x509 accepts a certificate without extended key usage for any use.
const allowsClientAuth = (c: X509Certificate) => !c.keyUsage || c.keyUsage.some((u) => u === CLIENT_AUTH || u === ANY_USAGE);
const issued = (child: X509Certificate, parent: X509Certificate) => child.checkIssued(parent) && child.verify(parent.publicKey);

/**
 * Why the chain (leaf first, then the intermediates the client sent) does not lead to a
 * CA of the bundle, or undefined when it does: signatures, validity periods and client
 * auth usage are checked on every certificate of the path, as Go's x509.Verify does.
 */
export function verifyClientChain(chain: X509Certificate[], roots: X509Certificate[], now: Date): string | undefined {
  let cert = chain[0];
  if (!cert) return 'no client certificate';
  const intermediates = chain.slice(1).filter((c) => c.ca);
  for (let depth = 0; depth < MAX_CHAIN; depth++) {
    if (!inValidity(cert, now)) return `x509: certificate has expired or is not yet valid (subject ${cert.subject.replace(/\n/g, ', ')})`;
    if (!allowsClientAuth(cert)) return 'x509: certificate specifies an incompatible key usage';
    const root = roots.find((r) => issued(cert!, r));
    if (root) {
      if (!inValidity(root, now)) return 'x509: certificate has expired or is not yet valid (client CA)';
      if (!allowsClientAuth(root)) return 'x509: certificate specifies an incompatible key usage';
      return undefined;
    }
    const next = intermediates.find((i) => issued(cert!, i));
    if (!next) break;
    cert = next;
  }
  return 'x509: certificate signed by unknown authority';
}

/** The subject attribute upstream reads a user's UID from (asn1util.X509UID). */
const UID_OID = '1.3.6.1.4.1.57683.2';

/**
 * The user a verified certificate names; undefined without a CN, as upstream. With uid (the
 * AllowParsingUserUIDFromCertAuth gate, on by default) the UID subject attribute is the user's
 * UID, and a certificate with two authenticates nobody (upstream's parseUIDFromCert error).
 */
export function certificateUser(cert: X509Certificate, uid = true): UserInfo | undefined {
  const subject = cert.toLegacyObject().subject as unknown as Record<string, string | string[] | undefined>;
  const all = (v: string | string[] | undefined) => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
  const name = all(subject.CN).at(-1); // Go keeps the last CN
  if (!name) return undefined;
  const uids = uid ? all(subject[UID_OID]) : [];
  if (uids.length > 1) return undefined;
  return { name, ...(uids[0] ? { uid: uids[0] } : {}), groups: all(subject.O) };
}
