import { test } from 'node:test';
import assert from 'node:assert/strict';
import { usageNanoCores, type CpuReading } from './rate.ts';

test('usageNanoCores: CPU time over wall time between two readings', () => {
  const at = (usageNs: number, timeMs: number): CpuReading => ({ usageNs, timeMs });
  const cases: [name: string, prev: CpuReading | undefined, cur: CpuReading | undefined, want: number | undefined][] = [
    ['one core busy for 10 s', at(1e9, 0), at(11e9, 10_000), 1e9],
    ['a quarter core', at(0, 1000), at(2.5e8, 2000), 2.5e8],
    ['idle', at(5, 0), at(5, 10_000), 0],
    ['rounded to whole nanocores', at(0, 0), at(1, 3), 333],
    ['no previous reading', undefined, at(1, 1), undefined],
    ['no current reading', at(1, 1), undefined, undefined],
    ['time did not advance', at(0, 5), at(10, 5), undefined],
    ['counter went backwards (a new cgroup)', at(100, 0), at(50, 1000), undefined],
  ];
  for (const [name, prev, cur, want] of cases) assert.equal(usageNanoCores(prev, cur), want, name);
});
