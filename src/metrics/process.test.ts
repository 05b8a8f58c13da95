import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addressSpaceLimit, netDevTotals } from './process.ts';

const NET_DEV = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 8599868741 12296025    0    0    0     0          0         0 8599868741 12296025    0    0    0     0       0          0
  eth0:  1000 10    0    0    0     0          0         0  250       3    0    0    0     0       0          0
`;

test("netDevTotals: procfs's NetDev.Total, every interface's bytes", () => {
  const cases: [string, string, ReturnType<typeof netDevTotals>][] = [
    ['lo and eth0', NET_DEV, { receiveBytes: 8599869741, transmitBytes: 8599868991 }],
    ['headers only', NET_DEV.split('\n').slice(0, 2).join('\n'), undefined],
    ['unreadable', '', undefined],
    ['a short line', `${NET_DEV}  bad: 1 2 3\n`, undefined],
  ];
  for (const [name, text, want] of cases) assert.deepEqual(netDevTotals(text), want, name);
});

test('addressSpaceLimit: the soft limit; unlimited is 2^64 as Go prints RLIM_INFINITY as a float', () => {
  const limits = (v: string) =>
    `Limit                     Soft Limit           Hard Limit           Units\nMax address space         ${v}            unlimited            bytes\n`;
  assert.equal(addressSpaceLimit(limits('unlimited')), 1.8446744073709552e19);
  assert.equal(addressSpaceLimit(limits('4294967296')), 4294967296);
  assert.equal(addressSpaceLimit(''), undefined);
});
