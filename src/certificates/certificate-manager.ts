// Upstream's certificate manager: keeps PREFIX-current.pem in the cert dir valid by
// requesting a new certificate through a CSR at a jittered 70-90% of the current one's
// lifetime (or at once when there is none or it expired), then hands it over.
import type { ApiClient } from '../apiserver/client.ts';
import { backoff, jittered, sleep } from '../backoff/backoff.ts';
import type { Logger } from '../log/log.ts';
import { requestCertificate } from './csr.ts';
import { loadCurrent, storeCurrent } from './store.ts';
import { certificateRequest, certificateValidity, newPrivateKey, type Subject } from './pki.ts';

/** Pure: when to rotate, at a jittered 70-90% of the certificate's lifetime (upstream's rule). */
export function rotationDeadline(notBefore: Date, notAfter: Date, random = Math.random): Date {
  const life = notAfter.getTime() - notBefore.getTime();
  return new Date(notBefore.getTime() + life * (0.7 + 0.2 * random()));
}

export interface CertificateSpec {
  prefix: string;
  signer: string;
  subject: Subject;
  sans?: string[];
}

/** A new key and a certificate for it, issued through a CSR. */
export async function issueCertificate(api: ApiClient, spec: CertificateSpec, log: Logger, signal?: AbortSignal) {
  const key = newPrivateKey('ec');
  const csr = certificateRequest(key, spec.subject, spec.sans);
  const cert = await requestCertificate(api, csr, spec.signer, log, { signal });
  return { cert, key };
}

/** What a certificate manager reports (upstream's *_ttl_seconds, *_renew_errors and server_rotation_seconds). */
export interface CertificateObserver {
  /** The current certificate's notAfter, whenever it is read (undefined: none, or not readable). */
  expiresAt(ms: number | undefined): void;
  renewFailed(): void;
  /** A certificate replaced: how long since the one replaced began (client-go's updateCached). */
  rotated(ageSeconds: number): void;
}

export function certificateManager(
  api: ApiClient,
  certDir: string,
  spec: CertificateSpec,
  o: {
    log: Logger;
    onCertificate: (pem: string) => void;
    /**
     * Whom to ask once the current certificate has expired, when it cannot authenticate the
     * CSR itself (upstream's client certificate manager asks with the bootstrap credentials,
     * its Current() being nil then).
     */
    whenExpired?: () => ApiClient | undefined;
    observe?: CertificateObserver;
  },
): { stop(): void } {
  const abort = new AbortController();
  // At most a minute apart: an outage longer than the certificate's life must not leave the
  // kubelet minutes behind the apiserver's return.
  const retry = backoff(1000, 64_000);
  (async () => {
    while (!abort.signal.aborted) {
      const v = certificateValidity(loadCurrent(certDir, spec.prefix)?.pem ?? '');
      const valid = !!v && v.notAfter > new Date();
      o.observe?.expiresAt(v?.notAfter.getTime());
      if (v && valid) {
        const deadline = rotationDeadline(v.notBefore, v.notAfter);
        o.log.info('Certificate rotation deadline determined', {
          certificate: spec.prefix,
          expiration: v.notAfter.toISOString(),
          deadline: deadline.toISOString(),
        });
        // Timers cannot wait more than ~24.8 days: wake up and recompute.
        await sleep(Math.min(Math.max(0, deadline.getTime() - Date.now()), 2 ** 31 - 1), abort.signal);
        if (abort.signal.aborted || Date.now() < deadline.getTime()) continue;
      }
      try {
        o.log.info('Requesting a new certificate', { certificate: spec.prefix, signer: spec.signer });
        const { cert, key } = await issueCertificate((!valid && o.whenExpired?.()) || api, spec, o.log, abort.signal);
        storeCurrent(certDir, spec.prefix, cert, key);
        if (v) o.observe?.rotated((Date.now() - v.notBefore.getTime()) / 1000);
        retry.reset();
        o.onCertificate(loadCurrent(certDir, spec.prefix)!.pem);
      } catch (e) {
        if (abort.signal.aborted) return;
        o.observe?.renewFailed();
        const wait = jittered(retry.next(), 0.1);
        o.log.warn('Failed to get a new certificate, will retry', { certificate: spec.prefix, err: e, retryInMs: wait });
        await sleep(wait, abort.signal);
      }
    }
  })();
  return { stop: () => abort.abort() };
}
