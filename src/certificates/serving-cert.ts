// The certificate the kubelet serves :10250 with. Without tlsCertFile/tlsPrivateKeyFile,
// upstream makes a self-signed one at CERT-DIR/kubelet.crt and kubelet.key and reuses it.
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
