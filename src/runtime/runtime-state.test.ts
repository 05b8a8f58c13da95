import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RuntimeHandlerInfo } from './recursive-read-only.ts';
import { RuntimeState, type RuntimeStatusAnswer } from './runtime-state.ts';

const crun: RuntimeHandlerInfo = { name: 'crun', features: { recursiveReadOnlyMounts: true } };
const runc: RuntimeHandlerInfo = { name: '', features: { recursiveReadOnlyMounts: false } };

test('RuntimeState handlers: Status read once before any probe, then what the probes set; a failed read is tried again', async () => {
  const answers: (RuntimeHandlerInfo[] | Error)[] = [new Error('runtime down'), [runc]];
  let reads = 0;
  const h = new RuntimeState(async () => {
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

const answer = (ready: boolean): RuntimeStatusAnswer => ({
  status: {
    conditions: [
      {
        type: 'NetworkReady',
        status: ready,
        reason: ready ? '' : 'NetworkPluginNotReady',
        message: ready ? '' : 'cni plugin not initialized',
      },
    ],
  },
});
const NOT_READY = 'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:cni plugin not initialized';

test('RuntimeState network: ready as the last probe saw it is no Status call; not ready, or not probed yet, asks Status again', async () => {
  const answers: RuntimeStatusAnswer[] = [answer(false), answer(true)];
  let reads = 0;
  const s = new RuntimeState(async () => answers[reads++]!);
  assert.equal(await s.networkError(), NOT_READY, 'before any probe: its own read');
  assert.equal(await s.networkError(), undefined, 'not ready last time: read again, now ready');
  assert.equal(await s.networkError(), undefined);
  assert.equal(reads, 2, 'ready: no more reads');
  s.probed(answer(false), false);
  assert.equal(s.known(), undefined, "a runtime that is not ready lists no handlers (updateRuntimeUp's order)");
  answers.push(answer(false));
  assert.equal(await s.networkError(), NOT_READY, 'but its answer counts for the network: not ready, so Status is asked');
  assert.equal(reads, 3);
  s.probed(answer(true), true);
  assert.deepEqual(s.known(), []);
  assert.equal(await s.networkError(), undefined, 'a probe that saw it ready');
  assert.equal(reads, 3);
});
