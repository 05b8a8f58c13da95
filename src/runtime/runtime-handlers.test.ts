import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RuntimeHandlerInfo } from './recursive-read-only.ts';
import { RuntimeHandlers } from './runtime-handlers.ts';

const crun: RuntimeHandlerInfo = { name: 'crun', features: { recursiveReadOnlyMounts: true } };
const runc: RuntimeHandlerInfo = { name: '', features: { recursiveReadOnlyMounts: false } };

test('RuntimeHandlers: Status read once before any probe, then what the probes set; a failed read is tried again', async () => {
  const answers: (RuntimeHandlerInfo[] | Error)[] = [new Error('runtime down'), [runc]];
  let reads = 0;
  const h = new RuntimeHandlers(async () => {
    const a = answers[reads++]!;
    if (a instanceof Error) throw a;
    return { runtimeHandlers: a };
  });
  await assert.rejects(h.list(), /runtime down/);
  assert.deepEqual(await h.list(), [runc]);
  assert.deepEqual(await h.list(), [runc]);
  assert.equal(reads, 2, 'no Status call once the handlers are known');
  h.set([runc, crun]);
  assert.deepEqual(await h.list(), [runc, crun]);
  h.set(null);
  assert.deepEqual(await h.list(), [], 'a runtime that lists none (containerd 1.6)');
  assert.equal(reads, 2);
});
