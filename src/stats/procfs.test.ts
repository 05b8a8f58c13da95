import { test } from 'node:test';
import assert from 'node:assert/strict';
import { devNumbers, maxPid, parseDiskstatsNames, parseLimits, parseLoadavgTasks, parseNetDev, parseUptimeSeconds } from './procfs.ts';

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

const limits = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max processes             96365                96365                processes
Max open files            1048576              1048576              files
Max locked memory         8388608              8388608              bytes
`;

test("parseLimits: cadvisor's ulimits, only the open files", () => {
  const cases: [name: string, text: string, want: ReturnType<typeof parseLimits>][] = [
    ['a container', limits, [{ name: 'max_open_files', soft: 1048576, hard: 1048576 }]],
    [
      'unlimited is -1',
      'Max open files            unlimited            unlimited            files\n',
      [{ name: 'max_open_files', soft: -1, hard: -1 }],
    ],
    ['soft below hard', 'Max open files  1024  524288  files\n', [{ name: 'max_open_files', soft: 1024, hard: 524288 }]],
    ['a line that does not parse', 'Max open files  lots  524288  files\n', []],
    ['a process gone mid-read', '', []],
  ];
  for (const [name, text, want] of cases) assert.deepEqual(parseLimits(text), want, name);
});

test('parseDiskstatsNames: device names by major:minor', () => {
  const diskstats = `   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
 254       0 vda 2933750 173068 124398538 11201712 3610840 1259202 281179176 3332713 0 867000 14816512 664764 272 227246520 186517 796134 95567
 259       1 nvme0n1p1 10 0 80 1 0 0 0 0 0 4 1 0 0 0 0
`;
  assert.deepEqual(parseDiskstatsNames(diskstats), { '7:0': 'loop0', '254:0': 'vda', '259:1': 'nvme0n1p1' });
  assert.deepEqual(parseDiskstatsNames(''), {});
});

test("devNumbers: st_dev split as glibc's major/minor", () => {
  const cases: [dev: bigint, want: string][] = [
    [0xfe00n, '254:0'],
    [0x801n, '8:1'],
    [0x10300n + 0x5n, '259:5'],
    // Minor 256 and above spill into the upper bits.
    [(0x1n << 20n) | (0x103n << 8n), '259:256'],
  ];
  for (const [dev, want] of cases) assert.equal(devNumbers(dev), want, String(dev));
});
