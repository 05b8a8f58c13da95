// The kubelet's client certificate: TLS bootstrap when there is none (a CSR made with
// the bootstrap token's credentials), and rotation before it expires (a CSR made with
// the current certificate), as upstream's certificate manager.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { stringify } from 'yaml';
import { apiClient, type ApiClient } from '../apiserver/client.ts';
import { loadKubeconfig, type Connection } from '../apiserver/kubeconfig.ts';
import type { Logger } from '../log/log.ts';
import { CLIENT_SIGNER } from './csr.ts';
import { certificateManager, issueCertificate, type CertificateObserver, type CertificateSpec } from './certificate-manager.ts';
import { currentPath, loadCurrent, storeCurrent } from './store.ts';
import { certificateValidity } from './pki.ts';

const PREFIX = 'kubelet-client';

/** Pure: the kubeconfig the kubelet writes after bootstrap, as upstream lays it out. */
export function kubeletKubeconfig(server: string, ca: Buffer | undefined, certFile: string): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'default-cluster', cluster: { server, ...(ca ? { 'certificate-authority-data': ca.toString('base64') } : {}) } }],
    contexts: [{ name: 'default-context', context: { cluster: 'default-cluster', namespace: 'default', user: 'default-auth' } }],
    'current-context': 'default-context',
    preferences: {},
    users: [{ name: 'default-auth', user: { 'client-certificate': certFile, 'client-key': certFile } }],
  });
}

/** A token, or a client certificate that has not expired. */
function usable(conn: Connection | undefined, now = new Date()): boolean {
  if (conn?.token) return true;
  const v = conn?.cert ? certificateValidity(conn.cert.toString('utf8')) : undefined;
  return !!v && v.notAfter > now && !!conn!.key;
}

function tryLoad(path: string): Connection | undefined {
  try {
    return existsSync(path) ? loadKubeconfig(path) : undefined;
  } catch {
    return undefined;
  }
}

const clientSpec = (nodeName: string): CertificateSpec => ({
  prefix: PREFIX,
  signer: CLIENT_SIGNER,
  subject: { commonName: `system:node:${nodeName}`, organizations: ['system:nodes'] },
});

/**
 * Makes sure --kubeconfig holds a usable client certificate, bootstrapping one with
 * --bootstrap-kubeconfig when it does not. A valid one is reused across restarts.
 */
export async function ensureClientCertificate(o: {
  kubeconfig: string;
  bootstrapKubeconfig?: string;
  certDir: string;
  nodeName: string;
  log: Logger;
}): Promise<void> {
  // Without a bootstrap kubeconfig, the kubeconfig is used as it is.
  if (!o.bootstrapKubeconfig || usable(tryLoad(o.kubeconfig))) return;
  const boot = loadKubeconfig(o.bootstrapKubeconfig);
  const certFile = currentPath(o.certDir, PREFIX);
  // A certificate from an earlier bootstrap whose kubeconfig was lost is still good.
  const existing = loadCurrent(o.certDir, PREFIX);
  if (!existing || !certificateValidity(existing.pem) || certificateValidity(existing.pem)!.notAfter <= new Date()) {
    o.log.info('Using bootstrap kubeconfig to generate TLS client cert, key and kubeconfig file', {
      bootstrapKubeconfig: o.bootstrapKubeconfig,
    });
    const { cert, key } = await issueCertificate(apiClient(boot), clientSpec(o.nodeName), o.log);
    storeCurrent(o.certDir, PREFIX, cert, key);
  }
  mkdirSync(dirname(o.kubeconfig), { recursive: true });
  writeFileSync(o.kubeconfig, kubeletKubeconfig(boot.server, boot.ca, certFile), { mode: 0o600 });
}

/**
 * Rotates the client certificate when it was bootstrapped here (not an admin-provided one). One
 * that expired (the apiserver was out of reach past its end) is renewed with the bootstrap
 * kubeconfig's credentials while there is one, as upstream does.
 */
export function clientCertificateRotation(
  api: ApiClient,
  o: { kubeconfig: string; bootstrapKubeconfig?: string; certDir: string; nodeName: string; log: Logger; observe?: CertificateObserver },
): { stop(): void } {
  if (!loadCurrent(o.certDir, PREFIX)) return { stop() {} };
  return certificateManager(api, o.certDir, clientSpec(o.nodeName), {
    log: o.log,
    observe: o.observe,
    onCertificate: () => api.reload(loadKubeconfig(o.kubeconfig)),
    whenExpired: () => {
      const boot = o.bootstrapKubeconfig ? tryLoad(o.bootstrapKubeconfig) : undefined;
      if (!boot) return undefined;
      o.log.info('The client certificate expired: asking for a new one with the bootstrap kubeconfig', {
        bootstrapKubeconfig: o.bootstrapKubeconfig,
      });
      return apiClient(boot);
    },
  });
}
