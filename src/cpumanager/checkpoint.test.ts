import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  CPU_MANAGER_STATE_FILE,
  checksum,
  marshalCheckpoint,
  restoreState,
  spewCheckpoint,
  stateOf,
  toCheckpoint,
  unmarshalCheckpoint,
  writeState,
} from './checkpoint.ts';
import { parseCPUSet } from './cpuset.ts';

// Each row's text is what upstream v1.36.3's CPUManagerCheckpointV2.MarshalCheckpoint wrote for
// the same data (a throwaway Go program calling k8s.io/kubernetes/pkg/kubelet/cm/cpumanager/state).
const UPSTREAM: [name: string, data: Parameters<typeof marshalCheckpoint>[0], text: string][] = [
  [
    'two pods, an init container and two apps',
    { policyName: 'static', defaultCpuSet: '0,2-3', entries: { 'pod-uid-b': { app: '1' }, 'pod-uid-a': { main: '6-7', init: '4-5' } } },
    '{"policyName":"static","defaultCpuSet":"0,2-3","entries":{"pod-uid-a":{"init":"4-5","main":"6-7"},"pod-uid-b":{"app":"1"}},"checksum":3732730816}',
  ],
  [
    'the none policy: an empty pool, no entries',
    { policyName: 'none', defaultCpuSet: '', entries: {} },
    '{"policyName":"none","defaultCpuSet":"","checksum":1353318690}',
  ],
  [
    "this machine's e2e: CPU 1 to one container",
    { policyName: 'static', defaultCpuSet: '0', entries: { u1: { c: '1' } } },
    '{"policyName":"static","defaultCpuSet":"0","entries":{"u1":{"c":"1"}},"checksum":3924940964}',
  ],
];

test('marshalCheckpoint writes byte for byte what upstream writes, checksum included', () => {
  for (const [name, data, text] of UPSTREAM) {
    assert.equal(marshalCheckpoint(data), text, name);
    assert.deepEqual(unmarshalCheckpoint(text), { ...data, entries: data.entries }, name);
  }
});

test('the spew text upstream hashes', () => {
  assert.equal(
    spewCheckpoint(UPSTREAM[0]![1]),
    '(*state.CPUManagerCheckpoint){PolicyName:(string)static DefaultCPUSet:(string)0,2-3 Entries:(map[string]map[string]string)map[pod-uid-a:map[init:4-5 main:6-7] pod-uid-b:map[app:1]] Checksum:(checksum.Checksum)0}',
  );
});

test('unmarshalCheckpoint: the V2 name is accepted too, 0 is accepted, a wrong checksum is corrupt', () => {
  const data = { policyName: 'static', defaultCpuSet: '0', entries: { u1: { c: '1' } } };
  const v2 = `{"policyName":"static","defaultCpuSet":"0","entries":{"u1":{"c":"1"}},"checksum":${checksum(data, 'CPUManagerCheckpointV2')}}`;
  assert.deepEqual(unmarshalCheckpoint(v2), data);
  assert.deepEqual(unmarshalCheckpoint('{"policyName":"static","defaultCpuSet":"0","entries":{"u1":{"c":"1"}},"checksum":0}'), data);
  assert.throws(() => unmarshalCheckpoint('{"policyName":"static","defaultCpuSet":"0","checksum":12}'), /checkpoint is corrupted/);
  assert.throws(
    () => unmarshalCheckpoint('{"policyName":"static","defaultCpuSet":"0","entries":{"cid":"1"},"checksum":1}'),
    /v1 checkpoint/,
  );
});

test('stateOf refuses another policy with upstream message, and bad cpusets', () => {
  const rows: [data: Parameters<typeof stateOf>[0], policy: string, want: RegExp | string][] = [
    [
      { policyName: 'none', defaultCpuSet: '', entries: {} },
      'static',
      /^Error: configured policy "static" differs from state checkpoint policy "none"$/,
    ],
    [{ policyName: 'static', defaultCpuSet: '3-1', entries: {} }, 'static', /could not parse default cpu set "3-1"/],
    [
      { policyName: 'static', defaultCpuSet: '0', entries: { p: { c: 'x' } } },
      'static',
      /could not parse cpuset "x" for container "c" in pod "p"/,
    ],
    [{ policyName: 'static', defaultCpuSet: '0', entries: { p: { c: '1-2' } } }, 'static', '0|p/c=1-2'],
  ];
  for (const [data, policy, want] of rows) {
    if (typeof want === 'string') {
      const s = stateOf(data, policy);
      assert.equal(
        `${s.defaultCPUSet}|${[...s.assignments].map(([p, m]) => [...m].map(([n, c]) => `${p}/${n}=${c}`).join()).join()}`,
        want,
      );
    } else assert.throws(() => stateOf(data, policy), want);
  }
});

test('restoreState: a new file when there is none, a round trip, a policy change refused naming the file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cpu-state-'));
  const fresh = restoreState(dir, 'static');
  assert.ok(fresh.defaultCPUSet.isEmpty());
  assert.equal(
    readFileSync(join(dir, CPU_MANAGER_STATE_FILE), 'utf8'),
    marshalCheckpoint({ policyName: 'static', defaultCpuSet: '', entries: {} }),
  );
  const s = { defaultCPUSet: parseCPUSet('0'), assignments: new Map([['u1', new Map([['c', parseCPUSet('1')]])]]) };
  writeState(dir, 'static', s);
  assert.equal(readFileSync(join(dir, CPU_MANAGER_STATE_FILE), 'utf8'), UPSTREAM[2]![2]);
  assert.deepEqual(toCheckpoint('static', restoreState(dir, 'static')), toCheckpoint('static', s));
  assert.throws(
    () => restoreState(dir, 'none'),
    new RegExp(
      `could not restore state from checkpoint: configured policy "none" differs from state checkpoint policy "static", please drain this node and delete the CPU manager checkpoint file "${join(dir, CPU_MANAGER_STATE_FILE)}" before restarting Kubelet`,
    ),
  );
  writeFileSync(join(dir, CPU_MANAGER_STATE_FILE), '{"policyName":"static","defaultCpuSet":"0","checksum":7}');
  assert.throws(() => restoreState(dir, 'static'), /checkpoint is corrupted/);
});
