// The kubelet's client certificate: TLS bootstrap when there is none (a CSR made with
// the bootstrap token's credentials), and rotation before it expires (a CSR made with
// the current certificate), as upstream's certificate manager.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { stringify } from 'yaml';
import { apiClient, type ApiClient } from '../apiserver/client.ts';
import { loadKubeconfig, type Connection } from '../apiserver/kubeconfig.ts';
import { jittered, sleep, backoff } from '../backoff/backoff.ts';
import type { Logger } from '../log/log.ts';
import { CLIENT_SIGNER, requestCertificate } from './csr.ts';
import { currentPath, loadCurrent, storeCurrent } from './store.ts';
import { certificateRequest, certificateValidity, newPrivateKey } from './x509.ts';

const PREFIX = 'kubelet-client';

/** Pure: the kubeconfig the kubelet writes after bootstrap, as upstream lays it out. */
export function kubeletKubeconfig(server: string, ca: Buffer | undefined, certFile: string): string {
  return stringify({
    apiVersion: 'v1', kind: 'Config',
    clusters: [{ name: 'default-cluster', cluster: { server, ...(ca ? { 'certificate-authority-data': ca.toString('base64') } : {}) } }],
    contexts: [{ name: 'default-context', context: { cluster: 'default-cluster', namespace: 'default', user: 'default-auth' } }],
    'current-context': 'default-context',
    preferences: {},
    users: [{ name: 'default-auth', user: { 'client-certificate': certFile, 'client-key': certFile } }],
  });
}

/** Pure: when to rotate, at a jittered 70-90% of the certificate's lifetime (upstream's rule). */
export function rotationDeadline(notBefore: Date, notAfter: Date, random = Math.random): Date {
  const life = notAfter.getTime() - notBefore.getTime();
  return new Date(notBefore.getTime() + life * (0.7 + 0.2 * random()));
}

/** A token, or a client certificate that has not expired. */
function usable(conn: Connection | undefined, now = new Date()): boolean {
  if (conn?.token) return true;
  const v = conn?.cert ? certificateValidity(conn.cert.toString('utf8')) : undefined;
  return !!v && v.notAfter > now && !!conn!.key;
}

function tryLoad(path: string): Connection | undefined {
  try { return existsSync(path) ? loadKubeconfig(path) : undefined; } catch { return undefined; }
}

async function newCertificate(api: ApiClient, nodeName: string, log: Logger, signal?: AbortSignal) {
  const key = newPrivateKey();
  const csr = await certificateRequest(key, { commonName: `system:node:${nodeName}`, organizations: ['system:nodes'] });
  const cert = await requestCertificate(api, csr, CLIENT_SIGNER, log, { namePrefix: 'node-csr-', signal });
  return { cert, key };
}

/**
 * Makes sure --kubeconfig holds a usable client certificate, bootstrapping one with
 * --bootstrap-kubeconfig when it does not. A valid one is reused across restarts.
 */
export async function ensureClientCertificate(o: { kubeconfig: string; bootstrapKubeconfig?: string; certDir: string; nodeName: string; log: Logger }): Promise<void> {
  // Without a bootstrap kubeconfig, the kubeconfig is used as it is.
  if (!o.bootstrapKubeconfig || usable(tryLoad(o.kubeconfig))) return;
  const boot = loadKubeconfig(o.bootstrapKubeconfig);
  const certFile = currentPath(o.certDir, PREFIX);
  // A certificate from an earlier bootstrap whose kubeconfig was lost is still good.
  const existing = loadCurrent(o.certDir, PREFIX);
  if (!existing || !certificateValidity(existing.pem) || certificateValidity(existing.pem)!.notAfter <= new Date()) {
    o.log.info('Using bootstrap kubeconfig to generate TLS client cert, key and kubeconfig file', { bootstrapKubeconfig: o.bootstrapKubeconfig });
    const { cert, key } = await newCertificate(apiClient(boot), o.nodeName, o.log);
    storeCurrent(o.certDir, PREFIX, cert, key);
  }
  mkdirSync(dirname(o.kubeconfig), { recursive: true });
  writeFileSync(o.kubeconfig, kubeletKubeconfig(boot.server, boot.ca, certFile), { mode: 0o600 });
}

/** Rotates the client certificate before it expires; api gets the new one when it lands. */
export function clientCertificateRotation(api: ApiClient, o: { kubeconfig: string; certDir: string; nodeName: string; log: Logger; onRotated?: () => void }): { stop(): void } {
  const abort = new AbortController();
  const retry = backoff(1000, 300_000);
  (async () => {
    while (!abort.signal.aborted) {
      const conn = tryLoad(o.kubeconfig);
      const v = conn?.cert ? certificateValidity(conn.cert.toString('utf8')) : undefined;
      // A certificate not managed here (e.g. an admin-provided file) is left alone.
      if (!v || !existsSync(currentPath(o.certDir, PREFIX))) return;
      const deadline = rotationDeadline(v.notBefore, v.notAfter);
      o.log.info('Certificate rotation deadline determined', { expiration: v.notAfter.toISOString(), deadline: deadline.toISOString() });
      // Timers cannot wait more than ~24.8 days: wake up and recompute.
      await sleep(Math.min(Math.max(0, deadline.getTime() - Date.now()), 2 ** 31 - 1), abort.signal);
      if (abort.signal.aborted || Date.now() < deadline.getTime()) continue;
      try {
        o.log.info('Rotating client certificate', { node: o.nodeName });
        const { cert, key } = await newCertificate(api, o.nodeName, o.log, abort.signal);
        storeCurrent(o.certDir, PREFIX, cert, key);
        api.reload(loadKubeconfig(o.kubeconfig));
        retry.reset();
        o.onRotated?.();
      } catch (e) {
        const wait = jittered(retry.next(), 0.1);
        o.log.warn('Failed to rotate client certificate, will retry', { err: e, retryInMs: wait });
        await sleep(wait, abort.signal);
      }
    }
  })();
  return { stop: () => abort.abort() };
}
