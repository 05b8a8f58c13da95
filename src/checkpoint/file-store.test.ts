import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readCheckpointFile, writeCheckpointFile } from './file-store.ts';

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
