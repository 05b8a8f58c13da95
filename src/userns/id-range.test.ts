import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allocatorSlots, defaultRange, type IdFiles, type IdRange, kubeletIdRange } from './id-range.ts';

const DEFAULT_RANGE = defaultRange(65536);
const passwd = 'root:x:0:0:root:/root:/bin/bash\nkubelet:x:998:998::/nonexistent:/usr/sbin/nologin\n';

test('kubeletIdRange: /etc/subuid and /etc/subgid of the user "kubelet", else the default range', () => {
  const rows: { name: string; files: IdFiles; want: IdRange | RegExp }[] = [
    { name: 'no passwd at all', files: {}, want: DEFAULT_RANGE },
    { name: 'no user "kubelet"', files: { passwd: 'root:x:0:0::/:/bin/sh\n', subuid: 'kubelet:65536:65536\n' }, want: DEFAULT_RANGE },
    { name: 'the user, but no subordinate IDs', files: { passwd, subuid: 'alice:100000:65536\n' }, want: DEFAULT_RANGE },
    {
      name: 'one range for both',
      files: { passwd, subuid: 'alice:100000:65536\nkubelet:65536:7208960\n', subgid: 'kubelet:65536:7208960\n' },
      want: { firstID: 65536, length: 7208960 },
    },
    {
      name: 'named by uid, as shadow allows',
      files: { passwd, subuid: '998:131072:131072\n', subgid: '998:131072:131072\n' },
      want: { firstID: 131072, length: 131072 },
    },
    {
      name: 'uids without gids',
      files: { passwd, subuid: 'kubelet:65536:65536\n' },
      want: /^Error: mismatched subuids and subgids for user "kubelet"$/,
    },
    {
      name: 'different ranges',
      files: { passwd, subuid: 'kubelet:65536:65536\n', subgid: 'kubelet:131072:65536\n' },
      want: /^Error: mismatched subuids and subgids for user "kubelet"$/,
    },
    {
      name: 'two ranges',
      files: { passwd, subuid: 'kubelet:65536:65536\nkubelet:262144:65536\n', subgid: 'kubelet:65536:65536\nkubelet:262144:65536\n' },
      want: /^Error: error parsing line "kubelet:65536:65536\\nkubelet:262144:65536": it must contain only one line$/,
    },
    {
      name: 'not a number',
      files: { passwd, subuid: 'kubelet:6x:65536\n', subgid: 'kubelet:6x:65536\n' },
      want: /^Error: error parsing line "kubelet:6x:65536": not an unsigned 32-bit number$/,
    },
    {
      name: 'beyond 32 bits',
      files: { passwd, subuid: 'kubelet:65536:4294967296\n', subgid: 'kubelet:65536:4294967296\n' },
      want: /not an unsigned 32-bit number/,
    },
    {
      name: 'a field too many',
      files: { passwd, subuid: 'kubelet:1:2:3\n', subgid: 'kubelet:1:2:3\n' },
      want: /^Error: invalid line "kubelet:1:2:3"$/,
    },
  ];
  for (const r of rows) {
    if (r.want instanceof RegExp) assert.throws(() => kubeletIdRange(r.files, 65536), r.want, r.name);
    else assert.deepEqual(kubeletIdRange(r.files, 65536), r.want, r.name);
  }
});

test("allocatorSlots: MakeUserNsManager's checks, and the slots of idsPerPod IDs", () => {
  const rows: {
    name: string;
    range: IdRange;
    maxPods?: number;
    ids?: number;
    want: { offset: number; count: number; size: number } | string;
  }[] = [
    { name: 'the default range', range: DEFAULT_RANGE, want: { offset: 1, count: 65535, size: 65536 } },
    { name: 'exactly enough for maxPods', range: { firstID: 131072, length: 110 * 65536 }, want: { offset: 2, count: 110, size: 65536 } },
    // userNamespaces.idsPerPod: the default range starts at one share and slots are shares.
    { name: 'idsPerPod 131072, default range', range: defaultRange(131072), ids: 131072, want: { offset: 1, count: 32767, size: 131072 } },
    {
      name: 'idsPerPod 100000',
      range: defaultRange(100000),
      ids: 100000,
      want: 'kubelet user namespace length 100000 is not a multiple of 65536',
    },
    {
      name: 'a range aligned to 65536 only',
      range: { firstID: 65536 * 3, length: 110 * 131072 },
      ids: 131072,
      want: 'kubelet user assigned ID 196608 is not a multiple of 131072',
    },
    {
      name: 'not aligned',
      range: { firstID: 100000, length: 7208960 },
      want: 'kubelet user assigned ID 100000 is not a multiple of 65536',
    },
    { name: 'ID 0 included', range: { firstID: 0, length: 7208960 }, want: 'kubelet user assigned ID 0 must be greater or equal to 65536' },
    {
      name: 'length not a multiple',
      range: { firstID: 65536, length: 70000 },
      want: 'kubelet user assigned IDs length 70000 is not a multiple of 65536',
    },
    {
      name: 'too few for maxPods',
      range: { firstID: 65536, length: 109 * 65536 },
      want: 'kubelet user assigned IDs are not enough to support 110 pods',
    },
  ];
  for (const r of rows) {
    const slots = () => allocatorSlots(r.range, r.maxPods ?? 110, r.ids ?? 65536);
    if (typeof r.want === 'string') assert.throws(slots, { message: r.want }, r.name);
    else assert.deepEqual(slots(), r.want, r.name);
  }
});
