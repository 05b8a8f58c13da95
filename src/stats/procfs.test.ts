import { test } from 'node:test';
import assert from 'node:assert/strict';
import { maxPid, parseLoadavgTasks, parseNetDev, parseUptimeSeconds } from './procfs.ts';

const netDev = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 499458590 1446179    0    0    0     0          0         0 499458590 1446179    0    0    0     0       0          0
  eth0: 1723946983   74761    2    3    0     0          0         0  7723606   54691    4    5    0     0       0          0
kts-br0:     416       6    0    0    0     0          0         6      744       8    0    0    0     0       0          0
vethab3f78fc:     542       7    0    0    0     0          0         0     1526      17    0    0    0     0       0          0
`;

test('parseNetDev: counters per interface, without loopback and container links', () => {
  assert.deepEqual(parseNetDev(netDev), [
    {
      name: 'eth0',
      rxBytes: 1723946983,
      rxPackets: 74761,
      rxErrors: 2,
      rxDropped: 3,
      txBytes: 7723606,
      txPackets: 54691,
      txErrors: 4,
      txDropped: 5,
    },
    { name: 'kts-br0', rxBytes: 416, rxPackets: 6, rxErrors: 0, rxDropped: 0, txBytes: 744, txPackets: 8, txErrors: 0, txDropped: 0 },
  ]);
  assert.deepEqual(parseNetDev(''), []);
});

test('task counts, uptime and the pid limit', () => {
  const cases: [string, unknown, unknown][] = [
    ['loadavg', parseLoadavgTasks('0.32 0.48 0.68 2/154 5404\n'), 154],
    ['loadavg garbage', parseLoadavgTasks('nope'), undefined],
    ['uptime', parseUptimeSeconds('8826.52 17000.10\n'), 8826.52],
    ['uptime garbage', parseUptimeSeconds(''), undefined],
    ['pid_max below threads-max', maxPid('32768\n', '192730\n'), 32768],
    ['threads-max below pid_max', maxPid('4194304\n', '192730\n'), 192730],
    ['one readable', maxPid(undefined, '100\n'), 100],
    ['none readable', maxPid(undefined, undefined), undefined],
  ];
  for (const [name, got, want] of cases) assert.equal(got, want, name);
});
