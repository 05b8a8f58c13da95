import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { CSIDriver } from 'kubernetes-types/storage/v1.js';
import {
  type PodTokenRequest,
  podTokenRequests,
  requiresRepublish,
  SERVICE_ACCOUNT_TOKENS_KEY,
  serviceAccountTokensJson,
  withServiceAccountTokens,
} from './service-account-tokens.ts';

const pod: Pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u1' }, spec: { serviceAccountName: 'sa', containers: [] } };
const driver = (spec: Record<string, unknown>): CSIDriver => ({ metadata: { name: 'd' }, spec });

test('podTokenRequests: upstream podServiceAccountTokenAttrs requests', () => {
  const base = { namespace: 'ns', serviceAccount: 'sa', podName: 'p', podUID: 'u1' };
  const rows: [string, CSIDriver | undefined, PodTokenRequest[]][] = [
    ['no CSIDriver: none', undefined, []],
    ['no tokenRequests: none', driver({}), []],
    ['empty tokenRequests: none', driver({ tokenRequests: [] }), []],
    [
      'one audience with expiration',
      driver({ tokenRequests: [{ audience: 'vault', expirationSeconds: 600 }] }),
      [{ ...base, audience: 'vault', audiences: ['vault'], expirationSeconds: 600 }],
    ],
    [
      'empty audience: no audiences (the apiserver default), expiration left unset',
      driver({ tokenRequests: [{ audience: '' }] }),
      [{ ...base, audience: '', audiences: [] }],
    ],
    [
      'several, in order',
      driver({ tokenRequests: [{ audience: 'b' }, { audience: 'a', expirationSeconds: 3600 }] }),
      [
        { ...base, audience: 'b', audiences: ['b'] },
        { ...base, audience: 'a', audiences: ['a'], expirationSeconds: 3600 },
      ],
    ],
  ];
  for (const [name, d, want] of rows) assert.deepEqual(podTokenRequests(pod, d), want, name);
});

test('serviceAccountTokensJson: as Go json.Marshal of map[string]TokenRequestStatus', () => {
  const t = '2026-12-03T08:00:00Z';
  const rows: [string, Parameters<typeof serviceAccountTokensJson>[0], string][] = [
    ['none', [], '{}'],
    ['one', [{ audience: 'vault', token: 'tok', expirationTimestamp: t }], `{"vault":{"token":"tok","expirationTimestamp":"${t}"}}`],
    [
      'keys sorted, empty first',
      [
        { audience: 'z', token: '1', expirationTimestamp: t },
        { audience: '', token: '2', expirationTimestamp: t },
        { audience: 'a', token: '3', expirationTimestamp: t },
      ],
      `{"":{"token":"2","expirationTimestamp":"${t}"},"a":{"token":"3","expirationTimestamp":"${t}"},"z":{"token":"1","expirationTimestamp":"${t}"}}`,
    ],
    [
      'HTML characters escaped as Go does',
      [{ audience: 'https://x/?a=1&b=<2>', token: 't', expirationTimestamp: t }],
      `{"https://x/?a=1\\u0026b=\\u003c2\\u003e":{"token":"t","expirationTimestamp":"${t}"}}`,
    ],
    [
      'byte order, not UTF-16 order',
      [
        { audience: '\u{1F600}', token: '1', expirationTimestamp: t },
        { audience: '\uFF21', token: '2', expirationTimestamp: t },
      ],
      `{"\uFF21":{"token":"2","expirationTimestamp":"${t}"},"\u{1F600}":{"token":"1","expirationTimestamp":"${t}"}}`,
    ],
  ];
  for (const [name, results, want] of rows) {
    assert.equal(serviceAccountTokensJson(results), want, name);
    assert.doesNotThrow(() => JSON.parse(want), name);
  }
});

test('withServiceAccountTokens: volume context by default, secrets with serviceAccountTokenInSecrets', () => {
  const r = { volumeContext: { a: '1', [SERVICE_ACCOUNT_TOKENS_KEY]: 'user' }, secrets: { s: '2' } };
  const rows: [string, string | undefined, CSIDriver | undefined, ReturnType<typeof withServiceAccountTokens>][] = [
    ['no tokens: unchanged', undefined, driver({ serviceAccountTokenInSecrets: true }), r],
    [
      'volume context, overriding an attribute of that key',
      '{}',
      driver({}),
      { volumeContext: { a: '1', [SERVICE_ACCOUNT_TOKENS_KEY]: '{}' }, secrets: { s: '2' } },
    ],
    [
      'serviceAccountTokenInSecrets: false is the volume context',
      '{}',
      driver({ serviceAccountTokenInSecrets: false }),
      { volumeContext: { a: '1', [SERVICE_ACCOUNT_TOKENS_KEY]: '{}' }, secrets: { s: '2' } },
    ],
    [
      'serviceAccountTokenInSecrets: secrets only',
      '{}',
      driver({ serviceAccountTokenInSecrets: true }),
      { volumeContext: r.volumeContext, secrets: { s: '2', [SERVICE_ACCOUNT_TOKENS_KEY]: '{}' } },
    ],
  ];
  for (const [name, json, d, want] of rows) assert.deepEqual(withServiceAccountTokens(r, json, d), want, name);
});

test('requiresRepublish: upstream csiPlugin.RequiresRemount', () => {
  const rows: [CSIDriver | undefined, boolean][] = [
    [undefined, false],
    [driver({}), false],
    [driver({ requiresRepublish: false }), false],
    [driver({ requiresRepublish: true }), true],
  ];
  for (const [d, want] of rows) assert.equal(requiresRepublish(d), want, JSON.stringify(d));
});
