import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../../log/log.ts';
import { registerCredentialProviders } from './plugins.ts';

const FIXTURE = fileURLToPath(new URL('../../../test/fixtures/credential-provider/counting-provider', import.meta.url));
const doc = (providers: object[]) =>
  JSON.stringify({ apiVersion: 'kubelet.config.k8s.io/v1', kind: 'CredentialProviderConfig', providers });
const provider = (name: string, env: Record<string, string>, over: object = {}) => ({
  name,
  matchImages: ['*.registry.io', 'registry.io'],
  defaultCacheDuration: '1m',
  apiVersion: 'credentialprovider.kubelet.k8s.io/v1',
  env: Object.entries(env).map(([n, value]) => ({ name: n, value })),
  ...over,
});
const pod = { namespace: 'ns', name: 'web', uid: 'uid-web', serviceAccountName: 'default' };

test('registration refuses the start with one line: bin dir, config, validation, binaries', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cred-plugins-'));
  try {
    const config = join(dir, 'config.yaml');
    writeFileSync(config, doc([provider('counting', {})]));
    const reg = (configPath: string, binDir: string) => () => registerCredentialProviders({ configPath, binDir, tokenGate: true });
    assert.throws(reg(config, join(dir, 'absent')), { message: `plugin binary directory ${join(dir, 'absent')} did not exist` });
    assert.throws(reg(config, ''), { message: 'plugin binary directory  did not exist' });
    assert.throws(reg('', dir), { message: 'credential provider config path is empty' });
    assert.throws(reg(config, dir), { message: `plugin binary executable ${join(dir, 'counting')} did not exist` });
    copyFileSync(FIXTURE, join(dir, 'counting'));
    chmodSync(join(dir, 'counting'), 0o644);
    assert.throws(reg(config, dir), { message: `plugin binary executable ${join(dir, 'counting')} did not exist` }, 'not executable');
    chmodSync(join(dir, 'counting'), 0o755);
    assert.deepEqual(reg(config, dir)().names, ['counting']);
    writeFileSync(config, doc([provider('counting', {}, { matchImages: [] })]));
    assert.throws(reg(config, dir), {
      message:
        'failed to validate credential provider config: providers.matchImages: Required value: at least 1 item in matchImages is required',
    });
    writeFileSync(config, doc([provider('counting', {}, { defaultCacheDuration: undefined, apiVersion: undefined })]));
    assert.throws(reg(config, dir), {
      message:
        'failed to validate credential provider config: [providers.apiVersion: Required value, providers.defaultCacheDuration: Required value]',
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("lookup: every provider's answer in one keyring; a failing plugin is logged and gives nothing; the cache holds", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cred-plugins-'));
  try {
    for (const name of ['first', 'second', 'broken']) {
      copyFileSync(FIXTURE, join(dir, name));
      chmodSync(join(dir, name), 0o755);
    }
    writeFileSync(join(dir, 'broken.fail'), 'the registry said no');
    const calls = (name: string) => join(dir, `${name}.calls`);
    const config = join(dir, 'config.yaml');
    writeFileSync(
      config,
      doc([
        provider('first', { CALLS_FILE: calls('first'), AUTH_KEY: 'a.registry.io', USERNAME: 'first', PASSWORD: 'p1' }),
        provider('second', { CALLS_FILE: calls('second'), AUTH_KEY: '*.registry.io', USERNAME: 'second', PASSWORD: 'p2' }),
        provider('broken', { CALLS_FILE: calls('broken'), FAIL_FILE: join(dir, 'broken.fail') }),
      ]),
    );
    const errors: string[] = [];
    const log: Logger = { info() {}, v() {}, warn() {}, error: (m, f) => errors.push(`${m}: ${f?.provider}: ${f?.err}`) };
    const providers = registerCredentialProviders({ configPath: config, binDir: dir, tokenGate: true, log });
    // The literal host's key sorts before the glob: first's credential, then second's.
    assert.deepEqual(await providers.lookup('a.registry.io/app', pod), [
      { username: 'first', password: 'p1' },
      { username: 'second', password: 'p2' },
    ]);
    assert.deepEqual(errors, [
      'Failed to provide credentials for image: broken: failed to get credential from external registry credential provider: error execing credential provider plugin broken for image a.registry.io/app: exit status 1: the registry said no',
    ]);
    // b.registry.io: only second's glob matches its answer's key (first answers for a.registry.io only).
    assert.deepEqual(await providers.lookup('b.registry.io/app', pod), [{ username: 'second', password: 'p2' }]);
    // Registry cache key (the fixture's default): the registry's other images from the cache.
    await providers.lookup('a.registry.io/other', pod);
    const count = (name: string) => readFileSync(calls(name), 'utf8').trim().split('\n').length;
    assert.equal(count('first'), 2, 'a.registry.io once, b.registry.io once');
    assert.equal(count('second'), 2);
    assert.equal(count('broken'), 3, 'failures are not cached');
    // Not matched by any provider: no calls.
    assert.deepEqual(await providers.lookup('docker.io/library/busybox', pod), []);
    assert.equal(count('first'), 2);
    assert.match(providers.hash, /^sha256:/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
