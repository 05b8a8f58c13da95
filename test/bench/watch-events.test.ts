import { test } from 'node:test';
import assert from 'node:assert/strict';
import { grewBy, watchEventsByKind } from './watch-events.ts';

const metrics = (pods: number, events: number) => `# HELP apiserver_watch_events_total [ALPHA] Number of events sent in watch clients
# TYPE apiserver_watch_events_total counter
apiserver_watch_events_total{group="",kind="Pod",version="v1"} ${pods}
apiserver_watch_events_total{group="events.k8s.io",kind="Event",version="v1"} ${events}
apiserver_watch_events_total{group="coordination.k8s.io",kind="Lease",version="v1"} 40
apiserver_watch_events_sizes_sum{group="",kind="Pod",version="v1"} 123456
`;

test('watchEventsByKind: the counter by kind, the group named when there is one; other series ignored', () => {
  assert.deepEqual(
    watchEventsByKind(metrics(10, 3)),
    new Map([
      ['Pod', 10],
      ['Event.events.k8s.io', 3],
      ['Lease.coordination.k8s.io', 40],
    ]),
  );
  assert.equal(watchEventsByKind('').size, 0);
});

test('grewBy: the growth between readings, most first, kinds that did not move left out', () => {
  const d = grewBy(watchEventsByKind(metrics(10, 3)), watchEventsByKind(metrics(410, 103)));
  assert.deepEqual(
    [...d],
    [
      ['Pod', 400],
      ['Event.events.k8s.io', 100],
    ],
  );
  // A kind first seen in the second reading counts from zero.
  assert.deepEqual([...grewBy(new Map(), new Map([['Node', 2]]))], [['Node', 2]]);
});
