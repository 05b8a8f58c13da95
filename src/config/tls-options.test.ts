import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSecureContext } from 'node:tls';
import { serverCurves, serverTLS } from './tls-options.ts';

const cases: [string, string, string[], ReturnType<typeof serverTLS> | RegExp][] = [
  ['unset: TLS 1.2 and node default ciphers', '', [], { minVersion: 'TLSv1.2', insecure: [] }],
  ['VersionTLS13', 'VersionTLS13', [], { minVersion: 'TLSv1.3', insecure: [] }],
  ['VersionTLS10', 'VersionTLS10', [], { minVersion: 'TLSv1', insecure: [] }],
  ['an unknown version', 'TLSv1.2', [], /unknown tls version "TLSv1.2"/],
  [
    "CIS's strong suites, by their OpenSSL names",
    '',
    ['TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384'],
    {
      minVersion: 'TLSv1.2',
      ciphers: 'ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-CHACHA20-POLY1305:ECDHE-ECDSA-AES256-GCM-SHA384',
      insecure: [],
    },
  ],
  [
    'an insecure suite is kept, and named',
    '',
    ['TLS_RSA_WITH_AES_128_GCM_SHA256', 'TLS_AES_128_GCM_SHA256'],
    { minVersion: 'TLSv1.2', ciphers: 'AES128-GCM-SHA256', insecure: ['TLS_RSA_WITH_AES_128_GCM_SHA256'] },
  ],
  ['only TLS 1.3 suites: nothing for TLS 1.2, as Go', 'VersionTLS12', ['TLS_AES_256_GCM_SHA384'], { minVersion: 'TLSv1.3', insecure: [] }],
  [
    'an unknown suite',
    '',
    ['TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'ECDHE-RSA-AES128-GCM-SHA256'],
    /Cipher suite ECDHE-RSA-AES128-GCM-SHA256 not supported or doesn't exist/,
  ],
];
for (const [name, min, suites, want] of cases)
  test(`serverTLS: ${name}`, () => {
    if (want instanceof RegExp) assert.throws(() => serverTLS(min, suites), want);
    else assert.deepEqual(serverTLS(min, suites), want);
  });

test('serverCurves: tlsCurvePreferences as OpenSSL groups, refused as cliflag.TLSCurvePreferences', () => {
  const rows: [string, number[], string | undefined | RegExp][] = [
    ['empty: the default', [], undefined],
    ['P-256 and X25519', [23, 29], 'P-256:X25519'],
    [
      'every curve Go 1.26 names',
      [23, 24, 25, 29, 4587, 4588, 4589],
      'P-256:P-384:P-521:X25519:SecP256r1MLKEM768:X25519MLKEM768:SecP384r1MLKEM1024',
    ],
    ['out of range', [0], /curve preference 0 is out of range \(must be 1-65535\)/],
    ['above uint16', [65536], /curve preference 65536 is out of range/],
    ['twice', [29, 29], /duplicate curve preference 29/],
    ['unknown to Go', [30], /curve preference 30 is not supported by the current Go version/],
  ];
  for (const [name, ids, want] of rows) {
    if (want instanceof RegExp) assert.throws(() => serverCurves(ids), want, name);
    else assert.equal(serverCurves(ids), want, name);
  }
  // Every group is one node's TLS library takes.
  assert.doesNotThrow(() => createSecureContext({ ecdhCurve: serverCurves([23, 24, 25, 29, 4587, 4588, 4589]) }));
});
