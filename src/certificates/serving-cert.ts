// The certificate the kubelet serves :10250 with. Without tlsCertFile/tlsPrivateKeyFile,
// upstream makes a self-signed one at CERT-DIR/kubelet.crt and kubelet.key and reuses it.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { certificateValidity, newPrivateKey, selfSignedServingCert } from './pki.ts';

interface ServingCertificateOptions {
  certDir: string;
  nodeName: string;
  addresses: string[];
  certFile?: string;
  keyFile?: string;
}

export function servingCertificate(o: ServingCertificateOptions): { cert: string; key: string } {
  if (o.certFile && o.keyFile) return { cert: readFileSync(o.certFile, 'utf8'), key: readFileSync(o.keyFile, 'utf8') };
  const certFile = join(o.certDir, 'kubelet.crt'),
    keyFile = join(o.certDir, 'kubelet.key');
  if (existsSync(certFile) && existsSync(keyFile)) {
    const cert = readFileSync(certFile, 'utf8');
    if ((certificateValidity(cert)?.notAfter ?? new Date(0)) > new Date()) return { cert, key: readFileSync(keyFile, 'utf8') };
  }
  const key = newPrivateKey('rsa');
  const cert = selfSignedServingCert(key, o.nodeName, o.addresses);
  mkdirSync(o.certDir, { recursive: true, mode: 0o700 });
  writeFileSync(keyFile, key, { mode: 0o600 });
  writeFileSync(certFile, cert);
  return { cert, key };
}

/**
 * A certificate file and key file's contents as a pair the server can take: both parse and the
 * key is the certificate's (upstream's tls.X509KeyPair in kubeletServerCertificateDynamicFileManager).
 */
export function servingKeyPair([cert, key]: string[]): { cert: string; key: string } {
  if (!cert || !key) throw new Error('a certificate file and a key file are needed');
  if (!new X509Certificate(cert).checkPrivateKey(createPrivateKey(key))) throw new Error('the private key does not match the certificate');
  return { cert, key };
}
