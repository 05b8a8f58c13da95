import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type CpuProfile, owner, selfTime } from './cpu-profile.ts';

test('owner: V8 entries, node internals, npm packages and kubelet-ts folders', () => {
  const cases: [string, string, string][] = [
    ['', '(garbage collector)', '(garbage collector)'],
    ['', 'writev', '(native)'],
    ['node:internal/streams/writable', 'write', 'node internals'],
    ['file:///k/node_modules/@grpc/grpc-js/build/src/call.js', 'x', '@grpc/grpc-js'],
    ['file:///k/node_modules/yaml/dist/index.js', 'x', 'yaml'],
    ['file:///k/dist/runtime/cri-runtime.js', 'x', 'kubelet-ts runtime'],
  ];
  for (const [url, fn, want] of cases) assert.equal(owner(url, fn), want, url || fn);
});

const frame = (id: number, functionName: string, url: string, lineNumber = 0) => ({ id, callFrame: { functionName, url, lineNumber } });

test('selfTime: each sample charged its delta, idle left out, sorted costliest first', () => {
  const p: CpuProfile = {
    nodes: [
      frame(1, '(root)', ''),
      frame(2, '(idle)', ''),
      frame(3, 'list', 'file:///k/dist/runtime/cri-runtime.js', 9),
      frame(4, 'decode', 'file:///k/node_modules/@grpc/grpc-js/build/src/x.js'),
    ],
    startTime: 0,
    endTime: 10_000,
    samples: [2, 3, 4, 3, 2],
    timeDeltas: [1000, 2000, 1000, 3000, 5000],
  };
  const r = selfTime(p);
  assert.equal(r.totalMs, 6);
  assert.deepEqual(r.byOwner, [
    ['kubelet-ts runtime', 5],
    ['@grpc/grpc-js', 1],
  ]);
  assert.deepEqual(r.byFunction[0], ['list runtime/cri-runtime.js:10', 5]);
});

test('selfTime: hit counts spread over the profile when it has no samples', () => {
  const p: CpuProfile = {
    nodes: [
      { ...frame(1, 'a', 'node:fs'), hitCount: 3 },
      { ...frame(2, '(idle)', ''), hitCount: 1 },
    ],
    startTime: 0,
    endTime: 4000,
  };
  assert.equal(selfTime(p).totalMs, 3);
});

test('selfTime: fromMs leaves out the start; byOurs charges a library frame to the kubelet-ts caller', () => {
  const p: CpuProfile = {
    nodes: [
      { ...frame(1, '(root)', ''), children: [2, 3] },
      frame(2, '(garbage collector)', ''),
      { ...frame(3, 'sync', 'file:///k/dist/status/manager.js', 4), children: [4] },
      frame(4, 'decode', 'file:///k/node_modules/@grpc/grpc-js/build/src/x.js'),
    ],
    startTime: 0,
    endTime: 10_000,
    samples: [3, 4, 2, 4],
    timeDeltas: [1000, 2000, 1000, 3000],
  };
  const r = selfTime(p, 2.5);
  assert.equal(r.totalMs, 6, 'the first sample (at 1 ms) is before the window');
  assert.deepEqual(r.byOurs, [
    ['sync status/manager.js:5', 5],
    ['(no kubelet-ts frame)', 1],
  ]);
});
