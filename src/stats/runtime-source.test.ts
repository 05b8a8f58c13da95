import { test } from 'node:test';
import assert from 'node:assert/strict';
import { criPsi, imageConfigLabels } from './runtime-source.ts';

test("criPsi: the CRI's PSI as the kubelet takes it (a missing line is zeros)", () => {
  const line = (total: string, avg10: number) => ({ Total: total, Avg10: avg10, Avg60: 0.5, Avg300: 0.25 });
  const cases: [name: string, psi: Parameters<typeof criPsi>[0], want: ReturnType<typeof criPsi>][] = [
    [
      'both lines',
      { Some: line('1234', 1), Full: line('56', 2) },
      {
        some: { total: 1234, avg10: 1, avg60: 0.5, avg300: 0.25 },
        full: { total: 56, avg10: 2, avg60: 0.5, avg300: 0.25 },
      },
    ],
    [
      'no full line',
      { Some: line('9', 3), Full: null },
      {
        some: { total: 9, avg10: 3, avg60: 0.5, avg300: 0.25 },
        full: { total: 0, avg10: 0, avg60: 0, avg300: 0 },
      },
    ],
    ['no PSI from the runtime', null, undefined],
  ];
  for (const [name, psi, want] of cases) assert.deepEqual(criPsi(psi), want, name);
});

test("imageConfigLabels: the image config's labels in containerd's verbose ImageStatus; none in anything else", () => {
  const info = {
    info: JSON.stringify({ chainID: 'sha256:c', imageSpec: { config: { Labels: { 'io.cadvisor.metric.prometheus': '/m.json' } } } }),
  };
  assert.deepEqual(imageConfigLabels(info), { 'io.cadvisor.metric.prometheus': '/m.json' });
  const none: (Record<string, string> | undefined)[] = [
    undefined,
    {},
    { info: '{' },
    { info: '{"imageSpec": {"config": {}}}' },
    { info: 'null' },
  ];
  for (const x of none) assert.deepEqual(imageConfigLabels(x), {});
});
