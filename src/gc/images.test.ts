import { mock, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  bytesToFree,
  imageGCLoopDisabled,
  imagesInUse,
  planImageGC,
  planOldImages,
  startImageGC,
  updateHistory,
  type ImageRecord,
} from './images.ts';
import type { ContainerState } from '../container/types.ts';

const img = (id: string, sizeBytes: number, pinned = false): ImageRecord => ({
  id,
  sizeBytes,
  pinned,
  tags: [`${id}:1`],
  refs: [`${id}:1`, `repo/${id}@sha256:${id}`],
});
const policy = { highThresholdPercent: 85, lowThresholdPercent: 80, minAgeMs: 120_000, maxAgeMs: 0 };

test('bytes to free: nothing under the high threshold; down to the low one above it', () => {
  const cases: [number, number, number][] = [
    [100, 20, 0],
    [100, 16, 0],
    [100, 15, 5],
    [100, 5, 15],
    [0, 0, 0],
  ];
  for (const [cap, avail, want] of cases) assert.equal(bytesToFree(cap, avail, policy), want, `${cap}/${avail}`);
});

test('plan: unused, unpinned, old enough images, least recently used first, until enough is freed', () => {
  const images = [img('used', 10), img('pause', 10, true), img('young', 10), img('a', 10), img('b', 10), img('c', 10)];
  let h = updateHistory(
    new Map(),
    images.filter((i) => i.id !== 'young'),
    new Set(['used', 'b']),
    0,
  );
  h = updateHistory(h, images, new Set(['used', 'c']), 200_000);
  // b was last used at 0, c at 200 s, a never: a, then b, then c.
  assert.deepEqual(
    planImageGC(images, new Set(['used']), h, 200_000, policy.minAgeMs, 15).map((i) => i.id),
    ['a', 'b'],
  );
  assert.deepEqual(
    planImageGC(images, new Set(['used']), h, 200_000, policy.minAgeMs, Infinity).map((i) => i.id),
    ['a', 'b', 'c'],
  );
  // Without a minimum age (the eviction manager's reclaim) the young image may go too
  // (never used, like a and b; first seen after them).
  assert.deepEqual(
    planImageGC(images, new Set(['used']), h, 200_000, 0, Infinity).map((i) => i.id),
    ['a', 'b', 'young', 'c'],
  );
  assert.deepEqual(planImageGC(images, new Set(['used']), h, 200_000, policy.minAgeMs, 0), []);
  // A container names its image by tag or repo digest as often as by ID.
  assert.deepEqual(
    planImageGC(images, new Set(['used', 'a:1', 'repo/b@sha256:b']), h, 200_000, policy.minAgeMs, Infinity).map((i) => i.id),
    ['c'],
  );
});

test('history forgets images that are gone and keeps when each was first seen', () => {
  const h = updateHistory(updateHistory(new Map(), [img('a', 1), img('b', 1)], new Set(), 5), [img('a', 1)], new Set(['a']), 9);
  assert.deepEqual([...h], [['a', { firstSeenMs: 5, lastUsedMs: 9 }]]);
});

test('in use: the images containers name (tag and ID) and those they mount as image volumes, whatever their state', () => {
  const ctr = (image: string, over: Partial<ContainerState> = {}): ContainerState => ({
    id: image,
    sandboxId: 'sb',
    name: 'c',
    attempt: 0,
    phase: 'running',
    image,
    imageRef: `sha256:${image}`,
    hash: '',
    createdAtNs: '0',
    ...over,
  });
  const pods = [
    { uid: 'u1', sandboxes: [], containers: [ctr('app:1', { imageMounts: ['sha256:tools', 'sha256:models'] })] },
    { uid: 'u2', sandboxes: [], containers: [ctr('job:1', { phase: 'exited', imageMounts: ['sha256:data'] })] },
  ];
  assert.deepEqual([...imagesInUse(pods)].sort(), [
    'app:1',
    'job:1',
    'sha256:app:1',
    'sha256:data',
    'sha256:job:1',
    'sha256:models',
    'sha256:tools',
  ]);
  const plan = planImageGC([img('sha256:tools', 10), img('other', 10)], imagesInUse(pods), new Map(), 0, 0, Infinity);
  assert.deepEqual(
    plan.map((i) => i.id),
    ['other'],
    'an image an image volume mounts is not collected',
  );
});

test("after a collection, the images left and when it began go to the hook (upstream's PostImageGCHook)", async () => {
  const images: ImageRecord[] = [
    { id: 'sha256:used', sizeBytes: 10, pinned: false, tags: ['r.io/used:1'], refs: ['r.io/used:1'] },
    { id: 'sha256:unused', sizeBytes: 10, pinned: false, tags: ['r.io/unused:1'], refs: ['r.io/unused:1'] },
    { id: 'sha256:stuck', sizeBytes: 10, pinned: false, tags: [], refs: [] },
  ];
  const calls: [string[], number][] = [];
  const silent = { info() {}, warn() {}, error() {}, v() {} } as never;
  const before = Date.now();
  const gc = startImageGC({
    policy: { highThresholdPercent: 85, lowThresholdPercent: 80, minAgeMs: 0, maxAgeMs: 0 },
    images: async () => images,
    inUse: async () => new Set(['r.io/used:1']),
    fs: () => ({ capacityBytes: 100, availableBytes: 50 }),
    remove: async (id) => {
      if (id === 'sha256:stuck') throw new Error('in use by the runtime');
    },
    log: silent,
    observe: { removed() {}, error() {} },
    afterCollect: (remaining, started) => calls.push([remaining, started]),
  });
  try {
    await gc.collect(true);
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0]![0], ['sha256:used', 'sha256:stuck']);
    assert.ok(calls[0]![1] >= before);
    // Under the thresholds nothing is collected and the hook is not called.
    await gc.collect();
    assert.equal(calls.length, 1);
  } finally {
    gc.stop();
  }
});

test('planOldImages: as freeOldImages, unused for longer than imageMaximumGCAge, once the GC has run that long', () => {
  const images = [img('used', 1), img('pause', 1, true), img('old', 1), img('recent', 1), img('never', 1)];
  // Seen at 0 (old used then), at 50 min (recent used then); never was never used.
  let h = updateHistory(new Map(), images, new Set(['used', 'old']), 0);
  h = updateHistory(h, images, new Set(['used', 'recent']), 3_000_000);
  const hour = 3_600_000;
  const rows: [string, number, number, number, string[]][] = [
    ['off (0)', 4_000_000, 0, 0, []],
    ['the GC has not run for the maximum age yet', 3_500_000, 0, hour, []],
    ['exactly the maximum age since the start: not yet', hour, 0, hour, []],
    ['past it: the unused ones not used within the hour, never-used ones too', hour + 1, 0, hour, ['old', 'never']],
    ['later: the recently used one too', 3_000_000 + hour + 1, 0, hour, ['old', 'recent', 'never']],
    ['a short maximum age', 3_000_001 + 60_000, 3_000_000, 60_000, ['old', 'recent', 'never']],
  ];
  for (const [name, now, started, maxAge, want] of rows)
    assert.deepEqual(
      planOldImages(images, new Set(['used']), h, now, started, maxAge).map((i) => i.id),
      want,
      name,
    );
});

test('imageMaximumGCAge: old images go first whatever the disk usage, counted with reason age', async () => {
  const images = [img('old', 10), img('used', 10)];
  const t = { now: 1_000_000 };
  const removed: string[] = [];
  const counted: [number, string][] = [];
  const silent = { info() {}, warn() {}, error() {}, v() {} } as never;
  const gc = startImageGC({
    policy: { highThresholdPercent: 85, lowThresholdPercent: 80, minAgeMs: 120_000, maxAgeMs: 600_000 },
    images: async () => images.filter((i) => !removed.includes(i.id)),
    inUse: async () => new Set(['used']),
    fs: () => ({ capacityBytes: 100, availableBytes: 90 }),
    remove: async (id) => {
      removed.push(id);
    },
    log: silent,
    observe: { removed: (n, reason) => counted.push([n, reason]), error() {} },
    now: () => t.now,
  });
  try {
    await gc.collect();
    assert.deepEqual(removed, [], 'not before the GC has run for the maximum age');
    t.now += 600_001;
    await gc.collect();
    assert.deepEqual(removed, ['old']);
    assert.deepEqual(
      counted.filter(([, r]) => r === 'age'),
      [[1, 'age']],
    );
  } finally {
    gc.stop();
  }
});

test('imageGCHighThresholdPercent 100 with no imageMaximumGCAge: no periodic image GC, even on a full disk (upstream StartGarbageCollection)', async () => {
  const policy = (high: number, maxAgeMs: number) => ({ highThresholdPercent: high, lowThresholdPercent: 80, minAgeMs: 0, maxAgeMs });
  const rows: [number, number, boolean][] = [
    [100, 0, true],
    [100, 600_000, false],
    [99, 0, false],
    [85, 0, false],
  ];
  for (const [high, maxAge, disabled] of rows) assert.equal(imageGCLoopDisabled(policy(high, maxAge)), disabled, `${high}% ${maxAge} ms`);

  // The loop itself: a full disk and an unused image, 30 s of timers; the eviction manager's reclaim still removes it.
  for (const [high, wantRemoved] of [
    [100, []],
    [85, ['unused']],
  ] as const) {
    mock.timers.enable({ apis: ['setTimeout'] });
    const removed: string[] = [];
    const infos: string[] = [];
    const gc = startImageGC({
      policy: policy(high, 0),
      images: async () => [img('unused', 10)].filter((i) => !removed.includes(i.id)),
      inUse: async () => new Set(),
      fs: () => ({ capacityBytes: 100, availableBytes: 0 }),
      remove: async (id) => {
        removed.push(id);
      },
      log: { info: (m: string) => infos.push(m), warn() {}, error() {}, v() {} } as never,
      observe: { removed() {}, error() {} },
    });
    try {
      for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
      mock.timers.tick(30_000);
      for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
      assert.deepEqual(removed, wantRemoved, `high threshold ${high}`);
      assert.equal(infos.includes('ImageGCHighThresholdPercent is set 100 and ImageMaximumGCAge is 0, Disable image GC'), high === 100);
      await gc.collect(true);
      assert.deepEqual(removed, ['unused'], 'reclaim for eviction');
    } finally {
      gc.stop();
      mock.timers.reset();
    }
  }
});

test('the first pass comes after the images found at start are noted: a slow first listing does not make them too young for a pass', async () => {
  mock.timers.enable({ apis: ['setTimeout'] });
  const t = { now: 0 };
  const removed: string[] = [];
  let firstListing: (() => void) | undefined;
  let listings = 0;
  const flush = async () => {
    for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
  };
  const gc = startImageGC({
    policy: { highThresholdPercent: 1, lowThresholdPercent: 0, minAgeMs: 5_000, maxAgeMs: 0 },
    images: () =>
      listings++ === 0
        ? new Promise<ImageRecord[]>((resolve) => {
            firstListing = () => resolve([img('unused', 10)]);
          })
        : Promise.resolve([img('unused', 10)].filter((i) => !removed.includes(i.id))),
    inUse: async () => new Set(),
    fs: () => ({ capacityBytes: 100, availableBytes: 50 }),
    remove: async (id) => {
      removed.push(id);
    },
    log: { info() {}, warn() {}, error() {}, v() {} } as never,
    observe: { removed() {}, error() {} },
    now: () => t.now,
  });
  try {
    await flush();
    // The runtime answers the first listing 30 s late: no pass meanwhile.
    t.now = 30_000;
    mock.timers.tick(30_000);
    await flush();
    assert.equal(listings, 1, 'no pass before the images are noted');
    firstListing!();
    await flush();
    // The first pass, 8-12 s later: the image is older than imageMinimumGCAge by then.
    t.now += 12_000;
    mock.timers.tick(12_000);
    await flush();
    assert.deepEqual(removed, ['unused']);
  } finally {
    gc.stop();
    mock.timers.reset();
  }
});
