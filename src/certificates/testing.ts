// A throwaway PKI made with openssl in a directory, for the unit tests of TLS to the apiserver
// (src/apiserver/client.test.ts) and of the kubelet API's x509 authentication
// (src/server/x509-authn.test.ts). The caller writes DIR/openssl.cnf with the extension sections
// it names. Not named .test.ts; tsconfig.build.json leaves it out of dist.
import { execFileSync } from 'node:child_process';

/** Certificates valid for 2 days from now, P-256 keys unencrypted: NAME.crt and NAME.key in dir. */
export function opensslPki(dir: string) {
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const newKey = (name: string) => ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`];
  return {
    /** A self-signed CA (the cnf's [ca] section), subject CN=NAME. */
    root(name: string) {
      openssl(
        'req',
        '-x509',
        '-config',
        'openssl.cnf',
        '-extensions',
        'ca',
        ...newKey(name),
        '-out',
        `${name}.crt`,
        '-days',
        '2',
        '-subj',
        `/CN=${name}`,
      );
    },
    /** A certificate for subject, signed by issuer's key, with the cnf's [extensions] section. */
    issue(name: string, subject: string, issuer: string, extensions: string) {
      openssl('req', '-new', '-config', 'openssl.cnf', ...newKey(name), '-out', `${name}.csr`, '-subj', subject);
      openssl(
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        `${issuer}.crt`,
        '-CAkey',
        `${issuer}.key`,
        '-days',
        '2',
        '-extfile',
        'openssl.cnf',
        '-extensions',
        extensions,
        '-out',
        `${name}.crt`,
      );
    },
  };
}
