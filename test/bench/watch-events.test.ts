import { test } from 'node:test';
import assert from 'node:assert/strict';
import { grewBy, watchEventsByResource } from './watch-events.ts';

const metrics = (pods: number, events: number) => `# HELP apiserver_watch_events_total [ALPHA] Number of events sent in watch clients
# TYPE apiserver_watch_events_total counter
apiserver_watch_events_total{group="",resource="pods",version="v1"} ${pods}
apiserver_watch_events_total{group="events.k8s.io",resource="events",version="v1"} ${events}
apiserver_watch_events_total{group="coordination.k8s.io",resource="leases",version="v1"} 40
apiserver_watch_events_sizes_sum{group="",resource="pods",version="v1"} 123456
`;

test('watchEventsByResource: the counter by resource (v1.36 labels), the group named when there is one; other series ignored', () => {
  assert.deepEqual(
    watchEventsByResource(metrics(10, 3)),
    new Map([
      ['pods', 10],
      ['events.events.k8s.io', 3],
      ['leases.coordination.k8s.io', 40],
    ]),
  );
  assert.equal(watchEventsByResource('').size, 0);
  // Releases before labelled it by kind.
  assert.deepEqual([...watchEventsByResource('apiserver_watch_events_total{group="",kind="Pod",version="v1"} 7\n')], [['Pod', 7]]);
});

test('grewBy: the growth between readings, most first, kinds that did not move left out', () => {
  const d = grewBy(watchEventsByResource(metrics(10, 3)), watchEventsByResource(metrics(410, 103)));
  assert.deepEqual(
    [...d],
    [
      ['pods', 400],
      ['events.events.k8s.io', 100],
    ],
  );
  // A kind first seen in the second reading counts from zero.
  assert.deepEqual([...grewBy(new Map(), new Map([['Node', 2]]))], [['Node', 2]]);
});
