import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serverTLS } from './tls-options.ts';

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
