// What tlsMinVersion and tlsCipherSuites mean for the kubelet's server (:10250), as upstream's
// cliflag.TLSVersion and cliflag.TLSCipherSuites read them (Go's crypto/tls names) and Go's
// server then applies them, in node's (OpenSSL's) terms. Pure.
import type { SecureVersion } from 'node:tls';

const VERSIONS: Record<string, SecureVersion> = {
  VersionTLS10: 'TLSv1',
  VersionTLS11: 'TLSv1.1',
  VersionTLS12: 'TLSv1.2',
  VersionTLS13: 'TLSv1.3',
};

// Go's tls.CipherSuites() for TLS 1.0-1.2 (and the two legacy ChaCha names cliflag keeps), by their OpenSSL names.
const SECURE: Record<string, string> = {
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA: 'ECDHE-ECDSA-AES128-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA: 'ECDHE-ECDSA-AES256-SHA',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA: 'ECDHE-RSA-AES128-SHA',
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA: 'ECDHE-RSA-AES256-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 'ECDHE-ECDSA-AES128-GCM-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 'ECDHE-ECDSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 'ECDHE-RSA-AES128-GCM-SHA256',
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 'ECDHE-RSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305: 'ECDHE-ECDSA-CHACHA20-POLY1305',
};
// Go's tls.InsecureCipherSuites(): accepted, and logged as insecure. (node's OpenSSL has no RC4
// or 3DES: a list of only those fails the start with "no cipher match".)
const INSECURE: Record<string, string> = {
  TLS_RSA_WITH_RC4_128_SHA: 'RC4-SHA',
  TLS_RSA_WITH_3DES_EDE_CBC_SHA: 'DES-CBC3-SHA',
  TLS_RSA_WITH_AES_128_CBC_SHA: 'AES128-SHA',
  TLS_RSA_WITH_AES_256_CBC_SHA: 'AES256-SHA',
  TLS_RSA_WITH_AES_128_CBC_SHA256: 'AES128-SHA256',
  TLS_RSA_WITH_AES_128_GCM_SHA256: 'AES128-GCM-SHA256',
  TLS_RSA_WITH_AES_256_GCM_SHA384: 'AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_RC4_128_SHA: 'ECDHE-ECDSA-RC4-SHA',
  TLS_ECDHE_RSA_WITH_RC4_128_SHA: 'ECDHE-RSA-RC4-SHA',
  TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA: 'ECDHE-RSA-DES-CBC3-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256: 'ECDHE-ECDSA-AES128-SHA256',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256: 'ECDHE-RSA-AES128-SHA256',
};
// TLS 1.3's suites: named in Go's list, but Go does not let them be configured; so here.
const TLS13 = ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256'];

export interface ServerTLS {
  minVersion: SecureVersion;
  /** OpenSSL's cipher list for TLS 1.2 and below; unset: node's default. TLS 1.3 keeps its own. */
  ciphers?: string;
  /** The insecure suites asked for, which upstream logs at start. */
  insecure: string[];
}

/** Throws with upstream's words for an unknown version or suite. */
export function serverTLS(minVersion: string, cipherSuites: string[]): ServerTLS {
  // Go's default for a server, and cliflag's for an empty value.
  const min = minVersion === '' ? 'TLSv1.2' : VERSIONS[minVersion];
  if (!min) throw new Error(`unknown tls version ${JSON.stringify(minVersion)}`);
  const ciphers: string[] = [];
  for (const name of cipherSuites) {
    const openssl = SECURE[name] ?? INSECURE[name];
    if (openssl) ciphers.push(openssl);
    else if (!TLS13.includes(name)) throw new Error(`Cipher suite ${name} not supported or doesn't exist`);
  }
  // Only TLS 1.3 suites named: Go then has none for TLS 1.2, so only TLS 1.3 connects.
  if (cipherSuites.length && !ciphers.length) return { minVersion: 'TLSv1.3', insecure: [] };
  return {
    minVersion: min,
    ...(ciphers.length ? { ciphers: ciphers.join(':') } : {}),
    insecure: cipherSuites.filter((n) => n in INSECURE),
  };
}

// Go's tls.CurveID values the Go of v1.36.3 (1.26) names, by their OpenSSL group names.
const CURVES: Record<number, string> = {
  23: 'P-256',
  24: 'P-384',
  25: 'P-521',
  29: 'X25519',
  4587: 'SecP256r1MLKEM768',
  4588: 'X25519MLKEM768',
  4589: 'SecP384r1MLKEM1024',
};

/**
 * tlsCurvePreferences as the server's ecdhCurve (OpenSSL's groups, colon-separated), refused as
 * upstream's cliflag.TLSCurvePreferences refuses them (InitializeTLS stops the start): out of
 * the uint16 range, twice, or not a curve Go names. Empty: undefined, the TLS library's default.
 */
export function serverCurves(curveIDs: number[]): string | undefined {
  if (!curveIDs.length) return undefined;
  const seen = new Set<number>();
  const out: string[] = [];
  for (const id of curveIDs) {
    if (id <= 0 || id > 65535) throw new Error(`curve preference ${id} is out of range (must be 1-65535)`);
    if (seen.has(id)) throw new Error(`duplicate curve preference ${id}`);
    seen.add(id);
    const name = CURVES[id];
    if (!name) throw new Error(`curve preference ${id} is not supported by the current Go version`);
    out.push(name);
  }
  return out.join(':');
}
