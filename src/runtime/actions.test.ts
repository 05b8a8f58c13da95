import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { computePodActions, type PodActions } from './actions.ts';
import { containerHash } from './hash.ts';
import type { ContainerState, PodRuntimeStatus, SandboxState } from './types.ts';

const app = { name: 'app', image: 'busybox:1.36' };
const side = { name: 'side', image: 'busybox:1.36' };
const pod = (restartPolicy = 'Always', containers = [app]): Pod => ({ metadata: { uid: 'u' }, spec: { restartPolicy, containers } });
const sb = (over: Partial<SandboxState> = {}): SandboxState => ({ id: 's1', attempt: 0, ready: true, ip: '10.88.0.5', createdAtNs: '1', ...over });
const ctr = (over: Partial<ContainerState> = {}): ContainerState => ({
  id: 'c1', sandboxId: 's1', name: 'app', attempt: 0, phase: 'running', image: 'busybox:1.36', imageRef: 'sha256:x', hash: containerHash(app), createdAtNs: '1', ...over,
});
const status = (sandboxes: SandboxState[], containers: ContainerState[] = []): PodRuntimeStatus => ({ uid: 'u', sandboxes, containers });
const none = { killPod: false, createSandbox: false, sandboxId: 's1', sandboxAttempt: 0, containersToStart: [], containersToKill: [] };

const cases: [string, Pod, PodRuntimeStatus, Partial<PodActions>][] = [
  ['new pod: sandbox and every container', pod('Always', [app, side]), status([]),
    { createSandbox: true, sandboxId: undefined, containersToStart: [{ name: 'app', reason: 'not started yet' }, { name: 'side', reason: 'not started yet' }] }],
  ['everything running: nothing to do', pod(), status([sb()], [ctr()]), {}],
  ['dead sandbox: kill and recreate with the next attempt', pod(), status([sb({ ready: false, attempt: 2 })], [ctr()]),
    { killPod: true, createSandbox: true, sandboxId: undefined, sandboxAttempt: 3, containersToStart: [{ name: 'app', reason: 'pod sandbox changed' }] }],
  ['the next attempt is above every existing one (their names stay reserved)', pod(), status([sb({ ready: false, attempt: 2 }), sb({ id: 's0', ready: false, attempt: 5 })], [ctr()]),
    { killPod: true, createSandbox: true, sandboxId: undefined, sandboxAttempt: 6, containersToStart: [{ name: 'app', reason: 'pod sandbox changed' }] }],
  ['sandbox without IP is not usable', pod(), status([sb({ ip: undefined })], [ctr()]),
    { killPod: true, createSandbox: true, sandboxId: undefined, sandboxAttempt: 1, containersToStart: [{ name: 'app', reason: 'pod sandbox changed' }] }],
  ['finished Never pod with dead sandbox stays finished', pod('Never'), status([sb({ ready: false })], [ctr({ phase: 'exited', exitCode: 1 })]), {}],
  ['Always restarts an exited container', pod('Always'), status([sb()], [ctr({ phase: 'exited', exitCode: 0 })]),
    { containersToStart: [{ name: 'app', reason: 'restart' }] }],
  ['OnFailure restarts a failure', pod('OnFailure'), status([sb()], [ctr({ phase: 'exited', exitCode: 2 })]),
    { containersToStart: [{ name: 'app', reason: 'restart' }] }],
  ['OnFailure leaves a success alone', pod('OnFailure'), status([sb()], [ctr({ phase: 'exited', exitCode: 0 })]), {}],
  ['Never leaves a failure alone', pod('Never'), status([sb()], [ctr({ phase: 'exited', exitCode: 1 })]), {}],
  ['a created, never started container gets a new instance', pod(), status([sb()], [ctr({ phase: 'created' })]),
    { containersToStart: [{ name: 'app', reason: 'never started' }] }],
  ['changed spec: kill and start again', pod(), status([sb()], [ctr({ hash: 'old' })]),
    { containersToKill: [{ id: 'c1', name: 'app', reason: 'Container spec hash changed' }], containersToStart: [{ name: 'app', reason: 'spec changed' }] }],
  ['a running container not in the spec is killed', pod(), status([sb()], [ctr(), ctr({ id: 'c9', name: 'gone' })]),
    { containersToKill: [{ id: 'c9', name: 'gone', reason: 'Container is not in the pod spec' }] }],
  ['only the newest instance counts', pod('Never'), status([sb()], [ctr({ id: 'c2', attempt: 1, phase: 'exited', exitCode: 0 }), ctr({ phase: 'exited', exitCode: 1 })]), {}],
];

for (const [name, p, s, want] of cases) {
  test(`computePodActions: ${name}`, () => assert.deepEqual(computePodActions(p, s), { ...none, ...want }));
}
