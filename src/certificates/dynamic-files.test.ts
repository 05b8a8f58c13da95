import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { logger } from '../log/log.ts';
import { newPrivateKey, selfSignedServingCert } from './pki.ts';
import { changed, dynamicFiles } from './dynamic-files.ts';
import { servingKeyPair } from './serving-cert.ts';

test('changed: a content differs from the last one taken', () => {
  const rows: [string, string[] | undefined, string[], boolean][] = [
    ['nothing taken yet', undefined, ['a'], true],
    ['the same bytes', ['a', 'k'], ['a', 'k'], false],
    ['the certificate replaced', ['a', 'k'], ['b', 'k'], true],
    ['the key replaced', ['a', 'k'], ['a', 'l'], true],
  ];
  for (const [name, last, now, want] of rows) assert.equal(changed(last, now), want, name);
});

test('a replaced pair is taken, a mismatched or unreadable one is not and the last stays', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kts-dynfiles-'));
  try {
    const pair = () => {
      const key = newPrivateKey('ec');
      return { key, cert: selfSignedServingCert(key, 'node-a', ['10.0.0.1']) };
    };
    const cert = join(dir, 'kubelet.crt'),
      key = join(dir, 'kubelet.key');
    const write = (p: { cert: string; key: string }) => {
      writeFileSync(`${cert}.tmp`, p.cert);
      renameSync(`${cert}.tmp`, cert);
      writeFileSync(`${key}.tmp`, p.key);
      renameSync(`${key}.tmp`, key);
    };
    const first = pair();
    write(first);
    const taken: string[] = [];
    const files = dynamicFiles({
      name: 'kubelet-server-cert-files',
      files: [cert, key],
      parse: servingKeyPair,
      onChange: (p) => taken.push(p.cert),
      log: logger('test'),
      periodMs: 3_600_000,
    });
    try {
      assert.equal(files.check(), false, 'the content at start is not a change');
      const second = pair();
      write(second);
      assert.equal(files.check(), true);
      assert.deepEqual(taken, [second.cert]);
      write({ cert: pair().cert, key: second.key }); // another certificate with the old key
      assert.equal(files.check(), false);
      assert.deepEqual(taken, [second.cert], 'the last good pair stays');
      rmSync(key);
      assert.equal(files.check(), false, 'a missing file is no change');
      const third = pair();
      write(third);
      assert.equal(files.check(), true);
      assert.deepEqual(taken, [second.cert, third.cert]);
    } finally {
      files.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
