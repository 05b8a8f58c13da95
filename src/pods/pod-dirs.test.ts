import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { withPodDirs } from './pod-dirs.ts';
import type { PodSteps } from './workers.ts';

test('withPodDirs: the pod dir exists before the sync runs; the sync gets every argument; an unsafe UID makes none', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'kts-pods-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const seen: unknown[] = [];
  const steps = {
    sync: async (...args: unknown[]) => {
      seen.push(existsSync(join(root, 'pods', 'u1')), ...args.slice(1));
      return {};
    },
  } as unknown as PodSteps;
  const signal = new AbortController().signal;
  await withPodDirs(steps, root).sync({ metadata: { uid: 'u1' } } as Pod, signal);
  assert.deepEqual(seen, [true, signal]);
  await withPodDirs(steps, root).sync({ metadata: { uid: 'a/b' } } as Pod, signal);
  assert.equal(existsSync(join(root, 'pods', 'a')), false, 'a UID that is not one path segment gets no dir');
});
