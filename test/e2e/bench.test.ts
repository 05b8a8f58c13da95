// The fast slice of `make bench` (test/bench/side-by-side.ts) that `make test` keeps green:
// kubelet-ts alone (the upstream kubelet builds only for `make bench`), 3 pods and short
// windows, as it is, not restarted. What is checked is what a reader of the bench's table
// relies on: every figure measured (no NaN, no empty breakdown), the figures kept for the plot.
// Then the runtime's floor (test/bench/floor.ts) of 3 pods on a containerd of its own, and the
// slice's start as a ratio of it.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { ROOT, ensureStack } from './stack.ts';

before(() => ensureStack());

const PODS = 3;

/** The table's row of that figure, cells after the label (the run's only column here). */
function row(table: string, label: string): string {
  const line = table.split('\n').find((l) => l.startsWith(`| ${label}`));
  assert.ok(line, `no row "${label}" in\n${table}`);
  return line.split('|')[2]!.trim();
}
const number = (cell: string) => Number(cell.match(/^[\d.]+/)?.[0] ?? NaN);

/** The slice's side-by-side run: kubelet-ts alone, as it is, short windows; its table. */
async function sideBySide(out: string): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [`${ROOT}/test/bench/side-by-side.ts`], {
    env: {
      ...process.env,
      BENCH_PODS: String(PODS),
      BENCH_ONLY: '^kubelet-ts$',
      BENCH_RESTART: '0',
      BENCH_IDLE_SECONDS: '10',
      BENCH_STEADY_SECONDS: '10',
      // make test builds the cluster's add-ons at the lowest priority meanwhile: the machine is never quiet.
      BENCH_QUIET_SECONDS: '5',
      BENCH_OUT: out,
    },
    timeout: 300_000,
    maxBuffer: 16 << 20,
  });
  return stdout;
}

test('bench slice: kubelet-ts with 3 pods; every figure of the table measured, the run kept for the plot', async () => {
  const out = mkdtempSync(`${tmpdir()}/kts-bench-`);
  try {
    const stdout = await sideBySide(out);
    assert.doesNotMatch(stdout, /NaN/, stdout);
    for (const label of ['create -> Running, p99', 'container exit -> status, p99']) {
      const ms = number(row(stdout, label));
      assert.ok(ms > 0 && ms < 120_000, `${label}: ${ms} ms`);
    }
    for (const label of ['kubelet RSS before (0 pods)', 'kubelet RSS peak', `kubelet RSS, ${PODS} pods running 10 s`]) {
      const mb = number(row(stdout, label));
      assert.ok(mb > 20 && mb < 1000, `${label}: ${mb} MB`);
    }
    assert.ok(number(row(stdout, `kubelet CPU a minute, ${PODS} pods running and probed (httpGet)`)) > 0, stdout);
    assert.ok(number(row(stdout, 'kubelet CPU a minute, idle')) > 0, stdout);
    // Each pod's life asks the apiserver at least its status patches and its token.
    const requests = number(row(stdout, 'apiserver requests, create to delete'));
    assert.ok(requests >= 2 * PODS, `apiserver requests, create to delete: ${requests}`);
    assert.match(stdout, /- kubelet-ts: start SLI \d+ ms; run_podsandbox 1\.0 x /, 'the per-phase breakdown');
    assert.match(stdout, /- kubelet-ts: patch pods\/status \d+/, 'requests by kind, from the audit log');
    const way = stdout.match(/- kubelet-ts: admission (\d+) ms, seen -> Running (\d+) ms, the apiserver both ways (-?\d+) ms/);
    assert.ok(way, `a pod's way through the kubelet:\n${stdout}`);
    // Admission within the time to Running; the apiserver's share both ways on a local stack is
    // not negative (the bench created the pod before the kubelet saw it) and under the start.
    const [admission, running, apiserver] = way.slice(1).map(Number) as [number, number, number];
    assert.ok(admission <= running && running > 0, way[0]);
    assert.ok(apiserver >= 0 && apiserver < number(row(stdout, 'create -> Running, p99')), way[0]);
    const kept = JSON.parse(readFileSync(`${out}/side-by-side-${PODS}.json`, 'utf8'));
    assert.equal(kept.pods, PODS);
    assert.equal(kept.kubelets.length, 1);
    assert.equal(kept.kubelets[0].label, 'kubelet-ts');
    assert.ok(kept.kubelets[0].p99 >= kept.kubelets[0].p50 && kept.kubelets[0].p50 > 0, JSON.stringify(kept));
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test("bench slice: the runtime floor of 3 pods through CRI, and kubelet-ts's start as a ratio of it", async () => {
  const out = mkdtempSync(`${tmpdir()}/kts-floor-`);
  const run = promisify(execFile);
  try {
    await run('bash', [`${ROOT}/hack/runtime-floor.sh`, 'start'], { timeout: 120_000 });
    const { stdout: floorTable } = await run(process.execPath, [`${ROOT}/test/bench/floor.ts`], {
      env: { ...process.env, FLOOR_DENSITIES: String(PODS), FLOOR_CONCURRENCY: '1,all', BENCH_QUIET_SECONDS: '5', BENCH_OUT: out },
      timeout: 300_000,
    });
    const floor = JSON.parse(readFileSync(`${out}/floor.json`, 'utf8'));
    assert.deepEqual(
      floor.runs.map((r: { concurrency: number }) => r.concurrency),
      [1, PODS],
      floorTable,
    );
    assert.equal(floor.best.length, 1);
    assert.ok(floor.best[0].p99 >= floor.best[0].p50 && floor.best[0].p50 > 0, JSON.stringify(floor));
    // The floor's containerd keeps nothing of the run.
    const { stdout: left } = await run(`${ROOT}/_output/bin/crictl`, [
      '--runtime-endpoint',
      'unix:///run/containerd-floor/containerd.sock',
      'pods',
      '-q',
    ]);
    assert.equal(left.trim(), '', 'sandboxes left in containerd-floor');
    const stdout = await sideBySide(out);
    assert.ok(number(row(stdout, "create -> Running p99, over the runtime floor's")) > 0, stdout);
    assert.match(stdout, /- (met|MISSED): kubelet-ts: pod start p99 at 3 pods within 1\.15x the runtime floor: [\d.]+x/, stdout);
  } finally {
    await run('bash', [`${ROOT}/hack/runtime-floor.sh`, 'stop'], { timeout: 120_000 }).catch(() => {});
    rmSync(out, { recursive: true, force: true });
  }
});
