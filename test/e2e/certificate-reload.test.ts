// Certificates replaced under a running kubelet, as cert-manager, a node agent or an operator
// replaces them: the serving certificate of tlsCertFile/tlsPrivateKeyFile
// (ReloadKubeletServerCertificateFile) and the client CA bundle of
// authentication.x509.clientCAFile are read again without a restart, as upstream's dynamic
// certificate content does. Set through a --config-dir drop-in, as a managed node sets them.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { appendFileSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { connect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NODE_IP, ROOT, ensureStack, eventually, restartKubelet } from './stack.ts';

const PKI = `${ROOT}/_output/local/pki`;
const dir = mkdtempSync(join(tmpdir(), 'kts-certreload-'));
const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'pipe', 'pipe'] });
/** A new P-256 key, unencrypted, into KEYFILE. */
const newKey = (keyFile: string) => ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', keyFile];

/** A key and a certificate signed by CA (its .crt and .key); a serving one names NODE_IP. */
function issue(name: string, subject: string, ca: string, serving: boolean): void {
  const ext = join(dir, `${name}.ext`);
  writeFileSync(ext, serving ? `subjectAltName=IP:${NODE_IP}\nextendedKeyUsage=serverAuth\n` : 'extendedKeyUsage=clientAuth\n');
  openssl('req', ...newKey(join(dir, `${name}.key`)), '-subj', subject, '-out', join(dir, `${name}.csr`));
  openssl(
    'x509',
    '-req',
    '-in',
    join(dir, `${name}.csr`),
    '-CA',
    `${ca}.crt`,
    '-CAkey',
    `${ca}.key`,
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    ext,
    '-out',
    join(dir, `${name}.crt`),
  );
}

/** Replaces FILE with SRC's content as tools do: a new file renamed over it. */
function replace(file: string, content: string | Buffer): void {
  writeFileSync(`${file}.new`, content);
  renameSync(`${file}.new`, file);
}

/** The serial number of the certificate the kubelet serves :10250 with. */
const servedSerial = () =>
  new Promise<string>((resolve, reject) => {
    const s = connect({ host: NODE_IP, port: 10250, rejectUnauthorized: false }, () => {
      resolve(s.getPeerX509Certificate()!.serialNumber);
      s.destroy();
    });
    s.on('error', reject);
  });

/** GET /pods with a client certificate: the status code. */
const podsWith = (name: string) =>
  new Promise<number>((resolve, reject) => {
    const req = request(
      {
        host: NODE_IP,
        port: 10250,
        path: '/pods',
        rejectUnauthorized: false,
        cert: readFileSync(join(dir, `${name}.crt`)),
        key: readFileSync(join(dir, `${name}.key`)),
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end();
  });

const serial = (name: string) => new X509Certificate(readFileSync(join(dir, `${name}.crt`))).serialNumber;

before(() => {
  ensureStack();
  // The node's serving pair and a client CA bundle of the cluster's CA, in files of their own.
  issue('serving-a', '/CN=kts-reload-a', `${PKI}/ca`, true);
  copyFileSync(join(dir, 'serving-a.crt'), join(dir, 'kubelet.crt'));
  copyFileSync(join(dir, 'serving-a.key'), join(dir, 'kubelet.key'));
  copyFileSync(`${PKI}/ca.crt`, join(dir, 'client-ca.crt'));
  mkdirSync(join(dir, 'conf.d'));
  writeFileSync(
    join(dir, 'conf.d', '50-certificates.conf'),
    `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ntlsCertFile: ${dir}/kubelet.crt\ntlsPrivateKeyFile: ${dir}/kubelet.key\n` +
      `authentication:\n  x509:\n    clientCAFile: ${dir}/client-ca.crt\n`,
  );
  restartKubelet(undefined, { KTS_KUBELET_FLAGS: `--config-dir=${dir}/conf.d` });
});

after(() => {
  restartKubelet();
  rmSync(dir, { recursive: true, force: true });
});

test('a replaced tlsCertFile and tlsPrivateKeyFile are served without a restart', async () => {
  await eventually('the kubelet serving serving-a', 60_000, async () => (await servedSerial()) === serial('serving-a'));
  issue('serving-b', '/CN=kts-reload-b', `${PKI}/ca`, true);
  replace(join(dir, 'kubelet.key'), readFileSync(join(dir, 'serving-b.key')));
  replace(join(dir, 'kubelet.crt'), readFileSync(join(dir, 'serving-b.crt')));
  await eventually('the kubelet serving serving-b', 10_000, async () => (await servedSerial()) === serial('serving-b'), 250);
});

test('a CA added to the clientCAFile bundle authenticates its clients without a restart', async () => {
  // A new CA, and a cluster admin's certificate signed by it (authorized by the apiserver as any
  // system:masters user).
  openssl('req', '-x509', ...newKey(join(dir, 'new-ca.key')), '-subj', '/CN=kts-reload-ca', '-days', '1', '-out', join(dir, 'new-ca.crt'));
  issue('admin-b', '/O=system:masters/CN=kts-reload-admin', join(dir, 'new-ca'), false);
  issue('admin-a', '/O=system:masters/CN=kts-reload-admin', `${PKI}/ca`, false);
  assert.equal(await podsWith('admin-a'), 200, 'a client of the bundle as it was');
  assert.equal(await podsWith('admin-b'), 401, "the new CA's client before the bundle has it");
  const bundle = join(dir, 'client-ca.crt');
  copyFileSync(bundle, `${bundle}.new`);
  appendFileSync(`${bundle}.new`, readFileSync(join(dir, 'new-ca.crt')));
  renameSync(`${bundle}.new`, bundle);
  await eventually("the new CA's client authenticated", 10_000, async () => (await podsWith('admin-b')) === 200, 250);
  assert.equal(await podsWith('admin-a'), 200, 'the old CA still in the bundle');
});
