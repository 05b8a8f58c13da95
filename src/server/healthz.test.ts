import { test } from 'node:test';
import assert from 'node:assert/strict';
import { healthzReport, kubeletChecks, singleCheck } from './healthz.ts';

test('healthzReport answers as upstream', () => {
  const ok = kubeletChecks(() => undefined);
  const bad = kubeletChecks(() => 'PLEG is not healthy');
  assert.deepEqual(healthzReport(ok, false), { status: 200, body: 'ok' });
  assert.deepEqual(healthzReport(ok, true), { status: 200, body: '[+]ping ok\n[+]log ok\n[+]syncloop ok\nhealthz check passed\n' });
  const failed = { status: 500, body: '[+]ping ok\n[+]log ok\n[-]syncloop failed: reason withheld\nhealthz check failed\n' };
  assert.deepEqual(healthzReport(bad, false), failed);
  assert.deepEqual(healthzReport(bad, true), failed);
});

test('singleCheck names the failure', () => {
  const bad = kubeletChecks(() => 'PLEG is not healthy');
  assert.deepEqual(singleCheck(bad, 'ping'), { status: 200, body: 'ok' });
  assert.deepEqual(singleCheck(bad, 'syncloop'), { status: 500, body: 'internal server error: PLEG is not healthy\n' });
  assert.equal(singleCheck(bad, 'nope'), undefined);
});
