import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { PodManager } from './pod-manager.ts';
import { PodWorkers, type PodSteps } from './workers.ts';
import { logger } from '../log/log.ts';

const pod = (uid: string, over: Partial<Pod['metadata']> = {}): Pod => ({
  metadata: { uid, name: 'web', namespace: 'ns', ...over },
  spec: { containers: [{ name: 'app' }] },
});
const staticPod = (uid: string) => pod(uid, { annotations: { 'kubernetes.io/config.source': 'file' } });
const deleting = (p: Pod): Pod => ({
  ...p,
  metadata: { ...p.metadata, deletionTimestamp: '2026-11-22T12:00:00Z', deletionGracePeriodSeconds: 1 },
});
const tick = () => new Promise((r) => setTimeout(r, 5));

/** Steps that record what ran; sync waits until released (or aborted). */
function recorder() {
  const log: string[] = [];
  const release = new Map<string, () => void>();
  const steps: PodSteps = {
    sync: (p, signal) =>
      new Promise((resolve, reject) => {
        log.push(`sync ${p.metadata!.uid}`);
        release.set(p.metadata!.uid!, () => resolve({ phase: 'Running', requeueAfterMs: 60_000 }));
        signal.addEventListener('abort', () => reject(signal.reason));
      }),
    async terminate(uid) {
      log.push(`terminate ${uid}`);
    },
    async finish(uid) {
      log.push(`finish ${uid}`);
    },
    admit: () => ({ admit: true }),
    reject() {},
  };
  return { log, release, steps };
}

test('pod workers: deleting a pod cancels its sync in flight and terminates it', async () => {
  const r = recorder();
  const pm = new PodManager();
  const w = new PodWorkers(pm, r.steps, logger('test'), { resyncMs: 60_000 });
  w.update('a', pod('a'));
  await tick();
  w.update('a', deleting(pod('a')));
  await tick();
  assert.deepEqual(r.log, ['sync a', 'terminate a', 'finish a']);
  w.stop();
});

test('pod workers: updates during a sync coalesce into one more sync of the newest pod', async () => {
  const r = recorder();
  const pm = new PodManager();
  const w = new PodWorkers(pm, r.steps, logger('test'), { resyncMs: 60_000 });
  w.update('a', pod('a'));
  await tick();
  w.update('a', pod('a', { labels: { v: '1' } }));
  w.update('a', pod('a', { labels: { v: '2' } }));
  r.release.get('a')!();
  await tick();
  assert.deepEqual(r.log, ['sync a', 'sync a']);
  assert.equal(pm.pods()[0]!.metadata!.labels!.v, '2');
  r.release.get('a')!();
  w.stop();
});

test("pod workers: a status change alone is kept for the next sync and starts one only on resync (upstream's HandlePodReconcile)", async () => {
  const r = recorder();
  const pm = new PodManager();
  const w = new PodWorkers(pm, r.steps, logger('test'), { resyncMs: 60_000 });
  w.update('a', pod('a'));
  await tick();
  r.release.get('a')!();
  await tick();
  w.reconcile('a', { ...pod('a'), status: { phase: 'Running' } }, false);
  await tick();
  assert.deepEqual(r.log, ['sync a']);
  assert.equal(pm.pods()[0]!.status!.phase, 'Running');
  w.reconcile('a', pod('a', { labels: { v: '1' } }), true);
  await tick();
  assert.deepEqual(r.log, ['sync a', 'sync a']);
  w.reconcile('gone', pod('gone'), true);
  await tick();
  assert.equal(pm.pods().length, 1);
  r.release.get('a')!();
  w.stop();
});

test("pod workers: a pod refused for its node affinity alone is admitted again against the Node read anew (upstream's generalFilter)", async () => {
  for (const [labelled, want] of [
    [true, ['sync a']],
    [false, ['reject a NodeAffinity']],
  ] as const) {
    const r = recorder();
    let nodeLabelled = false;
    const refused = { admit: false as const, reason: 'NodeAffinity', message: 'no', refetchNode: true };
    const steps: PodSteps = {
      ...r.steps,
      admit: () => (nodeLabelled ? { admit: true } : refused),
      refreshNode: async () => {
        nodeLabelled = labelled;
      },
      reject: (p, why) => r.log.push(`reject ${p.metadata!.uid} ${why.reason}`),
    };
    const pm = new PodManager();
    const w = new PodWorkers(pm, steps, logger('test'), { resyncMs: 60_000 });
    w.update('a', pod('a'));
    await tick();
    assert.deepEqual(r.log, want, labelled ? 'the label was there' : 'still refused');
    r.release.get('a')?.();
    w.stop();
  }
});

test('pod workers: a pod refused for another reason, or for node affinity and another, is not admitted again', async () => {
  for (const refused of [
    { admit: false as const, reason: 'OutOfcpu', message: 'no' },
    { admit: false as const, reason: 'NodeAffinity', message: 'no' },
  ]) {
    const r = recorder();
    let refreshed = 0;
    const steps: PodSteps = {
      ...r.steps,
      admit: () => refused,
      refreshNode: async () => {
        refreshed++;
      },
      reject: (p, why) => r.log.push(`reject ${p.metadata!.uid} ${why.reason}`),
    };
    const pm = new PodManager();
    const w = new PodWorkers(pm, steps, logger('test'), { resyncMs: 60_000 });
    w.update('a', pod('a'));
    await tick();
    assert.deepEqual(r.log, [`reject a ${refused.reason}`]);
    assert.equal(refreshed, 0);
    w.stop();
  }
});

test("pod workers: admission counts a pod being deleted, not one its source removed while it is still stopped (upstream's GetActivePods)", async () => {
  const r = recorder();
  let held: () => void = () => {};
  const steps: PodSteps = {
    ...r.steps,
    terminate: (uid) => {
      r.log.push(`terminate ${uid}`);
      return new Promise<void>((resolve) => {
        held = resolve;
      });
    },
  };
  const pm = new PodManager();
  const w = new PodWorkers(pm, steps, logger('test'), { resyncMs: 60_000 });
  const active = () => pm.active().map((p) => p.metadata!.uid);
  w.update('a', pod('a'));
  w.update('b', pod('b'));
  await tick();
  w.update('a', deleting(pod('a')));
  await tick();
  assert.deepEqual(r.log, ['sync a', 'sync b', 'terminate a']);
  assert.deepEqual(active(), ['a', 'b'], 'still in the apiserver, still stopping: counted');
  w.update('a', undefined);
  assert.deepEqual(active(), ['b'], 'removed from its source, still stopping: not counted');
  held();
  r.release.get('b')!();
  w.stop();
});

test('pod workers: a static pod waits until the older one with its full name has terminated', async () => {
  const r = recorder();
  const pm = new PodManager();
  const w = new PodWorkers(pm, r.steps, logger('test'), { resyncMs: 60_000 });
  w.update('old', staticPod('old'));
  await tick();
  w.update('new', staticPod('new'));
  await tick();
  assert.deepEqual(r.log, ['sync old']);
  w.update('old', undefined); // the file changed: the old pod goes, then the new one starts
  await tick();
  assert.ok(r.log.includes('sync new') && r.log.indexOf('sync new') > r.log.indexOf('terminate old'), r.log.join(', '));
  r.release.get('new')!();
  w.stop();
});

test('pod workers: a static pod removed and re-added is terminated, then started afresh without a clean-up (upstream restartRequested)', async () => {
  const r = recorder();
  const stopped: string[] = [];
  const restarted: boolean[] = [];
  const pm = new PodManager();
  const w = new PodWorkers(pm, r.steps, logger('test'), {
    resyncMs: 60_000,
    stopped: (p) => stopped.push(p.metadata!.uid!),
    observe: { restarted: (isStatic) => restarted.push(isStatic) },
  });
  w.update('s', staticPod('s'));
  await tick();
  assert.equal(pm.staticPodActive('ns/web'), true);
  assert.equal(pm.staticPodActive('ns/web', 's'), false);
  w.update('s', undefined); // the file went ...
  w.update('s', staticPod('s')); // ... and came back with the same content (same UID)
  await tick();
  assert.deepEqual(r.log, ['sync s', 'terminate s', 'sync s']);
  assert.deepEqual(stopped, ['s']);
  assert.deepEqual(restarted, [true], 'counted as a static pod restarted (kubelet_restarted_pods_total)');
  assert.equal(pm.staticPodActive('ns/web'), true);
  r.release.get('s')!();
  w.stop();
});

test('pod workers: kill() cancels the sync in flight, terminates with its grace period and final status, and resolves once stopped', async () => {
  const r = recorder();
  const seen: unknown[] = [];
  r.steps.terminate = async (uid, _pod, grace, reason, kill) => {
    r.log.push(`terminate ${uid}`);
    seen.push([grace, reason, kill?.message]);
  };
  const pm = new PodManager();
  const w = new PodWorkers(pm, r.steps, logger('test'), { resyncMs: 60_000 });
  w.update('a', pod('a'));
  await tick();
  assert.deepEqual(
    pm.running().map((p) => p.metadata!.uid),
    ['a'],
  );
  const done = await w.kill('a', { gracePeriodSeconds: 1, reason: 'Evicted', message: 'low on memory' });
  assert.equal(done, true);
  assert.deepEqual(r.log, ['sync a', 'terminate a']);
  assert.deepEqual(seen, [[1, 'Evicted', 'low on memory']]);
  assert.deepEqual(pm.running(), [], 'a killed pod is no longer running');
  assert.equal(
    await w.kill('a', { gracePeriodSeconds: 1, reason: 'Evicted', message: 'again' }),
    false,
    'a pod that is not running cannot be killed',
  );
  w.stop();
});

test('pod workers: report upstream operation types, and time a pod from first sight to Running once', async () => {
  const r = recorder();
  const ops: string[] = [];
  const started: number[] = [];
  const pm = new PodManager();
  const w = new PodWorkers(pm, r.steps, logger('test'), {
    resyncMs: 60_000,
    observe: { step: (op) => ops.push(op), podStarted: (s) => started.push(s) },
  });
  w.update('a', pod('a'));
  await tick();
  r.release.get('a')!();
  await tick();
  w.update('a', { ...pod('a'), metadata: { ...pod('a').metadata, labels: { x: 'y' } } });
  await tick();
  r.release.get('a')!();
  await tick();
  w.wake('a');
  await tick();
  r.release.get('a')!();
  await tick();
  // A pod already Running when first seen (a kubelet restart) is not timed.
  w.update('b', { ...pod('b'), status: { phase: 'Running' } });
  await tick();
  r.release.get('b')!();
  await tick();
  w.update('a', deleting(pod('a')));
  await tick();
  assert.deepEqual(ops, ['create', 'update', 'sync', 'create', 'kill', 'terminated']);
  assert.equal(started.length, 1);
  assert.ok(started[0]! >= 0 && started[0]! < 5, `${started[0]} s`);
  assert.deepEqual(
    pm.snapshot().map((s) => [s.pod.metadata!.uid, s.state, s.desired]),
    [['b', 'syncing', true]],
  );
  w.stop();
});

test("pod workers: each admitted pod's containers counted once, when its worker lets it start; a refused pod not at all", async () => {
  const r = recorder();
  const counts: number[] = [];
  const pm = new PodManager();
  const steps: PodSteps = {
    ...r.steps,
    admit: (p) => (p.metadata!.uid === 'no' ? { admit: false, reason: 'OutOfcpu', message: 'no' } : { admit: true }),
  };
  const w = new PodWorkers(pm, steps, logger('test'), { resyncMs: 60_000, observe: { started: (n) => counts.push(n) } });
  const three: Pod = { ...pod('a'), spec: { containers: [{ name: 'x' }, { name: 'y' }, { name: 'z' }], initContainers: [{ name: 'i' }] } };
  w.update('a', three);
  w.update('no', pod('no'));
  await tick();
  r.release.get('a')!();
  await tick();
  w.wake('a');
  await tick();
  r.release.get('a')!();
  await tick();
  assert.deepEqual(counts, [3], 'the regular containers of the pod, once; none for the refused one');
  w.stop();
});

test("pod workers: a shorter grace period cancels the termination in flight, which begins again with it (upstream's calculateEffectiveGracePeriod)", async () => {
  const r = recorder();
  const graces: number[] = [];
  let held: { signal: AbortSignal; done: () => void } | undefined;
  r.steps.terminate = (_uid, _pod, grace, _reason, _kill, _last, signal) => {
    graces.push(grace);
    return new Promise<void>((resolve, reject) => {
      held = { signal: signal!, done: resolve };
      signal!.addEventListener('abort', () => reject(signal!.reason));
    });
  };
  const pm = new PodManager();
  const w = new PodWorkers(pm, r.steps, logger('test'), { resyncMs: 60_000 });
  const graceful = (p: Pod, seconds: number): Pod => ({
    ...deleting(p),
    metadata: { ...deleting(p).metadata, deletionGracePeriodSeconds: seconds },
  });
  w.update('a', pod('a'));
  await tick();
  r.release.get('a')!();
  await tick();
  w.update('a', graceful(pod('a'), 60));
  await tick();
  assert.deepEqual(graces, [60]);
  // The same or a longer grace period changes nothing.
  w.update('a', graceful(pod('a'), 90));
  await tick();
  assert.equal(held!.signal.aborted, false);
  // kubectl delete --grace-period=1: the kill begins again with 1 s.
  w.update('a', graceful(pod('a'), 1));
  await tick();
  assert.deepEqual(graces, [60, 1]);
  held!.done();
  await tick();
  assert.ok(r.log.includes('finish a'), 'terminated, then finished');

  // An eviction's kill (30 s) shortened by a deletion (1 s) the same way.
  w.update('b', pod('b'));
  await tick();
  r.release.get('b')!();
  await tick();
  void w.kill('b', { gracePeriodSeconds: 30, reason: 'Evicted', message: 'low on memory' });
  await tick();
  w.update('b', graceful(pod('b'), 1));
  await tick();
  assert.deepEqual(graces.slice(2), [30, 1]);
  held!.done();
  w.stop();
});
