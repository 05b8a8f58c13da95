import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointWriter, readCheckpointFile, writeCheckpointFile } from './file-store.ts';

test('a checkpoint is written whole through a temporary file, and read back; none is undefined', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kts-ckpt-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'sub', 'state');
  assert.equal(readCheckpointFile(path), undefined);
  writeCheckpointFile(path, '{"Data":1}');
  writeCheckpointFile(path, '{"Data":2}');
  assert.equal(readCheckpointFile(path), '{"Data":2}');
  assert.deepEqual(readdirSync(join(dir, 'sub')), ['state'], 'no temporary file is left');
});

test('CheckpointWriter: a burst of changes is a few writes of the latest state, off the loop; a failure is said', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kts-ckpt-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'sub', 'state');
  let state = 0;
  let texts = 0;
  const errors: unknown[] = [];
  const w = new CheckpointWriter(
    path,
    () => {
      texts++;
      return String(state);
    },
    (e) => errors.push(e),
  );
  for (state = 1; state <= 100; state++) w.changed();
  state = 100;
  assert.equal(readCheckpointFile(path), undefined, 'nothing written synchronously');
  await w.flushed();
  assert.equal(readCheckpointFile(path), '100');
  assert.equal(texts, 2, 'one write in flight, one more for all the changes after it');
  assert.deepEqual(readdirSync(join(dir, 'sub')), ['state']);
  await w.flushed();
  assert.equal(texts, 2, 'no change, no write');

  const bad = new CheckpointWriter(
    join(path, 'under-a-file'),
    () => 'x',
    (e) => errors.push(e),
  );
  bad.changed();
  await bad.flushed();
  assert.equal(errors.length, 1);
  assert.match(String(errors[0]), /ENOTDIR|EEXIST/);
});
