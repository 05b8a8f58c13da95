import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { opensslPki } from '../certificates/testing.ts';
import { logger } from '../log/log.ts';
import { kubeletAuthenticator } from './authn.ts';
import type { UserInfo } from './user.ts';
import { kubeletServer } from './server.ts';
import { certificateUser, parseCertBundle, verifyClientChain } from './x509-authn.ts';

// A throwaway PKI made with openssl: ca and other are roots, int an intermediate of ca.
const dir = mkdtempSync(join(tmpdir(), 'kubelet-pki-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string) => join(dir, name);
const pem = (name: string) => readFileSync(file(`${name}.crt`), 'utf8');
const cert = (name: string) => new X509Certificate(pem(name));
const { root, issue } = opensslPki(dir);

before(() => {
  writeFileSync(
    file('openssl.cnf'),
    [
      // The attribute upstream reads a user's UID from, by a name openssl's -subj knows.
      'oid_section = oids',
      '[oids]',
      'kubeuid = 1.3.6.1.4.1.57683.2',
      '[req]',
      'distinguished_name = dn',
      '[dn]',
      '[ca]',
      'basicConstraints = critical,CA:TRUE',
      'keyUsage = critical,keyCertSign,cRLSign',
      '[client]',
      'extendedKeyUsage = clientAuth',
      '[server]',
      'extendedKeyUsage = serverAuth',
      'subjectAltName = IP:127.0.0.1',
      '[plain]',
      'basicConstraints = CA:FALSE',
    ].join('\n'),
  );
  root('ca');
  root('other');
  issue('int', '/CN=intermediate', 'ca', 'ca');
  issue('alice', '/O=system:masters/O=team, x/CN=alice', 'ca', 'client');
  issue('bob', '/CN=bob', 'int', 'client');
  issue('mallory', '/CN=mallory', 'other', 'client');
  issue('noeku', '/CN=noeku', 'ca', 'plain');
  issue('serving', '/CN=127.0.0.1', 'ca', 'server');
  issue('carol', '/CN=carol', 'alice', 'client'); // alice is no CA: carol is not trusted
  issue('nocn', '/O=group', 'ca', 'client');
  issue('dave', '/CN=dave/kubeuid=uid-123', 'ca', 'client');
  issue('erin', '/CN=erin/kubeuid=u1/kubeuid=u2', 'ca', 'client');
});

test('verifyClientChain follows upstream x509 verification', () => {
  const now = new Date();
  const day = 24 * 3600 * 1000;
  const cases: [name: string, chain: string[], roots: string[], at: Date, want: RegExp | undefined][] = [
    ['signed by the CA', ['alice'], ['ca'], now, undefined],
    ['CA among others in the bundle', ['alice'], ['other', 'ca'], now, undefined],
    ['no extended key usage', ['noeku'], ['ca'], now, undefined],
    ['through a sent intermediate', ['bob', 'int'], ['ca'], now, undefined],
    ['intermediate not sent', ['bob'], ['ca'], now, /unknown authority/],
    ['another CA', ['mallory'], ['ca'], now, /unknown authority/],
    ['a leaf as issuer', ['carol', 'alice'], ['ca'], now, /unknown authority/],
    ['server certificate', ['serving'], ['ca'], now, /incompatible key usage/],
    ['expired', ['alice'], ['ca'], new Date(now.getTime() + 3 * day), /expired or is not yet valid/],
    ['not yet valid', ['alice'], ['ca'], new Date(now.getTime() - day), /expired or is not yet valid/],
    ['no certificate', [], ['ca'], now, /no client certificate/],
  ];
  for (const [name, chain, roots, at, want] of cases) {
    const got = verifyClientChain(chain.map(cert), parseCertBundle(roots.map(pem).join('')), at);
    if (want) assert.match(got ?? '', want, name);
    else assert.equal(got, undefined, name);
  }
});

test('certificateUser: CN is the user, O values the groups', () => {
  assert.deepEqual(certificateUser(cert('alice')), { name: 'alice', groups: ['system:masters', 'team, x'] });
  assert.deepEqual(certificateUser(cert('bob')), { name: 'bob', groups: [] });
  assert.equal(certificateUser(cert('nocn')), undefined);
});

test("certificateUser: the UID attribute is the user's UID (AllowParsingUserUIDFromCertAuth, upstream's parseUIDFromCert)", () => {
  const rows: [name: string, cert: string, gate: boolean, want: unknown][] = [
    ['one UID', 'dave', true, { name: 'dave', uid: 'uid-123', groups: [] }],
    ['the gate off: no UID', 'dave', false, { name: 'dave', groups: [] }],
    ['two UIDs: nobody', 'erin', true, undefined],
    ['two UIDs, the gate off: the CN alone', 'erin', false, { name: 'erin', groups: [] }],
    ['no UID attribute', 'bob', true, { name: 'bob', groups: [] }],
  ];
  for (const [name, c, gate, want] of rows) assert.deepEqual(certificateUser(cert(c), gate), want, name);
});

test('over HTTPS, client certificates authenticate end to end', async () => {
  const seen: UserInfo[] = [];
  const app = kubeletServer({
    nodeName: 'node-1',
    pods: () => [],
    containerLog: async () => undefined,
    metrics: new Registry(),
    probeMetrics: new Registry(),
    healthy: () => undefined,
    stats: { summaryJSON: async () => '{}', cadvisorMetrics: async () => '', resourceMetrics: async () => '' },
    runningPods: async () => [],
    configz: () => ({}),
    systemLogsDir: '/nonexistent',
    authenticate: kubeletAuthenticator({ clientCA: pem('ca'), log: logger('test') }),
    authorize: async (user) => {
      seen.push(user);
      return { allowed: true };
    },
    log: logger('test'),
  });
  const server = createServer(
    { key: readFileSync(file('serving.key')), cert: pem('serving'), requestCert: true, rejectUnauthorized: false },
    app,
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const get = (client?: string, chain: string[] = []) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: '/pods',
          agent: false,
          ca: pem('ca'),
          ...(client ? { key: readFileSync(file(`${client}.key`)), cert: [client, ...chain].map(pem).join('') } : {}),
        },
        (res) => {
          let body = '';
          res
            .setEncoding('utf8')
            .on('data', (d) => {
              body += d;
            })
            .on('end', () => resolve({ status: res.statusCode!, body }));
        },
      );
      req.on('error', reject).end();
    });
  try {
    const alice = await get('alice');
    assert.equal(alice.status, 200);
    assert.deepEqual(JSON.parse(alice.body), { kind: 'PodList', apiVersion: 'v1', metadata: {}, items: [] });
    assert.deepEqual(seen[0], { name: 'alice', groups: ['system:masters', 'team, x', 'system:authenticated'] });
    assert.equal((await get('bob', ['int'])).status, 200);
    assert.equal(seen[1]!.name, 'bob');
    assert.deepEqual(await get(), { status: 401, body: 'Unauthorized' });
    assert.equal((await get('mallory')).status, 401);
    assert.equal((await get('bob')).status, 401);
    assert.equal(seen.length, 2);
  } finally {
    server.close();
  }
});

test("a connection's client certificate is verified once, then again after a minute (it may have expired)", async () => {
  let reads = 0;
  const socket = {
    encrypted: true,
    getPeerCertificate: () => {
      reads++;
      return { raw: cert('alice').raw };
    },
  };
  const req = { headers: {}, socket } as unknown as import('node:http').IncomingMessage;
  let now = Date.now();
  const authenticate = kubeletAuthenticator({ clientCA: pem('ca'), log: logger('test'), now: () => now });
  assert.equal((await authenticate(req))?.name, 'alice');
  assert.equal((await authenticate(req))?.name, 'alice');
  assert.equal(reads, 1);
  now += 3 * 24 * 3600 * 1000; // past the certificate's 2 days
  assert.equal(await authenticate(req), undefined);
  assert.equal(reads, 2);
});
