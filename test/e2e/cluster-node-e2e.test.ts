// A slice of upstream's node e2e suite as its CI runs it (hack/node-e2e-systemd.sh, `make
// node-e2e-systemd` for the whole selection): on a systemd node of the local cluster's network,
// e2e_node.test of the pinned release starts its own etcd and apiserver and kubelet-ts as the
// transient unit kubelet-<timestamp>.service, with upstream's test credential provider and the
// node-wide config.json. The spec of this slice restarts the kubelet through systemctl and pulls
// from a registry that wants credentials, with PullAlways.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { ROOT } from './stack.ts';
import { ensureCluster } from './cluster.ts';
import { parseJUnit } from '../conformance/report.ts';

const SPEC = 'should be able to pull from private registry with credential provider';

test(`upstream's node e2e on a systemd node: "${SPEC}" passes against kubelet-ts`, { timeout: 20 * 60_000 }, () => {
  ensureCluster();
  const out = `${ROOT}/_output/node-e2e-slice`;
  rmSync(out, { recursive: true, force: true });
  const r = spawnSync('bash', [`${ROOT}/hack/node-e2e-systemd.sh`], {
    encoding: 'utf8',
    timeout: 19 * 60_000,
    env: { ...process.env, FOCUS: SPEC, OUT: out },
  });
  const tail = `${r.stdout}\n${r.stderr}`.trim().split('\n').slice(-15).join('\n');
  let cases: ReturnType<typeof parseJUnit>;
  try {
    cases = parseJUnit(readFileSync(`${out}/junit_01.xml`, 'utf8'));
  } catch {
    assert.fail(`hack/node-e2e-systemd.sh wrote no JUnit report (exit ${r.status ?? r.signal}):\n${tail}`);
  }
  const ran = cases.filter((c) => c.outcome !== 'skipped' && c.name.includes('[It]'));
  assert.deepEqual(
    ran.map((c) => [c.outcome, c.name.includes(SPEC)]),
    [['passed', true]],
    `the one spec ran and passed:\n${ran.map((c) => `${c.outcome}: ${c.name}`).join('\n')}\n${tail}`,
  );
  assert.equal(r.status, 0, `hack/node-e2e-systemd.sh exited ${r.status ?? r.signal}:\n${tail}`);
});
