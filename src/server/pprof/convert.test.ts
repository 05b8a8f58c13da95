import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type CallFrame, type CpuProfile, cpuProfileToPprof, type HeapNode, heapProfileToPprof } from './convert.ts';

const frame = (functionName: string, url = 'file:///k.js', lineNumber = 0, columnNumber = 0): CallFrame => ({
  functionName,
  url,
  lineNumber,
  columnNumber,
});
const names = (p: { stack: { name: string }[] }) => p.stack.map((f) => f.name).join('<');

test('cpuProfileToPprof: stacks leaf first without (root), counts and the time to the next sample, idle left out', () => {
  const tree: CpuProfile['nodes'] = [
    { id: 1, callFrame: frame('(root)', '', -1, -1), children: [2, 5, 6] },
    { id: 2, callFrame: frame('main', 'file:///k.js', 4, 2), children: [3] },
    { id: 3, callFrame: frame('', 'file:///k.js', 9, 0), children: [] },
    { id: 5, callFrame: frame('(idle)', '', -1, -1) },
    { id: 6, callFrame: frame('(garbage collector)', '', -1, -1) },
  ];
  const cases: { name: string; samples: number[]; deltas: number[]; want: [string, number, number][] }[] = [
    { name: 'no samples', samples: [], deltas: [], want: [] },
    {
      name: 'one stack twice, the last sample one interval',
      samples: [3, 3],
      deltas: [0, 12_000],
      want: [['(anonymous)<main', 2, 12_000_000 + 10_000_000]],
    },
    {
      name: 'idle dropped, gc kept, the parent alone',
      samples: [2, 5, 6, 2],
      deltas: [0, 10_000, 10_000, 10_000],
      want: [
        ['main', 2, 10_000_000 + 10_000_000],
        ['(garbage collector)', 1, 10_000_000],
      ],
    },
  ];
  for (const c of cases) {
    const p = cpuProfileToPprof(
      { nodes: tree, startTime: 1_000, endTime: 2_001_000, samples: c.samples, timeDeltas: c.deltas },
      10_000_000,
      1_000_000,
    );
    assert.deepEqual(
      p.samples.map((s) => [names(s), ...s.values]),
      c.want,
      c.name,
    );
    assert.deepEqual(p.sampleTypes, [
      ['samples', 'count'],
      ['cpu', 'nanoseconds'],
    ]);
    assert.deepEqual([p.timeNanos, p.durationNanos, p.period], [1_000_000, 2_000_000_000, 10_000_000], c.name);
  }
});

test('cpuProfileToPprof: V8 lines and columns are 0-based, pprof lines 1-based; an unknown one is 0', () => {
  const p = cpuProfileToPprof(
    {
      nodes: [
        { id: 1, callFrame: frame('(root)', '', -1, -1), children: [2] },
        { id: 2, callFrame: frame('f', 'node:fs', 41, 7) },
      ],
      startTime: 0,
      endTime: 1,
      samples: [2],
      timeDeltas: [5],
    },
    1_000_000,
    0,
  );
  assert.deepEqual(p.samples[0]!.stack, [{ name: 'f', file: 'node:fs', line: 42, column: 8 }]);
});

test('heapProfileToPprof: the live bytes of each stack that allocated any, as inuse_space', () => {
  const node = (n: string, selfSize: number, children: HeapNode[] = []): HeapNode => ({ callFrame: frame(n), selfSize, children });
  const cases: { name: string; head: HeapNode; want: [string, number][] }[] = [
    { name: 'nothing sampled', head: node('(root)', 0), want: [] },
    {
      name: 'a tree: nodes with no bytes of their own give no sample',
      head: node('(root)', 0, [node('main', 0, [node('alloc', 1_048_576), node('', 524_320)]), node('(V8 API)', 2_400_016)]),
      want: [
        ['alloc<main', 1_048_576],
        ['(anonymous)<main', 524_320],
        ['(V8 API)', 2_400_016],
      ],
    },
  ];
  for (const c of cases) {
    const p = heapProfileToPprof(c.head, 524_288, 7);
    assert.deepEqual(
      p.samples.map((s) => [names(s), ...s.values]),
      c.want,
      c.name,
    );
    assert.deepEqual([p.sampleTypes, p.periodType, p.period, p.timeNanos], [[['inuse_space', 'bytes']], ['space', 'bytes'], 524_288, 7]);
  }
});
