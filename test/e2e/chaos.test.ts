// The fast slice of `make chaos` (test/chaos/run.ts) that `make test` keeps green: every fault
// once, amid churning pods, with short control plane outages; the invariant table must pass.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { FAULTS } from '../chaos/faults.ts';
import { runChaos } from '../chaos/run.ts';
import { ensureStack } from './stack.ts';

before(() => ensureStack());

test('chaos slice: each fault once amid churning pods; no unexplained restart, statuses converge, nothing leaked', async () => {
  const lines: string[] = [];
  const seed = Number(process.env.CHAOS_SEED ?? Date.now() % 1_000_000);
  const report = await runChaos({
    durationMs: 0,
    seed,
    faults: FAULTS.map((f) => f.name),
    maxOutageMs: 10_000,
    convergeMs: 120_000,
    population: 8,
    // Faults follow each other closely: the slice checks recovery from each, the long run
    // (`make chaos`) spaces them out.
    gapMs: [1000, 3000],
    log: (l) => lines.push(l),
  });
  assert.ok(report.ok, `seed ${seed}\n${lines.join('\n')}\n${report.table}`);
  // Where the slice's minutes go, for the CI log.
  console.log(lines.filter((l) => /fault:|converged in/.test(l)).join('\n'));
});
