import assert from 'node:assert/strict';
import { test } from 'node:test';
import { best, bestOfEach, concurrencies, densities, type FloorRun, floorOf, floorUnusable, ratio } from './floor-plan.ts';

test("densities: make bench's three, and a word that is none refused by name", () => {
  const cases: [string, ReturnType<typeof densities> | RegExp][] = [
    [
      '30,100,100-sequential',
      [
        { pods: 30, sequential: false },
        { pods: 100, sequential: false },
        { pods: 100, sequential: true },
      ],
    ],
    [' 3 , ', [{ pods: 3, sequential: false }]],
    ['30,lots', /"lots"/],
    ['0', /"0"/],
  ];
  for (const [spec, want] of cases)
    if (want instanceof RegExp) assert.throws(() => densities(spec), want, spec);
    else assert.deepEqual(densities(spec), want, spec);
});

test('concurrencies: capped at the pods, once each, ascending; one by one is 1', () => {
  const at = (pods: number, sequential = false) => ({ pods, sequential });
  const cases: [string, ReturnType<typeof at>, number[] | RegExp][] = [
    ['1,2,4,8,16,all', at(30), [1, 2, 4, 8, 16, 30]],
    ['1,2,4,8,16,all', at(3), [1, 2, 3]],
    ['all,1', at(100), [1, 100]],
    ['1,2,4,8,16,all', at(100, true), [1]],
    ['1,x', at(30), /"x"/],
    ['0', at(30), /"0"/],
  ];
  for (const [spec, d, want] of cases)
    if (want instanceof RegExp) assert.throws(() => concurrencies(spec, d), want, spec);
    else assert.deepEqual(concurrencies(spec, d), want, `${spec} ${d.pods}`);
});

const run = (pods: number, concurrency: number, p50: number, p99: number, sequential = false): FloorRun => ({
  pods,
  sequential,
  concurrency,
  p50,
  p99,
});

test('best: lowest p99, then p50, then fewer workers', () => {
  const cases: [FloorRun[], number | undefined][] = [
    [[], undefined],
    [[run(30, 1, 900, 1800), run(30, 4, 700, 1200), run(30, 30, 600, 1500)], 4],
    [[run(30, 8, 700, 1200), run(30, 4, 650, 1200)], 4],
    [[run(30, 8, 650, 1200), run(30, 4, 650, 1200)], 4],
  ];
  for (const [runs, want] of cases) assert.equal(best(runs)?.concurrency, want);
});

test('bestOfEach and floorOf: the floor of each density, found by a side-by-side run', () => {
  const runs = [
    run(30, 1, 900, 1800),
    run(30, 4, 700, 1200),
    run(100, 4, 2000, 4000),
    run(100, 100, 1900, 3900),
    run(100, 1, 300, 400, true),
  ];
  const doc = { date: '', runtime: '', runs, best: bestOfEach(runs) };
  assert.deepEqual(
    doc.best.map((r) => [r.pods, r.sequential, r.concurrency]),
    [
      [30, false, 4],
      [100, false, 100],
      [100, true, 1],
    ],
  );
  assert.equal(floorOf(doc, { pods: 100, sequential: true })?.p99, 400);
  assert.equal(floorOf(doc, { pods: 100, sequential: false })?.p99, 3900);
  assert.equal(floorOf(doc, { pods: 50, sequential: false }), undefined);
  assert.equal(floorOf(undefined, { pods: 30, sequential: false }), undefined);
});

test('ratio: the kubelet over the floor, "-" when either is missing', () => {
  const cases: [number, number | undefined, string][] = [
    [1380, 1200, '1.15x'],
    [600, 1200, '0.50x'],
    [1000, undefined, '-'],
    [Number.NaN, 1200, '-'],
    [1000, 0, '-'],
  ];
  for (const [k, f, want] of cases) assert.equal(ratio(k, f), want, `${k}/${f}`);
});

test('floorUnusable: a floor of this machine measured within the hours given, else why not', () => {
  const amd = 'AMD EPYC, 2 CPUs';
  const doc = (date: string, machine: string | null = amd) => ({
    date,
    ...(machine ? { machine } : {}),
    runtime: '',
    runs: [],
    best: [],
  });
  const now = Date.parse('2026-12-03T12:00:00Z');
  const cases: [ReturnType<typeof doc>, string | undefined][] = [
    [doc('2026-12-03T11:00:00Z'), undefined],
    [doc('2026-12-03T06:00:00Z'), undefined],
    [doc('2026-12-03T05:59:59Z'), 'it is older than 6 h (2026-12-03T05:59:59Z)'],
    [doc('not a date'), 'it is older than 6 h (not a date)'],
    [doc('2026-12-03T11:00:00Z', 'Intel Xeon, 2 CPUs'), 'it was measured on Intel Xeon, 2 CPUs, this run is on AMD EPYC, 2 CPUs'],
    [doc('2026-12-03T11:00:00Z', null), 'it was measured on a machine it does not name, this run is on AMD EPYC, 2 CPUs'],
  ];
  for (const [d, want] of cases) assert.equal(floorUnusable(d, now, 6, amd), want, `${d.date} ${d.machine}`);
});
