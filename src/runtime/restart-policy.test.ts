import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod, PodStatus } from 'kubernetes-types/core/v1.js';
import {
  allContainersCouldRestart,
  allContainersRestartCleanedUp,
  allContainersRestarting,
  containerShouldRestart,
  findMatchingRestartRule,
  shouldAllContainersRestart,
  shouldContainerBeRestarted,
  type ContainerRestartRule,
} from './restart-policy.ts';
import type { ContainerState, PodRuntimeStatus } from '../container/types.ts';

const rule = (action: string, operator: string, values: number[]): ContainerRestartRule => ({ action, exitCodes: { operator, values } });
const ctr = (restartPolicy?: string, rules?: ContainerRestartRule[]): Container =>
  ({
    name: 'c',
    image: 'busybox',
    ...(restartPolicy ? { restartPolicy } : {}),
    ...(rules ? { restartPolicyRules: rules } : {}),
  }) as Container;
const pod = (restartPolicy?: string, containers: Container[] = [], initContainers: Container[] = []): Pod => ({
  metadata: { uid: 'u' },
  spec: { ...(restartPolicy ? { restartPolicy } : {}), containers, initContainers },
});
const inst = (name: string, over: Partial<ContainerState> = {}): ContainerState => ({
  id: `${name}-1`,
  sandboxId: 's',
  name,
  attempt: 0,
  phase: 'exited',
  image: 'busybox',
  imageRef: 'sha256:x',
  hash: 'h',
  createdAtNs: '1',
  exitCode: 0,
  ...over,
});
const rt = (...containers: ContainerState[]): PodRuntimeStatus => ({ uid: 'u', sandboxes: [], containers });

// [name, pod policy, container policy, rules, exit code, restarts]
const shouldRestartCases: [string, string | undefined, string | undefined, ContainerRestartRule[] | undefined, number, boolean][] = [
  ['pod Always', 'Always', undefined, undefined, 0, true],
  ['pod unset is Always', undefined, undefined, undefined, 1, true],
  ['pod OnFailure, success', 'OnFailure', undefined, undefined, 0, false],
  ['pod OnFailure, failure', 'OnFailure', undefined, undefined, 1, true],
  ['pod Never', 'Never', undefined, undefined, 1, false],
  ['container Never overrides pod Always', 'Always', 'Never', undefined, 1, false],
  ['container Always overrides pod Never', 'Never', 'Always', undefined, 0, true],
  ['container OnFailure, success', 'Always', 'OnFailure', undefined, 0, false],
  ['container OnFailure, failure', 'Never', 'OnFailure', undefined, 3, true],
  ['rule In matches: Restart', 'Never', 'Never', [rule('Restart', 'In', [42])], 42, true],
  ['rule In does not match: the container policy', 'Never', 'Never', [rule('Restart', 'In', [42])], 1, false],
  ['rule NotIn matches', 'Never', 'Never', [rule('Restart', 'NotIn', [0])], 2, true],
  ['rule NotIn does not match', 'Never', 'Never', [rule('Restart', 'NotIn', [0])], 0, false],
  ['RestartAllContainers restarts too', 'Never', 'Never', [rule('RestartAllContainers', 'In', [42])], 42, true],
  ['rules without a container policy are not read', 'Never', undefined, [rule('Restart', 'In', [42])], 42, false],
  ['an unknown operator never matches', 'Never', 'Never', [rule('Restart', 'Between', [42])], 42, false],
];
for (const [name, podPolicy, policy, rules, exitCode, want] of shouldRestartCases) {
  test(`containerShouldRestart: ${name}`, () => assert.equal(containerShouldRestart(ctr(policy, rules), pod(podPolicy), exitCode), want));
}

test('findMatchingRestartRule: the first rule that matches', () => {
  const c = ctr('Never', [rule('Restart', 'In', [1]), rule('RestartAllContainers', 'NotIn', [0]), rule('Restart', 'In', [2])]);
  assert.equal(findMatchingRestartRule(c, 1)?.action, 'Restart');
  assert.equal(findMatchingRestartRule(c, 2)?.action, 'RestartAllContainers');
  assert.equal(findMatchingRestartRule(c, 0), undefined);
  assert.equal(findMatchingRestartRule({ ...c, restartPolicyRules: [{ action: 'Restart' }] } as Container, 1), undefined, 'no exitCodes');
});

test('shouldContainerBeRestarted: never started, created or unknown start; running does not; exited by policy; not when deleted', () => {
  const c = ctr('Never', [rule('Restart', 'In', [42])]);
  const p = pod('Always', [c]);
  assert.equal(shouldContainerBeRestarted(c, p, rt()), true);
  assert.equal(shouldContainerBeRestarted(c, p, rt(inst('c', { phase: 'created' }))), true);
  assert.equal(shouldContainerBeRestarted(c, p, rt(inst('c', { phase: 'unknown' }))), true);
  assert.equal(shouldContainerBeRestarted(c, p, rt(inst('c', { phase: 'running' }))), false);
  assert.equal(shouldContainerBeRestarted(c, p, rt(inst('c', { exitCode: 42 }))), true);
  assert.equal(shouldContainerBeRestarted(c, p, rt(inst('c', { exitCode: 1 }))), false);
  const deleted = { ...p, metadata: { ...p.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } };
  assert.equal(shouldContainerBeRestarted(c, deleted, rt()), false);
});

const all = rule('RestartAllContainers', 'In', [42]);
const source = { ...ctr('Never', [all]), name: 'source' } as Container;
const other: Container = { name: 'other', image: 'busybox' };
const initSource = { ...ctr('Never', [all]), name: 'init' } as Container;
const restartAllPod = pod('Never', [source, other], [initSource]);

test('allContainersCouldRestart: any init or app container with a RestartAllContainers rule', () => {
  assert.equal(allContainersCouldRestart(restartAllPod), true);
  assert.equal(allContainersCouldRestart(pod('Never', [other], [initSource])), true);
  assert.equal(allContainersCouldRestart(pod('Never', [ctr('Never', [rule('Restart', 'In', [42])])])), false);
});

const cond = (status: string): PodStatus => ({ conditions: [{ type: 'AllContainersRestarting', status }] });
const terminated = (name: string, exitCode: number): PodStatus => ({
  containerStatuses: [{ name, image: '', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode } } }],
});
// [name, runtime, last status, should restart]
const shouldAllCases: [string, PodRuntimeStatus | undefined, PodStatus | undefined, boolean][] = [
  ['nothing exited', rt(inst('source', { phase: 'running' })), undefined, false],
  ['the source exited with a matching code', rt(inst('source', { exitCode: 42 })), undefined, true],
  ['the source exited with another code', rt(inst('source', { exitCode: 1 })), undefined, false],
  [
    'only its newest instance counts',
    rt(inst('source', { phase: 'running', id: 'n' }), inst('source', { exitCode: 42 })),
    undefined,
    false,
  ],
  ['an init container exited with a matching code', rt(inst('init', { exitCode: 42 })), undefined, true],
  ['a container without the rule', rt(inst('other', { exitCode: 42 })), undefined, false],
  ['the last status: the condition True', rt(), cond('True'), true],
  ['the last status: the condition False', rt(), cond('False'), false],
  ['the last status: the source terminated with a matching code', undefined, terminated('source', 42), true],
  ['the last status: another code', undefined, terminated('source', 0), false],
];
for (const [name, r, last, want] of shouldAllCases) {
  test(`shouldAllContainersRestart: ${name}`, () => assert.equal(shouldAllContainersRestart(restartAllPod, r, last), want));
}

test('allContainersRestartCleanedUp: no init or app container left in the runtime', () => {
  assert.equal(allContainersRestartCleanedUp(restartAllPod, rt()), true);
  assert.equal(allContainersRestartCleanedUp(restartAllPod, rt(inst('stranger'))), true);
  assert.equal(allContainersRestartCleanedUp(restartAllPod, rt(inst('init'))), false);
});

test('allContainersRestarting: triggered and not yet cleaned up', () => {
  assert.equal(allContainersRestarting(restartAllPod, rt(inst('source', { exitCode: 42 })), undefined), true);
  assert.equal(allContainersRestarting(restartAllPod, rt(), cond('True')), false, 'all removed: start them');
  assert.equal(allContainersRestarting(restartAllPod, rt(inst('other', { phase: 'running' })), cond('True')), true, 'one left');
  assert.equal(allContainersRestarting(pod('Never', [other]), rt(inst('other', { exitCode: 42 })), cond('True')), false, 'no rule');
});
