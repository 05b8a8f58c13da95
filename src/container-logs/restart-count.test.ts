import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { calcRestartCountByLogDir, restartCountFromLogNames } from './restart-count.ts';

const cases: [string, string[], number][] = [
  ['no files', [], 0],
  ['the first instance logged', ['0.log'], 1],
  ['the highest counts, whatever the order', ['2.log', '0.log', '1.log'], 3],
  ['rotated logs count too', ['0.log', '3.log.20260101-000000', '3.log.20260101-000000.gz'], 4],
  ['other names are not logs', ['x.log', 'a1.log', '7.txt', '.9.log'], 0],
];
for (const [name, files, want] of cases)
  test(`restartCountFromLogNames: ${name}`, () => assert.equal(restartCountFromLogNames(files), want));

test('calcRestartCountByLogDir: a missing directory is 0, subdirectories do not count', () => {
  const dir = mkdtempSync(join(tmpdir(), 'restart-count-'));
  try {
    assert.equal(calcRestartCountByLogDir(join(dir, 'gone')), 0);
    writeFileSync(join(dir, '1.log'), '');
    mkdirSync(join(dir, '5.log'));
    assert.equal(calcRestartCountByLogDir(dir), 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
