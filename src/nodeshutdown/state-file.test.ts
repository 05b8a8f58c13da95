import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeState, encodeState, goTime, stateFile } from './state-file.ts';

test('Go time encoding of the state (upstream storage.go)', () => {
  const cases: [Date | undefined, string][] = [
    [undefined, '0001-01-01T00:00:00Z'],
    [new Date('2026-11-26T10:00:00.000Z'), '2026-11-26T10:00:00Z'],
    [new Date('2026-11-26T10:00:00.120Z'), '2026-11-26T10:00:00.12Z'],
    [new Date('2026-11-26T10:00:00.123Z'), '2026-11-26T10:00:00.123Z'],
  ];
  for (const [d, want] of cases) assert.equal(goTime(d), want);
  const start = new Date('2026-11-26T10:00:00.5Z');
  assert.equal(encodeState({ startTime: start }), '{"startTime":"2026-11-26T10:00:00.5Z","endTime":"0001-01-01T00:00:00Z"}');
  assert.deepEqual(decodeState(encodeState({ startTime: start })), { startTime: start, endTime: undefined });
  // As Go writes it on a node with a local zone, nanoseconds included.
  assert.deepEqual(decodeState('{"startTime":"2026-11-26T11:00:00.123456789+01:00","endTime":"2026-11-26T11:00:20+01:00"}'), {
    startTime: new Date('2026-11-26T10:00:00.123Z'),
    endTime: new Date('2026-11-26T10:00:20Z'),
  });
});

test('the state file: none is no state; written whole through a rename', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kts-shutdown-state-'));
  try {
    const f = stateFile(dir);
    assert.deepEqual(f.load(), {});
    const s = { startTime: new Date('2026-11-26T10:00:00Z'), endTime: new Date('2026-11-26T10:00:20Z') };
    f.store(s);
    assert.deepEqual(f.load(), s);
    assert.deepEqual(readdirSync(dir), ['graceful_node_shutdown_state']);
    assert.equal(
      readFileSync(join(dir, 'graceful_node_shutdown_state'), 'utf8'),
      '{"startTime":"2026-11-26T10:00:00Z","endTime":"2026-11-26T10:00:20Z"}',
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
