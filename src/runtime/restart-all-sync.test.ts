// RestartAllContainers end to end over the in-memory runtime: the syncs as the pod worker runs
// them (each with the status the last one left, as src/pods/steps.ts), and what the pod shows
// after each, against what upstream's e2e "Pod Extended (RestartAllContainers)" checks: every
// container restarted once, with a last termination, and no second round.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import type { Container, ContainerStatus, Pod, PodStatus } from 'kubernetes-types/core/v1.js';
import { fakeSyncer } from './testing.ts';
import { podLogDir } from './pod-config.ts';
import { generatePodStatus } from '../status/pod-status.ts';
import type { SyncResult } from './sync.ts';

const UID = 'u1';
const rule = [{ action: 'RestartAllContainers', exitCodes: { operator: 'In', values: [42] } }];
const init: Container = { name: 'init', image: 'busybox' };
const sidecar: Container = { name: 'sidecar', image: 'busybox', restartPolicy: 'Always' };
const source = { name: 'source', image: 'busybox', restartPolicy: 'Never', restartPolicyRules: rule } as Container;
const regular: Container = { name: 'regular', image: 'busybox' };
const pod: Pod = {
  metadata: { name: 'web', namespace: 'shop', uid: UID },
  spec: { restartPolicy: 'Never', initContainers: [init, sidecar], containers: [source, regular] },
};

function harness() {
  const h = fakeSyncer();
  let last: PodStatus | undefined;
  const statuses: PodStatus[] = [];
  const sync = async (): Promise<SyncResult> => {
    h.runtime.calls.length = 0;
    const r = await h.syncer.syncPod(pod, undefined, undefined, last);
    last = generatePodStatus({ ...pod, status: last }, r.runtime, {
      nodeIPs: ['172.30.0.2'],
      now: new Date(),
      waiting: r.waiting,
      terminated: false,
    });
    statuses.push(last);
    return r;
  };
  return { ...h, sync, last: () => last!, statuses };
}
// Init containers in the spec's order, app containers by name (upstream's SortedContainerStatuses).
const all = (s: PodStatus) => [...(s.initContainerStatuses ?? []), ...(s.containerStatuses ?? [])];
const byName = (s: PodStatus, n: string) => all(s).find((c) => c.name === n)!;
const condition = (s: PodStatus) => s.conditions?.find((c) => c.type === 'AllContainersRestarting');
const brief = (c: ContainerStatus) =>
  `${c.name} ${Object.keys(c.state ?? {})[0]} restarts=${c.restartCount} last=${c.lastState?.terminated?.reason ?? '-'}`;

test('RestartAllContainers: a regular container exits 42; all are killed, removed and started again once', async () => {
  const h = harness();
  // The pod runs: init done, sidecar and both app containers started, each having logged 0.log.
  const sb = h.runtime.addSandbox(UID, { id: 'sb1' });
  h.runtime.addContainer(sb, init, { id: 'i1', phase: 'exited', exitCode: 0 });
  h.runtime.addContainer(sb, sidecar, { id: 's1' });
  h.runtime.addContainer(sb, source, { id: 'src1' });
  h.runtime.addContainer(sb, regular, { id: 'r1' });
  for (const c of ['init', 'sidecar', 'source', 'regular']) {
    mkdirSync(`${podLogDir(pod, h.podLogsDir)}/${c}`, { recursive: true });
    writeFileSync(`${podLogDir(pod, h.podLogsDir)}/${c}/0.log`, '');
  }
  let r = await h.sync();
  assert.deepEqual(h.runtime.trace(), [], 'running as it should');
  assert.equal(condition(h.last())?.status, 'False');

  // The source exits 42: the first sync kills and removes every instance, the source last.
  h.runtime.exit('src1', 42);
  r = await h.sync();
  assert.deepEqual(h.runtime.trace(), [
    'StopContainer r1 timeout=2',
    'RemoveContainer r1',
    'RemoveContainer i1',
    'StopContainer s1 timeout=2',
    'RemoveContainer s1',
    'RemoveContainer src1',
  ]);
  assert.equal(r.requeueAfterMs, 0, 'sync again at once');
  assert.deepEqual(h.events.slice(-2), ['Normal Killing: killing', 'Normal Killing: killing']);
  assert.deepEqual(condition(h.last()), {
    type: 'AllContainersRestarting',
    status: 'True',
    reason: 'RestartAllContainersStarted',
    message: 'container exited with restart policy rule',
    lastTransitionTime: condition(h.last())!.lastTransitionTime,
  });
  assert.equal(h.last().phase, 'Running', 'the source restarts, by its rule');
  assert.equal(byName(h.last(), 'source').state?.terminated?.exitCode, 42);

  // The next one starts initialization over; the pod shows every container removed and restarted.
  r = await h.sync();
  assert.deepEqual(h.runtime.trace(), ['CreateContainer init attempt=1 in sb1', 'StartContainer c1']);
  assert.equal(r.requeueAfterMs, 0);
  assert.equal(condition(h.last())?.status, 'False');
  assert.deepEqual(all(h.last()).map(brief), [
    'init waiting restarts=1 last=RestartingAllContainers',
    'sidecar waiting restarts=1 last=RestartingAllContainers',
    'regular waiting restarts=1 last=RestartingAllContainers',
    'source waiting restarts=1 last=RestartingAllContainers',
  ]);
  assert.equal(h.last().phase, 'Running');
  assert.equal(h.last().conditions?.find((c) => c.type === 'Initialized')?.status, 'True', 'once initialized, always');

  // Then as any pod starting: init, sidecar, app containers, counting on from their logs.
  h.runtime.exit(h.runtime.container('init')!.id, 0);
  await h.sync();
  assert.deepEqual(h.runtime.trace(), ['CreateContainer sidecar attempt=1 in sb1', 'StartContainer c2']);
  await h.sync();
  assert.deepEqual(h.runtime.trace(), [
    'CreateContainer source attempt=1 in sb1',
    'StartContainer c3',
    'CreateContainer regular attempt=1 in sb1',
    'StartContainer c4',
  ]);
  await h.sync();
  assert.deepEqual(h.runtime.trace(), [], 'no second round');
  assert.deepEqual(all(h.last()).map(brief), [
    'init terminated restarts=1 last=RestartingAllContainers',
    'sidecar running restarts=1 last=RestartingAllContainers',
    'regular running restarts=1 last=RestartingAllContainers',
    'source running restarts=1 last=RestartingAllContainers',
  ]);
  assert.equal(condition(h.last())?.status, 'False');
  assert.equal(h.last().phase, 'Running');
});

test('RestartAllContainers: a container restarted before keeps counting', async () => {
  const h = harness();
  const p = { ...pod, spec: { restartPolicy: 'Always', containers: [{ ...source, restartPolicy: 'Always' } as Container, regular] } };
  const sb = h.runtime.addSandbox(UID, { id: 'sb1' });
  h.runtime.addContainer(sb, source, { id: 'old', phase: 'exited', exitCode: 1 });
  h.runtime.addContainer(sb, source, { id: 'src', attempt: 1, phase: 'exited', exitCode: 42 });
  h.runtime.addContainer(sb, regular, { id: 'r1' });
  const r = await h.syncer.syncPod(p, undefined, undefined, undefined);
  // Every instance goes, in spec order; the one whose exit triggered it last.
  assert.deepEqual(h.runtime.trace(), ['RemoveContainer old', 'StopContainer r1 timeout=2', 'RemoveContainer r1', 'RemoveContainer src']);
  const a = generatePodStatus(p, r.runtime, { nodeIPs: ['n'], now: new Date(), waiting: r.waiting, terminated: false });
  assert.equal(byName(a, 'source').restartCount, 1);
  h.runtime.calls.length = 0;
  const r2 = await h.syncer.syncPod(p, undefined, undefined, a);
  const b = generatePodStatus({ ...p, status: a }, r2.runtime, { nodeIPs: ['n'], now: new Date(), waiting: r2.waiting, terminated: false });
  assert.deepEqual(h.runtime.trace(), [
    'CreateContainer source attempt=0 in sb1',
    'StartContainer c1',
    'CreateContainer regular attempt=0 in sb1',
    'StartContainer c2',
  ]);
  assert.deepEqual(all(b).map(brief), [
    'regular waiting restarts=1 last=RestartingAllContainers',
    'source waiting restarts=2 last=RestartingAllContainers',
  ]);
  const r3 = await h.syncer.syncPod(p, undefined, undefined, b);
  const c = generatePodStatus({ ...p, status: b }, r3.runtime, { nodeIPs: ['n'], now: new Date(), waiting: r3.waiting, terminated: false });
  assert.deepEqual(all(c).map(brief), [
    'regular running restarts=1 last=RestartingAllContainers',
    'source running restarts=2 last=RestartingAllContainers',
  ]);
});

test('RestartAllContainers: an init container exits 42; init containers and sidecars run again, then the app', async () => {
  const h = harness();
  const sourceInit = { name: 'source-init', image: 'busybox', restartPolicy: 'Never', restartPolicyRules: rule } as Container;
  const p: Pod = { ...pod, spec: { restartPolicy: 'Never', initContainers: [sidecar, init, sourceInit], containers: [regular] } };
  const sb = h.runtime.addSandbox(UID, { id: 'sb1' });
  h.runtime.addContainer(sb, sidecar, { id: 's1' });
  h.runtime.addContainer(sb, init, { id: 'i1', phase: 'exited', exitCode: 0 });
  h.runtime.addContainer(sb, sourceInit, { id: 'si1', phase: 'exited', exitCode: 42 });
  const step = async (last?: PodStatus) => {
    h.runtime.calls.length = 0;
    const r = await h.syncer.syncPod(p, undefined, undefined, last);
    return generatePodStatus({ ...p, status: last }, r.runtime, { nodeIPs: ['n'], now: new Date(), waiting: r.waiting, terminated: false });
  };
  const a = await step();
  assert.deepEqual(h.runtime.trace(), ['StopContainer s1 timeout=2', 'RemoveContainer s1', 'RemoveContainer i1', 'RemoveContainer si1']);
  assert.equal(a.phase, 'Pending', 'not Failed: its rule restarts it');
  assert.equal(condition(a)?.status, 'True');
  const b = await step(a);
  assert.deepEqual(h.runtime.trace(), ['CreateContainer sidecar attempt=0 in sb1', 'StartContainer c1']);
  assert.deepEqual(all(b).map(brief), [
    'sidecar waiting restarts=1 last=RestartingAllContainers',
    'init waiting restarts=1 last=RestartingAllContainers',
    'source-init waiting restarts=1 last=RestartingAllContainers',
    'regular waiting restarts=0 last=-',
  ]);
  assert.equal(b.phase, 'Pending');
  assert.equal(condition(b)?.status, 'False');
  const c = await step(b);
  assert.deepEqual(h.runtime.trace(), ['CreateContainer init attempt=0 in sb1', 'StartContainer c2']);
  h.runtime.exit(h.runtime.container('init')!.id, 0);
  const c2 = await step(c);
  assert.deepEqual(h.runtime.trace(), ['CreateContainer source-init attempt=0 in sb1', 'StartContainer c3']);
  h.runtime.exit(h.runtime.container('source-init')!.id, 0);
  const c3 = await step(c2);
  assert.deepEqual(h.runtime.trace(), ['CreateContainer regular attempt=0 in sb1', 'StartContainer c4']);
  const d = await step(c3);
  assert.deepEqual(h.runtime.trace(), [], 'no second round');
  assert.deepEqual(all(d).map(brief), [
    'sidecar running restarts=1 last=RestartingAllContainers',
    'init terminated restarts=1 last=RestartingAllContainers',
    'source-init terminated restarts=1 last=RestartingAllContainers',
    'regular running restarts=0 last=-',
  ]);
  assert.equal(d.phase, 'Running');
});
