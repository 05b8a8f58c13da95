import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { type CAReload, caReload } from './ca-reload.ts';

const ca = execFileSync(
  'openssl',
  [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    '/dev/null',
    '-days',
    '1',
    '-subj',
    '/CN=ca',
  ],
  { stdio: ['ignore', 'pipe', 'ignore'] },
);
const garbled = Buffer.from(ca.toString().replace(/\n[A-Za-z0-9+/]{20}/, '\nAAAAAAAAAAAAAAAAAAAA'));

test("caReload: a look at the CA file, as client-go's tryRefreshTransportLocked judges it", () => {
  const rows: [string, Buffer | undefined, Buffer | Error, CAReload][] = [
    ['the same bundle', ca, Buffer.from(ca), { result: 'success', reason: 'unchanged' }],
    ['another bundle', Buffer.from('old'), ca, { result: 'success', reason: 'updated' }],
    [
      'another bundle with text around the certificate',
      Buffer.from('old'),
      Buffer.concat([Buffer.from('# rotated\n'), ca]),
      { result: 'success', reason: 'updated' },
    ],
    ['unreadable', ca, new Error('ENOENT'), { result: 'failure', reason: 'read_error' }],
    ['empty', ca, Buffer.alloc(0), { result: 'failure', reason: 'empty' }],
    ['no certificate in it', ca, Buffer.from('not a certificate\n'), { result: 'failure', reason: 'ca_parse_error' }],
    ['a certificate that does not parse', ca, garbled, { result: 'failure', reason: 'ca_parse_error' }],
  ];
  for (const [name, inUse, read, want] of rows) assert.deepEqual(caReload(inUse, read), want, name);
});
