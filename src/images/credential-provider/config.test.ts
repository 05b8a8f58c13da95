import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CredentialProvider, decodeConfig, readConfig, validateConfig } from './config.ts';

const V1 = 'credentialprovider.kubelet.k8s.io/v1';

test('decodeConfig: YAML or JSON, the three versions, strict (upstream decode)', () => {
  const cases: { name: string; text: string; want?: Partial<CredentialProvider>; error?: RegExp }[] = [
    {
      name: 'v1 YAML with every field',
      text: `apiVersion: kubelet.config.k8s.io/v1
kind: CredentialProviderConfig
providers:
- name: ecr
  matchImages: ["*.dkr.ecr.*.amazonaws.com"]
  defaultCacheDuration: 12h
  apiVersion: ${V1}
  args: [get-credentials]
  env: [{name: AWS_PROFILE, value: node}]
  tokenAttributes:
    serviceAccountTokenAudience: my-audience
    cacheType: ServiceAccount
    requireServiceAccount: true
    requiredServiceAccountAnnotationKeys: [example.com/role]
`,
      want: {
        name: 'ecr',
        matchImages: ['*.dkr.ecr.*.amazonaws.com'],
        defaultCacheDurationMs: 12 * 3600_000,
        apiVersion: V1,
        args: ['get-credentials'],
        env: [{ name: 'AWS_PROFILE', value: 'node' }],
        tokenAttributes: {
          serviceAccountTokenAudience: 'my-audience',
          cacheType: 'ServiceAccount',
          requireServiceAccount: true,
          requiredServiceAccountAnnotationKeys: ['example.com/role'],
          optionalServiceAccountAnnotationKeys: [],
        },
      },
    },
    {
      name: 'v1beta1 JSON',
      text: JSON.stringify({
        apiVersion: 'kubelet.config.k8s.io/v1beta1',
        kind: 'CredentialProviderConfig',
        providers: [{ name: 'p', matchImages: ['r.io'], defaultCacheDuration: '0s', apiVersion: V1 }],
      }),
      want: { name: 'p', matchImages: ['r.io'], defaultCacheDurationMs: 0, args: [], env: [] },
    },
    {
      name: 'v1alpha1, no defaultCacheDuration (validation refuses it later)',
      text: 'apiVersion: kubelet.config.k8s.io/v1alpha1\nkind: CredentialProviderConfig\nproviders: [{name: p, matchImages: [r.io], apiVersion: x}]\n',
      want: { name: 'p', defaultCacheDurationMs: undefined },
    },
    {
      name: 'tokenAttributes are v1 only',
      text: 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: CredentialProviderConfig\nproviders: [{name: p, tokenAttributes: {}}]\n',
      error: /strict decoding error: unknown field "providers\[0\]\.tokenAttributes"/,
    },
    {
      name: 'an unknown field',
      text: 'apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders: [{name: p, matchImage: [r.io]}]\n',
      error: /unknown field "providers\[0\]\.matchImage"/,
    },
    {
      name: 'a duplicate key',
      text: 'apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nkind: X\n',
      error: /strict decoding error/,
    },
    {
      name: 'the wrong kind',
      text: 'apiVersion: kubelet.config.k8s.io/v1\nkind: KubeletConfiguration\n',
      error: /failed to decode "KubeletConfiguration" \(wrong Kind\)/,
    },
    {
      name: 'another group',
      text: 'apiVersion: example.com/v1\nkind: CredentialProviderConfig\n',
      error: /no kind "CredentialProviderConfig" is registered/,
    },
    { name: 'no kind', text: 'apiVersion: kubelet.config.k8s.io/v1\n', error: /Object 'Kind' is missing/ },
    {
      name: 'a bad duration',
      text: 'apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders: [{name: p, defaultCacheDuration: 5}]\n',
      error: /defaultCacheDuration: time: invalid duration/,
    },
  ];
  for (const c of cases) {
    if (c.error) {
      assert.throws(() => decodeConfig(c.text), c.error, c.name);
      continue;
    }
    const p = decodeConfig(c.text).providers[0]!;
    for (const [k, v] of Object.entries(c.want!)) assert.deepEqual(p[k as keyof CredentialProvider], v, `${c.name}: ${k}`);
  }
});

const provider = (over: Partial<CredentialProvider> = {}): CredentialProvider => ({
  name: 'p',
  matchImages: ['registry.io'],
  defaultCacheDurationMs: 60_000,
  apiVersion: V1,
  args: [],
  env: [],
  ...over,
});
const tokens = (over: Partial<NonNullable<CredentialProvider['tokenAttributes']>> = {}) => ({
  serviceAccountTokenAudience: 'aud',
  cacheType: 'ServiceAccount',
  requireServiceAccount: true,
  requiredServiceAccountAnnotationKeys: [],
  optionalServiceAccountAnnotationKeys: [],
  ...over,
});

test('validateConfig: upstream validateCredentialProviderConfig, its field errors', () => {
  const cases: { name: string; providers: CredentialProvider[]; gate?: boolean; want: string[] }[] = [
    { name: 'valid', providers: [provider()], want: [] },
    { name: 'no providers', providers: [], want: ['providers: Required value: at least 1 item in plugins is required'] },
    {
      name: 'names',
      providers: [provider({ name: 'a/b' }), provider({ name: 'a b' }), provider({ name: '.' }), provider({ name: '..' })],
      want: [
        `providers.name: Invalid value: "a/b": provider name cannot contain '/'`,
        'providers.name: Invalid value: "a b": provider name cannot contain spaces',
        `providers.name: Invalid value: ".": provider name cannot be '.'`,
        `providers.name: Invalid value: "..": provider name cannot be '..'`,
      ],
    },
    { name: 'duplicate', providers: [provider(), provider()], want: ['providers.name: Duplicate value: "p"'] },
    { name: 'no apiVersion', providers: [provider({ apiVersion: '' })], want: ['providers.apiVersion: Required value'] },
    {
      name: 'unknown apiVersion',
      providers: [provider({ apiVersion: 'credentialprovider.kubelet.k8s.io/v2' })],
      want: [
        'providers.apiVersion: Unsupported value: "credentialprovider.kubelet.k8s.io/v2": supported values: "credentialprovider.kubelet.k8s.io/v1", "credentialprovider.kubelet.k8s.io/v1alpha1", "credentialprovider.kubelet.k8s.io/v1beta1"',
      ],
    },
    { name: 'older protocol versions', providers: [provider({ apiVersion: 'credentialprovider.kubelet.k8s.io/v1alpha1' })], want: [] },
    {
      name: 'no matchImages',
      providers: [provider({ matchImages: [] })],
      want: ['providers.matchImages: Required value: at least 1 item in matchImages is required'],
    },
    {
      name: 'a bad matchImage',
      providers: [provider({ matchImages: ['registry.io:port'] })],
      want: [
        'providers.matchImages: Invalid value: "registry.io:port": match image is invalid: parse "https://registry.io:port": invalid port ":port" after host',
      ],
    },
    {
      name: 'no defaultCacheDuration',
      providers: [provider({ defaultCacheDurationMs: undefined })],
      want: ['providers.defaultCacheDuration: Required value'],
    },
    {
      name: 'a negative defaultCacheDuration',
      providers: [provider({ defaultCacheDurationMs: -60_000 })],
      want: ['providers.defaultCacheDuration: Invalid value: "-1m0s": must be greater than or equal to 0'],
    },
    { name: 'token mode', providers: [provider({ tokenAttributes: tokens() })], want: [] },
    {
      name: 'token mode with the gate off',
      gate: false,
      providers: [provider({ tokenAttributes: tokens() })],
      want: [
        'providers.tokenAttributes: Forbidden: tokenAttributes is not supported when KubeletServiceAccountTokenForCredentialProviders feature gate is disabled',
      ],
    },
    {
      name: 'token mode: required fields, v1 only',
      providers: [
        provider({
          apiVersion: 'credentialprovider.kubelet.k8s.io/v1beta1',
          tokenAttributes: tokens({ serviceAccountTokenAudience: '', requireServiceAccount: undefined, cacheType: '' }),
        }),
      ],
      want: [
        'providers.tokenAttributes.serviceAccountTokenAudience: Required value',
        'providers.tokenAttributes.requireServiceAccount: Required value',
        'providers.tokenAttributes: Forbidden: tokenAttributes is only supported for credentialprovider.kubelet.k8s.io/v1 API version',
        'providers.tokenAttributes.cacheType: Required value: cacheType is required to be set when tokenAttributes is specified. Supported values are: ServiceAccount, Token',
      ],
    },
    {
      name: 'token mode: annotation keys',
      providers: [
        provider({
          tokenAttributes: tokens({
            requireServiceAccount: false,
            requiredServiceAccountAnnotationKeys: ['example.com/a', 'example.com/a'],
            optionalServiceAccountAnnotationKeys: ['example.com/a', 'bad key'],
            cacheType: 'Pod',
          }),
        }),
      ],
      want: [
        'providers.tokenAttributes.requiredServiceAccountAnnotationKeys: Forbidden: requireServiceAccount cannot be false when requiredServiceAccountAnnotationKeys is set',
        'providers.tokenAttributes.requiredServiceAccountAnnotationKeys: Duplicate value: "example.com/a"',
        `providers.tokenAttributes.optionalServiceAccountAnnotationKeys: Invalid value: "bad key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
        'providers.tokenAttributes: Invalid value: [example.com/a]: annotation keys cannot be both required and optional',
        'providers.tokenAttributes.cacheType: Unsupported value: "Pod": supported values: "ServiceAccount", "Token"',
      ],
    },
  ];
  for (const c of cases) assert.deepEqual(validateConfig({ providers: c.providers }, c.gate ?? true), c.want, c.name);
});

test('readConfig: a file, or a directory of *.json/*.yaml/*.yml merged in lexical order; its hash', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cred-config-'));
  try {
    const doc = (name: string) => `apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders: [{name: ${name}}]\n`;
    writeFileSync(join(dir, 'b.yaml'), doc('second'));
    writeFileSync(
      join(dir, 'a.json'),
      JSON.stringify({ apiVersion: 'kubelet.config.k8s.io/v1', kind: 'CredentialProviderConfig', providers: [{ name: 'first' }] }),
    );
    writeFileSync(join(dir, 'c.conf'), 'not read');
    mkdirSync(join(dir, 'd.yaml'));
    const read = readConfig(dir);
    assert.deepEqual(
      read.config.providers.map((p) => p.name),
      ['first', 'second'],
    );
    assert.match(read.hash, /^sha256:[0-9a-f]{64}$/);
    assert.equal(readConfig(dir).hash, read.hash, 'the same files, the same hash');
    assert.notEqual(readConfig(join(dir, 'b.yaml')).hash, read.hash);
    writeFileSync(join(dir, 'e.yml'), doc('first'));
    assert.throws(() => readConfig(dir), /^Error: duplicate provider name "first" found in configuration file\(s\)$/);
    rmSync(join(dir, 'e.yml'));
    writeFileSync(join(dir, 'e.yml'), 'kind: [');
    assert.throws(() => readConfig(dir), /^Error: error decoding config ".*e\.yml": /);
    assert.throws(() => readConfig(join(dir, 'absent')), /^Error: unable to access path ".*absent": /);
    assert.throws(() => readConfig(''), /^Error: credential provider config path is empty$/);
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    assert.throws(() => readConfig(empty), /^Error: no configuration files found in directory ".*empty"$/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
