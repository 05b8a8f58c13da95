// Token discovery as `kubeadm join` does it: read kube-public/cluster-info without
// credentials, trust it only if its JWS signature matches the bootstrap token and its
// CA's public key matches a --discovery-token-ca-cert-hash. Pure, apart from fetch below.
import { createHash, createHmac, timingSafeEqual, X509Certificate } from 'node:crypto';
import { parse } from 'yaml';

export class DiscoveryError extends Error {}

export interface BootstrapToken {
  id: string;
  secret: string;
}

export function parseToken(token: string): BootstrapToken {
  const m = /^([a-z0-9]{6})\.([a-z0-9]{16})$/.exec(token);
  if (!m) throw new DiscoveryError(`invalid bootstrap token "${token}": want [a-z0-9]{6}.[a-z0-9]{16}`);
  return { id: m[1]!, secret: m[2]! };
}

/** sha256:<hex> of the certificate's SubjectPublicKeyInfo, kubeadm's CA pin. */
export function caCertHash(pem: string): string {
  const spki = new X509Certificate(pem).publicKey.export({ type: 'spki', format: 'der' });
  return `sha256:${createHash('sha256').update(spki).digest('hex')}`;
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

/** Checks a detached HS256 JWS ("header..signature") over content, keyed by the token secret. */
export function verifyDetachedJWS(jws: string, content: string, token: BootstrapToken): boolean {
  const [header, payload, sig] = jws.split('.');
  if (header === undefined || payload !== '' || sig === undefined) return false;
  let h: { alg?: string; kid?: string };
  try {
    h = JSON.parse(Buffer.from(header, 'base64url').toString('utf8'));
  } catch {
    return false;
  }
  if (h.alg !== 'HS256' || (h.kid !== undefined && h.kid !== token.id)) return false;
  const want = createHmac('sha256', token.secret)
    .update(`${header}.${b64url(content)}`)
    .digest();
  const got = Buffer.from(sig, 'base64url');
  return got.length === want.length && timingSafeEqual(got, want);
}

export interface ClusterInfo {
  server: string;
  caPem: string;
}

/** Pure: the verified server and CA from cluster-info's data, or a DiscoveryError saying why not. */
export function verifyClusterInfo(data: Record<string, string> | undefined, token: BootstrapToken, caHashes: string[]): ClusterInfo {
  const kubeconfig = data?.kubeconfig;
  if (!kubeconfig) throw new DiscoveryError('cluster-info has no kubeconfig');
  const jws = data[`jws-kubeconfig-${token.id}`];
  if (!jws)
    throw new DiscoveryError(
      `cluster-info has no signature for token ID "${token.id}": the token is unknown, expired, or not yet signed by the bootstrapsigner controller`,
    );
  if (!verifyDetachedJWS(jws, kubeconfig, token))
    throw new DiscoveryError(`cluster-info's signature does not match token ID "${token.id}": wrong token secret`);
  const doc = parse(kubeconfig) as { clusters?: { cluster?: { server?: string; 'certificate-authority-data'?: string } }[] };
  const cluster = doc.clusters?.[0]?.cluster;
  if (!cluster?.server || !cluster['certificate-authority-data']) throw new DiscoveryError('cluster-info kubeconfig has no server or CA');
  const caPem = Buffer.from(cluster['certificate-authority-data'], 'base64').toString('utf8');
  const actual = caCertHash(caPem);
  if (caHashes.length === 0) throw new DiscoveryError('no --discovery-token-ca-cert-hash given: refusing to trust an unpinned CA');
  if (!caHashes.some((h) => h.toLowerCase() === actual)) {
    throw new DiscoveryError(
      `the cluster CA's public key hash ${actual} matches none of --discovery-token-ca-cert-hash (${caHashes.join(', ')})`,
    );
  }
  return { server: cluster.server, caPem };
}
