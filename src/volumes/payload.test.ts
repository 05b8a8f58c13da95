import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { configMapPayload, downwardAPIPayload, secretPayload, validatePayloadPath } from './payload.ts';

const text = (p: Map<string, { data: Buffer; mode: number }>) =>
  Object.fromEntries([...p].map(([k, v]) => [k, [v.data.toString(), v.mode.toString(8)]]));

test('configMap payload: all keys with defaultMode, or the items with their modes', () => {
  const cm = { data: { a: '1', b: '2' }, binaryData: { bin: Buffer.from('xyz').toString('base64') } };
  assert.deepEqual(text(configMapPayload(cm, undefined, 0o644, false)), { a: ['1', '644'], b: ['2', '644'], bin: ['xyz', '644'] });
  assert.deepEqual(
    text(
      configMapPayload(
        cm,
        [
          { key: 'a', path: 'sub/x' },
          { key: 'bin', path: 'y', mode: 0o400 },
        ],
        0o644,
        false,
      ),
    ),
    { 'sub/x': ['1', '644'], y: ['xyz', '400'] },
  );
});

test('a missing key fails unless optional, with upstream messages', () => {
  assert.throws(() => configMapPayload({ data: {} }, [{ key: 'k', path: 'p' }], 0o644, false), {
    message: 'configmap references non-existent config key: k',
  });
  assert.deepEqual(text(configMapPayload({ data: {} }, [{ key: 'k', path: 'p' }], 0o644, true)), {});
  assert.throws(() => secretPayload({ data: {} }, [{ key: 'k', path: 'p' }], 0o644, false), {
    message: 'secret references non-existent secret key: k',
  });
});

test('secret payload decodes base64', () => {
  assert.deepEqual(text(secretPayload({ data: { pw: Buffer.from('hunter2').toString('base64') } }, undefined, 0o400, false)), {
    pw: ['hunter2', '400'],
  });
});

const pod: Pod = {
  metadata: { name: 'p', namespace: 'ns', uid: 'u1', labels: { b: '2', a: 'x"y' }, annotations: { k: 'v' } },
  spec: { nodeName: 'n1', containers: [{ name: 'c', resources: { limits: { memory: '64Mi' }, requests: { cpu: '250m' } } }] },
};

test('downwardAPI payload: cleaned paths, modes, aggregated errors', () => {
  const p = downwardAPIPayload(
    pod,
    [
      { path: './labels', fieldRef: { fieldPath: 'metadata.labels' } },
      { path: 'name', mode: 0o600, fieldRef: { fieldPath: 'metadata.name' } },
    ],
    0o644,
    {},
  );
  assert.deepEqual(text(p), { labels: ['a="x\\"y"\nb="2"', '644'], name: ['p', '600'] });
  assert.throws(
    () =>
      downwardAPIPayload(
        pod,
        [
          { path: 'a', fieldRef: { fieldPath: 'x' } },
          { path: 'b', fieldRef: { fieldPath: 'y' } },
        ],
        0o644,
        {},
      ),
    { message: '[field label not supported: x, field label not supported: y]' },
  );
});

test('payload paths are checked as upstream', () => {
  for (const ok of ['a', 'a/b', '..a/b'.slice(1), 'a/..b']) assert.doesNotThrow(() => validatePayloadPath(ok), ok);
  const bad: [string, string][] = [
    ['', 'invalid path: must not be empty: ""'],
    ['/etc', 'invalid path: must be relative path: /etc'],
    ['a/../b', "invalid path: must not contain '..': a/../b"],
    ['..data/x', "invalid path: must not start with '..': ..data/x"],
  ];
  for (const [p, message] of bad) assert.throws(() => validatePayloadPath(p), { message }, p);
});
