import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Event } from 'kubernetes-types/core/v1.js';
import { type Correlated, EventCorrelator } from './correlator.ts';

let n = 0;
const ev = (reason: string, message: string, object = 'web', at = '2026-11-28T10:00:00Z'): Event => ({
  metadata: { name: `${object}.${n++}`, namespace: 'default' },
  involvedObject: { kind: 'Pod', namespace: 'default', name: object, uid: `uid-${object}`, apiVersion: 'v1' },
  reason,
  message,
  type: 'Warning',
  source: { component: 'kubelet', host: 'node-a' },
  firstTimestamp: at,
  lastTimestamp: at,
  count: 1,
  reportingComponent: 'kubelet',
  reportingInstance: 'node-a',
});
const sent = (c: Correlated) => {
  if (c.skip) return 'skip';
  return c.patch
    ? `patch ${c.event.metadata!.name} x${c.patch.count}: ${c.patch.message}`
    : `create ${c.event.metadata!.name}: ${c.event.message}`;
};

// client-go's eventLogger: the same event again is a patch of the first, its count up by one.
test('a repeated event patches the first one: its name and firstTimestamp, the count, the new lastTimestamp', () => {
  const c = new EventCorrelator(() => 0);
  const first = ev('BackOff', 'Back-off restarting failed container', 'web', '2026-11-28T10:00:00Z');
  assert.equal(sent(c.correlate(first)), `create ${first.metadata!.name}: Back-off restarting failed container`);
  const again = c.correlate(ev('BackOff', 'Back-off restarting failed container', 'web', '2026-11-28T10:00:20Z'));
  assert.equal(sent(again), `patch ${first.metadata!.name} x2: Back-off restarting failed container`);
  assert.ok(!again.skip);
  assert.deepEqual(again.patch, { count: 2, lastTimestamp: '2026-11-28T10:00:20Z', message: 'Back-off restarting failed container' });
  assert.equal(again.event.firstTimestamp, '2026-11-28T10:00:00Z');
  assert.equal(
    sent(c.correlate(ev('BackOff', 'Back-off restarting failed container'))),
    `patch ${first.metadata!.name} x3: Back-off restarting failed container`,
  );
  // Another object, or another message, is another event.
  assert.match(sent(c.correlate(ev('BackOff', 'Back-off restarting failed container', 'db'))), /^create db\./);
  assert.match(sent(c.correlate(ev('BackOff', 'Back-off pulling image'))), /^create web\./);
});

// EventAggregator: the 10th distinct message of one reason for one object within 10 minutes.
test('ten messages of one reason for one object within 10 minutes are combined into one event', () => {
  let now = 0;
  const c = new EventCorrelator(() => now);
  const out = Array.from({ length: 12 }, (_, i) => sent(c.correlate(ev('Unhealthy', `probe failed: ${i}`))));
  assert.ok(
    out.slice(0, 9).every((s) => s.startsWith('create web.')),
    out.join('\n'),
  );
  assert.match(out[9]!, /^create web\.[0-9a-f]+: \(combined from similar events\): probe failed: 9$/);
  const combined = out[9]!.split(' ')[1]!.replace(/:$/, '');
  assert.deepEqual(out.slice(10), [
    `patch ${combined} x2: (combined from similar events): probe failed: 10`,
    `patch ${combined} x3: (combined from similar events): probe failed: 11`,
  ]);
  // Ten minutes on, the reason starts afresh.
  now += 600_001;
  assert.match(sent(c.correlate(ev('Unhealthy', 'probe failed: 12'))), /^create web\.\d+: probe failed: 12$/);
});

// EventSourceObjectSpamFilter: 25 at once per object, then one per 5 minutes; counts go on meanwhile.
test('the spam filter: 25 events per object at once, then one per 5 minutes', () => {
  let now = 0;
  const c = new EventCorrelator(() => now);
  const reasons = Array.from({ length: 30 }, (_, i) => `Reason${i}`);
  const out = reasons.map((r) => sent(c.correlate(ev(r, 'm'))));
  assert.equal(out.filter((s) => s !== 'skip').length, 25);
  assert.deepEqual(out.slice(25), ['skip', 'skip', 'skip', 'skip', 'skip']);
  assert.match(sent(c.correlate(ev('Other', 'm', 'db'))), /^create db\./, 'another object has its own allowance');
  assert.equal(sent(c.correlate(ev('Reason0', 'm'))), 'skip');
  now += 300_000;
  // Reason0 was sent once, then skipped once: its next accepted repeat says 3.
  assert.match(sent(c.correlate(ev('Reason0', 'm'))), /^patch web\.\d+ x3: m$/);
  assert.equal(sent(c.correlate(ev('Reason1', 'm'))), 'skip');
});
