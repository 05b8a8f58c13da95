// The edge of EnvFiles against real files, and through PodSyncer: what reaches CreateContainer,
// and what a container whose file or key is missing shows (CRI, images and the apiserver are fakes).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Container, EnvVar, Pod } from 'kubernetes-types/core/v1.js';
import type { Logger } from '../log/log.ts';
import { fileKeyId } from './env-file.ts';
import { readFileKey, readFileKeys, withEnvFiles } from './env-file-source.ts';
import { noEnvSource } from './env-sources.ts';
import { fakeSyncer } from './testing.ts';

function withDir(fn: (dir: string) => Promise<void>) {
  return async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'envfiles-')));
    try {
      await fn(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

const fileEnv = (name: string, f: { volumeName?: string; path?: string; key: string; optional?: boolean }) =>
  ({ name, valueFrom: { fileKeyRef: { volumeName: 'config', path: 'config.env', ...f } } }) as unknown as EnvVar;

test(
  'readFileKey: the key, or why the file could not be read (FIFOs do not block)',
  withDir(async (dir) => {
    writeFileSync(join(dir, 'config.env'), "CONFIG_1='value1'\nCONFIG_2='value2'\n");
    assert.deepEqual(await readFileKey(join(dir, 'config.env'), 'CONFIG_2'), { value: 'value2' });
    assert.deepEqual(await readFileKey(join(dir, 'config.env'), 'NOPE'), { value: '' });
    assert.deepEqual(await readFileKey(join(dir, 'gone.env'), 'A'), {
      error: `failed to open environment variable file "${dir}/gone.env": open ${dir}/gone.env: no such file or directory`,
    });
    assert.deepEqual(await readFileKey(dir, 'A'), {
      error: `error reading environment variable file "${dir}": read ${dir}: is a directory`,
    });
    execFileSync('mkfifo', [join(dir, 'fifo')]);
    assert.deepEqual(await readFileKey(join(dir, 'fifo'), 'A'), { value: '' });
  }),
);

test(
  'readFileKeys: each ref once, inside its volume; no volume, a failed join and a failed parse are kept apart',
  withDir(async (dir) => {
    const vol = join(dir, 'volumes/kubernetes.io~empty-dir/config');
    mkdirSync(join(vol, 'sub'), { recursive: true });
    writeFileSync(join(vol, 'config.env'), "A='1'\n");
    writeFileSync(join(vol, 'bad.env'), 'A=1\n');
    writeFileSync(join(dir, 'outside.env'), "A='outside'\n");
    // A symlink the pod made cannot lead out of the volume.
    symlinkSync('../../../../outside.env', join(vol, 'escape.env'));
    symlinkSync('/config.env', join(vol, 'sub/abs.env'));
    symlinkSync('loop', join(vol, 'loop'));
    const errors: unknown[] = [];
    const log = { error: (_m: string, f: unknown) => errors.push(f) } as unknown as Logger;
    const pod: Pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u1' }, spec: { containers: [] } };
    const c: Container = {
      name: 'c',
      env: [
        fileEnv('A', { key: 'A' }),
        fileEnv('A2', { key: 'A' }),
        fileEnv('ABS', { path: 'sub/abs.env', key: 'A' }),
        fileEnv('ESC', { path: 'escape.env', key: 'A' }),
        fileEnv('BAD', { path: 'bad.env', key: 'A' }),
        fileEnv('LOOP', { path: 'loop', key: 'A' }),
        fileEnv('GONE', { volumeName: 'gone', key: 'A' }),
      ],
    };
    const r = await readFileKeys(pod, c, (uid, name) => (uid === 'u1' && name === 'config' ? vol : undefined), log);
    const id = (path: string, volumeName = 'config') => fileKeyId({ volumeName, path, key: 'A' });
    assert.deepEqual(
      r,
      new Map<string, unknown>([
        [id('config.env'), { path: `${vol}/config.env`, value: '1' }],
        [id('sub/abs.env'), { path: `${vol}/config.env`, value: '1' }],
        [
          id('escape.env'),
          {
            path: `${vol}/outside.env`,
            parseError: `failed to open environment variable file "${vol}/outside.env": open ${vol}/outside.env: no such file or directory`,
          },
        ],
        [
          id('bad.env'),
          { path: `${vol}/bad.env`, parseError: 'invalid environment variable format at line 1: value must be enclosed in single quotes' },
        ],
        [id('loop'), { error: `SecureJoin ${vol}/loop: too many levels of symbolic links` }],
        [id('config.env', 'gone'), { noVolume: true }],
      ]),
    );
    assert.equal(errors.length, 2, 'each failed parse is logged');
  }),
);

// The shared in-memory runtime (testing.ts) with a ready sandbox for u1, its env source reading the volume "config" from vol.
function syncer(vol: string | undefined, featureGates: Record<string, boolean> = {}) {
  const h = fakeSyncer({ env: withEnvFiles(noEnvSource, (_uid, name) => (name === 'config' ? vol : undefined), featureGates) });
  h.runtime.addSandbox('u1', { id: 'sb1' });
  return { ...h, created: () => h.runtime.container('use-envfile')?.config };
}

const pod = (...env: EnvVar[]): Pod => ({
  metadata: { name: 'web', namespace: 'shop', uid: 'u1' },
  spec: {
    nodeName: 'n1',
    containers: [{ name: 'use-envfile', image: 'busybox', env }],
    volumes: [{ name: 'config', emptyDir: {} }],
  },
});

test(
  'through PodSyncer: the values reach CreateContainer; a missing key is CreateContainerConfigError with upstream message',
  withDir(async (vol) => {
    // What the e2e init container writes: echo CONFIG_1=\'value1\' > /data/config.env
    writeFileSync(join(vol, 'config.env'), "CONFIG_1='value1'\nCONFIG_2='value2'\n");
    const ok = syncer(vol);
    const r = await ok.syncer.syncPod(pod(fileEnv('CONFIG_1', { key: 'CONFIG_1' }), fileEnv('OPT', { key: 'MISSING', optional: true })));
    assert.equal(r.waiting.size, 0);
    assert.deepEqual(
      ok.created()!.envs!.map((e) => `${e.key}=${e.value}`),
      ['CONFIG_1=value1'],
    );

    const missing = syncer(vol);
    const m = await missing.syncer.syncPod(pod(fileEnv('MISSING_KEY', { key: 'MISSING_KEY' })));
    const message = `environment variable key "MISSING_KEY" not found in file "${vol}/config.env"`;
    assert.deepEqual(m.waiting.get('use-envfile'), { reason: 'CreateContainerConfigError', message });
    assert.deepEqual(missing.events, [`Warning Failed: Error: ${message}`]);
    assert.equal(missing.created(), undefined);
    assert.equal(m.requeueAfterMs, 10_000);

    const noFile = syncer(vol);
    const n = await noFile.syncer.syncPod(pod(fileEnv('A', { path: 'nope.env', key: 'A', optional: true })));
    assert.deepEqual(n.waiting.get('use-envfile'), { reason: 'CreateContainerConfigError', message: "couldn't parse env file" });
  }),
);

test(
  "EnvFiles off (featureGates): the source as it is, and a fileKeyRef gives '' (upstream's switch falls through)",
  withDir(async (vol) => {
    assert.equal(
      withEnvFiles(noEnvSource, () => vol, { EnvFiles: false }),
      noEnvSource,
    );
    writeFileSync(join(vol, 'config.env'), "CONFIG_1='value1'\n");
    const off = syncer(vol, { EnvFiles: false });
    const r = await off.syncer.syncPod(pod(fileEnv('CONFIG_1', { key: 'CONFIG_1' })));
    assert.equal(r.waiting.size, 0);
    assert.deepEqual(
      off.created()!.envs!.map((e) => `${e.key}=${e.value}`),
      ['CONFIG_1='],
    );
  }),
);
