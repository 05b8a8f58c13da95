import { test } from 'node:test';
import assert from 'node:assert/strict';
import { atMost, type Figures, floorVerdict, verdicts } from './targets.ts';

const upstream: Figures = {
  startP99Ms: 36000,
  exitP99Ms: 1400,
  rssBeforeMB: 100,
  rssSteadyMB: 130,
  rssPeakMB: 136,
  cpuPerMinuteSteady: 5.4,
  requestsPerPod: 19.4,
  idleRequestsPerMinute: 11,
};

test('verdicts: each target met or missed, and by how much', () => {
  const cases: { name: string; ts: Partial<Figures>; target: string; met: boolean; detail: RegExp }[] = [
    {
      name: 'start p99 at 0.8x is met',
      ts: { startP99Ms: 28800 },
      target: 'podstart',
      met: true,
      detail: /^0\.80x \(28800 against 36000 ms\)$/,
    },
    {
      name: 'start p99 at 0.93x misses by the ms over 0.8x',
      ts: { startP99Ms: 33343 },
      target: 'podstart',
      met: false,
      detail: /0\.93x .*missed by 4543 ms/,
    },
    { name: 'exit p99 under 250 ms', ts: { exitP99Ms: 248 }, target: 'exit->', met: true, detail: /^248 ms \(upstream's 1400 ms\)$/ },
    { name: 'exit p99 of 250 ms is not under', ts: { exitP99Ms: 260 }, target: 'exit->', met: false, detail: /missed by 10 ms/ },
    { name: 'RSS equal to upstream is met', ts: { rssSteadyMB: 130 }, target: 'RSSwith', met: true, detail: /^1\.00x/ },
    {
      name: 'peak RSS 8 MB over',
      ts: { rssPeakMB: 144 },
      target: 'RSSpeak',
      met: false,
      detail: /1\.06x \(144\.0 against 136\.0 MB\), missed by 8\.0 MB/,
    },
    {
      name: 'CPU in seconds with two digits',
      ts: { cpuPerMinuteSteady: 4.3 },
      target: 'CPUa',
      met: true,
      detail: /^0\.80x \(4\.30 against 5\.40 s\)$/,
    },
    { name: 'requests a pod', ts: { requestsPerPod: 20 }, target: 'apiserverrequests', met: false, detail: /missed by 0\.6 requests/ },
  ];
  for (const c of cases) {
    const ts = { ...upstream, startP99Ms: 1, exitP99Ms: 1, requestsPerPod: 1, idleRequestsPerMinute: 1, ...c.ts };
    const vs = verdicts(ts, upstream, 100).filter((v) => v.target.replaceAll(' ', '').startsWith(c.target));
    assert.ok(vs.length >= 1, `${c.name}: no verdict for ${c.target}`);
    const v = c.target === 'RSSwith' ? vs.find((x) => /running/.test(x.target))! : vs[0]!;
    assert.equal(v.met, c.met, `${c.name}: ${v.detail}`);
    assert.match(v.detail, c.detail, c.name);
  }
});

test('verdicts: a figure not measured (a restarted variant has no idle window) gives no verdict', () => {
  const vs = verdicts({ ...upstream, idleRequestsPerMinute: undefined }, upstream, 30);
  assert.ok(!vs.some((v) => /idle/.test(v.target)));
  assert.equal(vs.length, 6, 'and no exit -> status verdict below 100 pods');
  assert.ok(!vs.some((v) => /exit/.test(v.target)));
  assert.match(vs[0]!.target, /^pod start p99 at 30 pods/, 'the run size is named');
});

test('atMost: within the factor is met; over it says by how much in the unit; an unmeasured side gives nothing', () => {
  assert.deepEqual(atMost('x', 8.6, 6.5, 1, 'requests', 1), {
    target: 'x',
    met: false,
    detail: '1.32x (8.6 against 6.5 requests), missed by 2.1 requests',
  });
  assert.equal(atMost('x', 101.5, 101.5, 1, 'MB', 1)?.met, true, 'equal is no higher');
  assert.equal(atMost('x', undefined, 3, 1, 's'), undefined);
  assert.equal(atMost('x', 1, 0, 1, 's'), undefined, 'nothing to compare with');
});

test('floorVerdict: the start p99 within 1.15x the runtime floor, by how much it misses, the floor unmeasured not judged', () => {
  const floor = { p99: 2000, concurrency: 4 };
  const cases: [number, typeof floor | undefined, boolean | undefined, RegExp | undefined][] = [
    [2300, floor, true, /^1\.15x \(2300 against 2000 ms\); the floor's best concurrency 4$/],
    [2600, floor, false, /^1\.30x \(2600 against 2000 ms\), missed by 300 ms; the floor's best concurrency 4$/],
    [1800, floor, true, /^0\.90x/],
    [2300, undefined, undefined, undefined],
    [Number.NaN, floor, undefined, undefined],
  ];
  for (const [p99, f, met, detail] of cases) {
    const v = floorVerdict('kubelet-ts', p99, f, 30);
    assert.equal(v?.met, met, `${p99}`);
    if (detail) assert.match(v!.detail, detail);
    if (v) assert.equal(v.target, 'kubelet-ts: pod start p99 at 30 pods within 1.15x the runtime floor');
  }
});
