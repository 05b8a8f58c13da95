import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { linkSync, lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate } from 'node:timers/promises';
import type { DirUsage } from './sample.ts';
import { volumeStatsRefreshMs, volumeStatsSource, walkUsage } from './volumes.ts';

function tree(): string {
  const root = mkdtempSync(join(tmpdir(), 'volstats-'));
  writeFileSync(join(root, 'a'), Buffer.alloc(10_000, 1));
  linkSync(join(root, 'a'), join(root, 'a-link')); // a second name for a: counted once
  symlinkSync('/etc', join(root, 'etc')); // not followed
  mkdirSync(join(root, 'nested/deeper'), { recursive: true });
  writeFileSync(join(root, 'nested/b'), Buffer.alloc(70_000, 2));
  writeFileSync(join(root, 'nested/deeper/c'), '');
  return root;
}

const blocks = (...paths: string[]) => paths.reduce((n, p) => n + lstatSync(p).blocks * 512, 0);

/** GNU du's figures, when it is there to ask. */
function du(path: string): DirUsage | undefined {
  try {
    const bytes = Number(execFileSync('du', ['-s', '-B1', path], { encoding: 'utf8' }).split('\t')[0]);
    const inodes = Number(execFileSync('du', ['-s', '--inodes', path], { encoding: 'utf8' }).split('\t')[0]);
    return { usedBytes: bytes, inodesUsed: inodes };
  } catch {
    return undefined;
  }
}

test('walkUsage: blocks and inodes of a tree, itself included, a hard link once, symlinks not followed', async () => {
  const root = tree();
  try {
    const got = await walkUsage(root);
    const p = (x: string) => join(root, x);
    // root, a (and its link), etc, nested, nested/b, nested/deeper, nested/deeper/c.
    assert.deepEqual(got, {
      usedBytes: blocks(root, p('a'), p('etc'), p('nested'), p('nested/b'), p('nested/deeper'), p('nested/deeper/c')),
      inodesUsed: 7,
    });
    assert.ok(got!.usedBytes >= 80_000, "the files' blocks are in");
    const gnu = du(root);
    if (gnu) assert.deepEqual(got, gnu, 'as du -s counts');
    // A single file: its own blocks.
    assert.deepEqual(await walkUsage(p('nested/b')), { usedBytes: blocks(p('nested/b')), inodesUsed: 1 });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('walkUsage: yields between slices; what vanishes mid-walk is skipped, a vanished root is undefined', async () => {
  const root = tree();
  try {
    let pauses = 0;
    await walkUsage(root, {
      slice: 2,
      pause: async () => {
        pauses++;
      },
    });
    assert.equal(pauses, 3, '7 entries below the root, a pause every 2');

    // The nested tree goes while the walk is under way.
    const half = await walkUsage(root, {
      slice: 1,
      pause: async () => {
        rmSync(join(root, 'nested'), { recursive: true, force: true });
      },
    });
    assert.ok(half && half.inodesUsed >= 2 && half.inodesUsed < 7, `counted what was there: ${JSON.stringify(half)}`);

    // The whole volume goes (pod torn down) mid-walk.
    const t2 = tree();
    const gone = await walkUsage(t2, {
      slice: 1,
      pause: async () => {
        rmSync(t2, { recursive: true, force: true });
      },
    });
    assert.ok(gone && gone.inodesUsed >= 1);
    assert.equal(await walkUsage(t2), undefined);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("volumeStatsSource.list: the pod's volume directories of the plugins measured with du", () => {
  const root = mkdtempSync(join(tmpdir(), 'volroot-'));
  try {
    const vols = join(root, 'pods/u1/volumes');
    for (const d of [
      'kubernetes.io~empty-dir/scratch',
      'kubernetes.io~empty-dir/cache',
      'kubernetes.io~configmap/config',
      'kubernetes.io~csi/pv/mount',
    ])
      mkdirSync(join(vols, d), { recursive: true });
    writeFileSync(join(vols, 'kubernetes.io~empty-dir/stray-file'), '');
    const src = volumeStatsSource({ rootDir: root });
    assert.deepEqual(
      src.list('u1').map((v) => [v.plugin, v.name, v.path, v.ownFs]),
      [
        ['kubernetes.io~configmap', 'config', join(vols, 'kubernetes.io~configmap/config'), false],
        ['kubernetes.io~empty-dir', 'cache', join(vols, 'kubernetes.io~empty-dir/cache'), false],
        ['kubernetes.io~empty-dir', 'scratch', join(vols, 'kubernetes.io~empty-dir/scratch'), false],
      ],
    );
    assert.deepEqual(src.list('u2'), []);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('volumeStatsSource: walks in the background, one at a time, at most every refreshMs; forgets gone pods', async () => {
  let clock = 1000,
    running = 0,
    most = 0;
  const walked: string[] = [];
  const figures = new Map<string, DirUsage | Error | undefined>([
    ['/v/a', { usedBytes: 10, inodesUsed: 1 }],
    ['/v/b', { usedBytes: 20, inodesUsed: 2 }],
  ]);
  const errors: string[] = [];
  const sources: string[] = [];
  const src = volumeStatsSource({
    rootDir: '/r',
    refreshMs: 30_000,
    now: () => clock,
    walk: async (p) => {
      walked.push(p);
      running++;
      most = Math.max(most, running);
      // A turn of the loop, not a timer: the test does not depend on the machine's load.
      await setImmediate();
      running--;
      const f = figures.get(p);
      if (f instanceof Error) throw f;
      return f;
    },
    onError: (p) => errors.push(p),
    observe: (source) => sources.push(source),
  });
  // Enough turns for every queued walk (each takes two: the drain's yield and the walk's).
  const settle = async () => {
    for (let i = 0; i < 20; i++) await setImmediate();
  };

  assert.equal(src.usage('/v/a'), undefined, 'nothing before the first walk');
  assert.equal(src.usage('/v/b'), undefined);
  assert.equal(src.usage('/v/a'), undefined, 'queued once');
  await settle();
  assert.deepEqual(walked, ['/v/a', '/v/b']);
  assert.equal(most, 1, 'one walk at a time');
  assert.deepEqual(sources, ['du', 'du'], 'each walk timed as du');
  assert.deepEqual(src.usage('/v/a'), { usedBytes: 10, inodesUsed: 1, timeMs: 1000 });

  clock += 29_000;
  figures.set('/v/a', { usedBytes: 99, inodesUsed: 9 });
  src.usage('/v/a');
  await settle();
  assert.equal(walked.length, 2, 'not due yet');

  clock += 2_000;
  assert.deepEqual(src.usage('/v/a'), { usedBytes: 10, inodesUsed: 1, timeMs: 1000 }, 'the last figures while the next walk runs');
  await settle();
  assert.deepEqual(src.usage('/v/a'), { usedBytes: 99, inodesUsed: 9, timeMs: 32_000 });

  // A failed walk leaves no figures (as upstream) and says so; a vanished directory is forgotten.
  clock += 31_000;
  figures.set('/v/a', new Error('EACCES'));
  figures.set('/v/b', undefined);
  src.usage('/v/a');
  src.usage('/v/b');
  await settle();
  assert.deepEqual(errors, ['/v/a']);
  assert.equal(src.usage('/v/a'), undefined);
  const before = walked.length;
  assert.equal(src.usage('/v/b'), undefined);
  await settle();
  assert.equal(walked.length, before + 1, 'a forgotten directory is walked afresh when asked for again');

  // retain: the figures of directories no longer listed go.
  figures.set('/v/b', { usedBytes: 20, inodesUsed: 2 });
  clock += 31_000;
  src.usage('/v/b');
  await settle();
  assert.ok(src.usage('/v/b'));
  src.retain(new Set(['/v/a']));
  assert.equal(src.usage('/v/b'), undefined);
});

test('volumeStatsRefreshMs: half of volumeStatsAggPeriod; none when it is 0 or negative (fsResourceAnalyzer.Start)', () => {
  const rows: [number, number | undefined][] = [
    [60_000, 30_000],
    [10_000, 5_000],
    [0, undefined],
    [-1_000, undefined],
  ];
  for (const [period, want] of rows) assert.equal(volumeStatsRefreshMs(period), want, String(period));
});
