// The exec of a real plugin: the tests' own counting provider (test/fixtures/credential-provider).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execPlugin } from './exec.ts';

const FIXTURE = fileURLToPath(new URL('../../../test/fixtures/credential-provider/counting-provider', import.meta.url));
const V1 = 'credentialprovider.kubelet.k8s.io/v1';

function binDir() {
  const dir = mkdtempSync(join(tmpdir(), 'cred-exec-'));
  copyFileSync(FIXTURE, join(dir, 'counting'));
  chmodSync(join(dir, 'counting'), 0o755);
  writeFileSync(join(dir, 'sleepy'), '#!/bin/sh\nsleep 5\n', { mode: 0o755 });
  return dir;
}

test('execPlugin: request on stdin, config env over the kubelet env, args, response checked; metrics', async () => {
  const dir = binDir();
  try {
    const calls = join(dir, 'calls');
    const seen: string[] = [];
    const run = execPlugin({
      name: 'counting',
      binDir: dir,
      apiVersion: V1,
      args: ['--ignored'],
      env: [
        { name: 'CALLS_FILE', value: calls },
        { name: 'AUTH_KEY', value: 'r.io' },
        { name: 'USERNAME', value: 'from-config' },
        { name: 'CACHE_DURATION', value: '90s' },
      ],
      environ: { PATH: process.env.PATH, USERNAME: 'from-kubelet', PASSWORD: 'from-kubelet-env' },
      observe: { duration: (p) => seen.push(`duration ${p}`), error: (p) => seen.push(`error ${p}`) },
    });
    const res = await run({ image: 'r.io/app', serviceAccountToken: 'tok' });
    assert.deepEqual(res, {
      cacheKeyType: 'Registry',
      cacheDurationMs: 90_000,
      auth: { 'r.io': { username: 'from-config', password: 'from-kubelet-env' } },
    });
    const lines = readFileSync(calls, 'utf8').trim().split('\n');
    assert.equal(lines.length, 1);
    assert.deepEqual(JSON.parse(lines[0]!), {
      kind: 'CredentialProviderRequest',
      apiVersion: V1,
      image: 'r.io/app',
      serviceAccountToken: 'tok',
    });
    assert.deepEqual(seen, ['duration counting']);

    // Failing: exit status and stderr in upstream's words; counted as an error.
    writeFileSync(join(dir, 'fail'), 'registry token service unavailable');
    const failing = execPlugin({
      name: 'counting',
      binDir: dir,
      apiVersion: V1,
      args: [],
      env: [{ name: 'FAIL_FILE', value: join(dir, 'fail') }],
      observe: { error: (p) => seen.push(`error ${p}`) },
    });
    await assert.rejects(failing({ image: 'r.io/app' }), {
      message: 'error execing credential provider plugin counting for image r.io/app: exit status 1: registry token service unavailable',
    });
    assert.equal(seen.at(-1), 'error counting');

    // Another version than the plugin answers with.
    const beta = execPlugin({ name: 'counting', binDir: dir, apiVersion: 'credentialprovider.kubelet.k8s.io/v1beta1', args: [], env: [] });
    await assert.rejects(
      beta({ image: 'r.io/app' }),
      /^Error: apiVersion from credential plugin response did not match expected apiVersion:credentialprovider.kubelet.k8s.io\/v1beta1, actual apiVersion:credentialprovider.kubelet.k8s.io\/v1$/,
    );

    // The timeout, and a binary that is not there.
    const slow = execPlugin({ name: 'sleepy', binDir: dir, apiVersion: V1, args: [], env: [], timeoutMs: 200 });
    await assert.rejects(slow({ image: 'r.io/app' }), {
      message: 'error execing credential provider plugin sleepy for image r.io/app: context deadline exceeded: ',
    });
    const absent = execPlugin({ name: 'absent', binDir: dir, apiVersion: V1, args: [], env: [] });
    await assert.rejects(
      absent({ image: 'r.io/app' }),
      /^Error: error execing credential provider plugin absent for image r.io\/app: fork\/exec .*absent: no such file or directory: $/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
