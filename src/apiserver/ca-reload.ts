// client-go's CA rotation (transport/ca_rotation.go, atomicTransportHolder; the
// ClientsAllowCARotation gate, beta and on in v1.36): the CA a kubeconfig names as a file
// (certificate-authority, not -data) is read again at a request 5 min or more after the last
// look, and a changed bundle that holds a certificate is trusted for the connections that
// follow. A kubeadm CA rotation then needs no kubelet restart. Each look is counted as
// upstream's rest_client_transport_ca_reload_total{result,reason}.
import { X509Certificate } from 'node:crypto';

/** How often upstream looks at the CA file (newAtomicTransportHolder's caRefreshDuration). */
export const CA_REFRESH_MS = 5 * 60_000;

export type CAReload =
  | { result: 'success'; reason: 'unchanged' | 'updated' }
  | { result: 'failure'; reason: 'read_error' | 'empty' | 'ca_parse_error' };

/** Pure: what a look at the CA file finds, against the bundle in use (tryRefreshTransportLocked). */
export function caReload(inUse: Buffer | undefined, read: Buffer | Error): CAReload {
  if (read instanceof Error) return { result: 'failure', reason: 'read_error' };
  if (read.length === 0) return { result: 'failure', reason: 'empty' };
  if (inUse?.equals(read)) return { result: 'success', reason: 'unchanged' };
  return holdsCertificate(read) ? { result: 'success', reason: 'updated' } : { result: 'failure', reason: 'ca_parse_error' };
}

// Go's CertPool.AppendCertsFromPEM: true when one CERTIFICATE block at least parses; the others are skipped.
function holdsCertificate(pem: Buffer): boolean {
  for (const block of pem.toString('utf8').match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []) {
    try {
      new X509Certificate(block);
      return true;
    } catch {
      /* skipped, as Go skips it */
    }
  }
  return false;
}
