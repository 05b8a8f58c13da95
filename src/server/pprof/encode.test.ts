// The encoder checked against the real reader: `go tool pprof -raw` must parse what we write
// and show the functions, files, lines and values put in. No Go: the test fails, it does not skip.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeProfile, gzipProfile, type Profile } from './encode.ts';

const GO = process.env.GO ?? '/usr/local/go/bin/go';

function pprof(bytes: Uint8Array, ...args: string[]): string {
  assert.ok(existsSync(GO), `go tool pprof is needed to check the encoder: no go at ${GO} (set GO=/path/to/go)`);
  const dir = mkdtempSync(join(tmpdir(), 'pprof-'));
  try {
    const file = join(dir, 'profile.pb.gz');
    writeFileSync(file, bytes);
    return execFileSync(GO, ['tool', 'pprof', ...args, file], { encoding: 'utf8', env: { ...process.env, PPROF_TMPDIR: dir } });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const main = { name: 'main', file: 'file:///app/main.js', line: 3, startLine: 1 };
const work = { name: 'work', file: 'file:///app/work.js', line: 10, startLine: 9 };
const helper = { name: 'helper', file: 'node:internal/helper', line: 42 };

const cpu: Profile = {
  sampleTypes: [
    ['samples', 'count'],
    ['cpu', 'nanoseconds'],
  ],
  samples: [
    { stack: [work, main], values: [7, 70_000_000] },
    { stack: [helper, work, main], values: [3, 30_000_000] },
  ],
  timeNanos: 1_700_000_000_000_000_000,
  durationNanos: 1_000_000_000,
  periodType: ['cpu', 'nanoseconds'],
  period: 10_000_000,
};

test('go tool pprof -raw reads the profile: sample types, period, each sample with its values and stack', () => {
  const raw = pprof(gzipProfile(cpu), '-raw');
  assert.match(raw, /samples\/count cpu\/nanoseconds/);
  assert.match(raw, /Period: 10000000/);
  assert.match(raw, /^\s+7\s+70000000: 1 2 $/m);
  assert.match(raw, /^\s+3\s+30000000: 3 1 2 $/m);
  assert.match(raw, /^\s+1: 0x0 M=1 work file:\/\/\/app\/work\.js:10(:\d+)? s=9$/m);
  assert.match(raw, /^\s+2: 0x0 M=1 main file:\/\/\/app\/main\.js:3(:\d+)? s=1$/m);
  assert.match(raw, /^\s+3: 0x0 M=1 helper node:internal\/helper:42(:\d+)? s=0$/m);
});

test('go tool pprof -top: flat and cumulative per function, as an operator reads it', () => {
  const top = pprof(gzipProfile(cpu), '-top', '-sample_index=cpu');
  assert.match(top, /Total samples = 100ms/);
  assert.match(top, /^\s+70ms\s+70\.00%\s+70\.00%\s+100ms\s+100%\s+work$/m);
  assert.match(top, /^\s+30ms\s+30\.00%\s+100%\s+30ms\s+30\.00%\s+helper$/m);
  assert.match(top, /^\s+0\s+0%\s+100%\s+100ms\s+100%\s+main$/m);
});

test('a heap profile: inuse_space in bytes, the default sample type named; ungzipped bytes read too', () => {
  const heap: Profile = {
    sampleTypes: [['inuse_space', 'bytes']],
    samples: [{ stack: [work, main], values: [2 * 1024 * 1024] }],
    periodType: ['space', 'bytes'],
    period: 524288,
    defaultSampleType: 'inuse_space',
  };
  const top = pprof(encodeProfile(heap), '-top');
  assert.match(top, /Type: inuse_space/);
  assert.match(top, /^\s+2MB\s+100%\s+100%\s+2MB\s+100%\s+work$/m);
});
