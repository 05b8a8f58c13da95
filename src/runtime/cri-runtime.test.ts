import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RuntimeClient } from '../cri/runtime-client.ts';
import { RuntimeView } from './cri-runtime.ts';

/** A runtime whose lists answer when told to, with the containers it had when asked. */
function fakeCri() {
  const containers: { id: string; uid: string }[] = [];
  const pending: (() => void)[] = [];
  let lists = 0;
  const cri = {
    listPodSandbox: async () => ({ items: [] }),
    listContainers: () => {
      lists++;
      const had = [...containers];
      return new Promise((resolve) =>
        pending.push(() =>
          resolve({
            containers: had.map((c) => ({
              id: c.id,
              podSandboxId: 's',
              state: 'CONTAINER_RUNNING',
              createdAt: '1',
              metadata: { name: c.id, attempt: 0 },
              labels: { 'io.kubernetes.pod.uid': c.uid },
              annotations: {},
            })),
          }),
        ),
      );
    },
    containerStatus: async ({ containerId }: { containerId: string }) => ({
      status: { id: containerId, state: 'CONTAINER_RUNNING', createdAt: '1', startedAt: '2', finishedAt: '0', mounts: [], annotations: {} },
    }),
  } as unknown as RuntimeClient;
  const answer = async () => {
    while (!pending.length) await new Promise((r) => setImmediate(r));
    pending.shift()!();
    await new Promise((r) => setImmediate(r));
  };
  return { cri, containers, answer, lists: () => lists };
}

test('RuntimeView: overlapping reads share the list that follows the one in flight, which sees what came before each read', async () => {
  const f = fakeCri();
  const view = new RuntimeView(f.cri);
  const first = view.pod('a');
  // A container is started while the first list is in flight: reads from now on must see it.
  f.containers.push({ id: 'c1', uid: 'a' });
  const reads = Array.from({ length: 10 }, () => view.pod('a'));
  await f.answer();
  await f.answer();
  assert.equal((await first).containers.length, 0, 'the first list began before the container');
  for (const r of await Promise.all(reads))
    assert.deepEqual(
      (await r).containers.map((c) => c.id),
      ['c1'],
    );
  assert.equal(f.lists(), 2, 'eleven reads, two lists');
  const later = view.pod('b');
  await f.answer();
  assert.deepEqual(await later, { uid: 'b', sandboxes: [], containers: [] });
  assert.equal(f.lists(), 3, 'a read after the others are done lists again');
});
