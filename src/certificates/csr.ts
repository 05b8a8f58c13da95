// Asks the cluster for a certificate through a CertificateSigningRequest and waits
// for the signer to issue it (after approval by the csrapproving controller or an operator).
import type { CertificateSigningRequest } from 'kubernetes-types/certificates/v1.js';
import type { ApiClient } from '../apiserver/client.ts';
import { backoff, sleep } from '../backoff/backoff.ts';
import type { Logger } from '../log/log.ts';
import { apiPath } from '../apiserver/paths.ts';

export const CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
export const SERVING_SIGNER = 'kubernetes.io/kubelet-serving';

export class CertificateDenied extends Error {}

/** The issued certificate in PEM; throws CertificateDenied when denied or failed. */
export async function requestCertificate(
  api: ApiClient,
  csrPem: string,
  signerName: string,
  log: Logger,
  opts: { signal?: AbortSignal } = {},
): Promise<string> {
  // The requests are for ECDSA keys (pki.ts newPrivateKey): no key encipherment, as upstream's
  // DefaultKubeletServingGetUsages and DefaultKubeletClientGetUsages give for a non-RSA key.
  const usages = ['digital signature', signerName === SERVING_SIGNER ? 'server auth' : 'client auth'];
  const created = await api.create<CertificateSigningRequest>(
    apiPath({ group: 'certificates.k8s.io', resource: 'certificatesigningrequests' }),
    {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      // kubeadm's and upstream's kubelet name client CSRs node-csr-*.
      metadata: { generateName: signerName === CLIENT_SIGNER ? 'node-csr-' : 'csr-' },
      spec: { request: Buffer.from(csrPem).toString('base64'), signerName, usages },
    },
  );
  const name = created.metadata!.name!;
  log.info('Waiting for the certificate signing request to be approved and issued', { csr: name, signerName });
  const poll = backoff(200, 5000);
  let lastLog = Date.now();
  for (;;) {
    const csr = await api.get<CertificateSigningRequest>(
      apiPath({ group: 'certificates.k8s.io', resource: 'certificatesigningrequests', name }),
    );
    const bad = csr.status?.conditions?.find((c) => (c.type === 'Denied' || c.type === 'Failed') && c.status !== 'False');
    if (bad)
      throw new CertificateDenied(
        `certificate signing request ${name} was ${bad.type.toLowerCase()}: ${bad.reason ?? ''} ${bad.message ?? ''}`.trim(),
      );
    if (csr.status?.certificate) {
      log.info('Certificate issued', { csr: name, signerName });
      return Buffer.from(csr.status.certificate, 'base64').toString('utf8');
    }
    if (Date.now() - lastLog > 60_000) {
      log.info('Still waiting for certificate approval', { csr: name });
      lastLog = Date.now();
    }
    await sleep(poll.next(), opts.signal);
    if (opts.signal?.aborted) throw new Error('stopped while waiting for a certificate');
  }
}
