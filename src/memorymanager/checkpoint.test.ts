import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  MEMORY_MANAGER_STATE_FILE,
  marshalCheckpoint,
  restoreState,
  spewCheckpoint,
  unmarshalCheckpoint,
  writeState,
} from './checkpoint.ts';
import { CHECKPOINT_CASES as UPSTREAM } from './testdata/checkpoint-cases.ts';

test('marshalCheckpoint writes byte for byte what upstream writes, checksum included', () => {
  for (const [name, data, text, spew] of UPSTREAM) {
    if (spew) assert.equal(spewCheckpoint(data), spew, name);
    assert.equal(marshalCheckpoint(data), text, name);
    assert.equal(marshalCheckpoint(unmarshalCheckpoint(text)), text, name);
  }
});

test('unmarshalCheckpoint: 0 is accepted, a wrong checksum is corrupt', () => {
  assert.equal(unmarshalCheckpoint('{"policyName":"None","machineState":{},"checksum":0}').policyName, 'None');
  assert.throws(() => unmarshalCheckpoint('{"policyName":"None","machineState":{},"checksum":12}'), /checkpoint is corrupted/);
});

test('restoreState: written when absent, another policy refused with upstream text', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mm-'));
  const s = restoreState(dir, 'None');
  assert.equal(s.machine.size, 0);
  assert.match(readFileSync(join(dir, MEMORY_MANAGER_STATE_FILE), 'utf8'), /^\{"policyName":"None","machineState":\{\},"checksum":\d+\}$/);
  assert.throws(
    () => restoreState(dir, 'Static'),
    /could not restore state from checkpoint: \[memorymanager\] configured policy "Static" differs from state checkpoint policy "None", please drain this node and delete the memory manager checkpoint file ".*memory_manager_state" before restarting Kubelet/,
  );
  writeState(dir, 'Static', { machine: UPSTREAM[0]![1].machineState, assignments: UPSTREAM[0]![1].entries });
  assert.equal(readFileSync(join(dir, MEMORY_MANAGER_STATE_FILE), 'utf8'), UPSTREAM[0]![2]);
  writeFileSync(join(dir, MEMORY_MANAGER_STATE_FILE), '{"policyName":"Static","machineState":{},"checksum":1}');
  assert.throws(() => restoreState(dir, 'Static'), /checkpoint is corrupted/);
});
