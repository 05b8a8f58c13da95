import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  type ContainerOp,
  type ContainerState,
  containerTransition,
  exitReason,
  type SandboxOp,
  type SandboxState,
  sandboxTransition,
} from './lifecycle.ts';

test('containerTransition: each call in each state', () => {
  const rows: [ContainerState, ContainerOp, ReturnType<typeof containerTransition>][] = [
    ['CONTAINER_CREATED', 'start', { to: 'CONTAINER_RUNNING' }],
    ['CONTAINER_RUNNING', 'start', { refused: 'container is in CONTAINER_RUNNING state' }],
    ['CONTAINER_EXITED', 'start', { refused: 'container is in CONTAINER_EXITED state' }],
    ['CONTAINER_RUNNING', 'exit', { to: 'CONTAINER_EXITED' }],
    ['CONTAINER_EXITED', 'exit', { to: 'CONTAINER_EXITED' }],
    ['CONTAINER_CREATED', 'stop', { to: 'CONTAINER_CREATED' }],
    ['CONTAINER_RUNNING', 'stop', { to: 'CONTAINER_EXITED' }],
    ['CONTAINER_EXITED', 'stop', { to: 'CONTAINER_EXITED' }],
    ['CONTAINER_CREATED', 'remove', { to: 'gone' }],
    ['CONTAINER_RUNNING', 'remove', { to: 'gone' }],
    ['CONTAINER_EXITED', 'remove', { to: 'gone' }],
  ];
  for (const [state, op, want] of rows) assert.deepEqual(containerTransition(state, op), want, `${state} ${op}`);
});

test('sandboxTransition: each call in each state', () => {
  const rows: [SandboxState, SandboxOp, ReturnType<typeof sandboxTransition>][] = [
    ['SANDBOX_READY', 'createContainer', { to: 'SANDBOX_READY' }],
    ['SANDBOX_NOTREADY', 'createContainer', { refused: 'sandbox is not ready' }],
    ['SANDBOX_READY', 'stop', { to: 'SANDBOX_NOTREADY' }],
    ['SANDBOX_NOTREADY', 'stop', { to: 'SANDBOX_NOTREADY' }],
    ['SANDBOX_READY', 'remove', { to: 'gone' }],
    ['SANDBOX_NOTREADY', 'remove', { to: 'gone' }],
  ];
  for (const [state, op, want] of rows) assert.deepEqual(sandboxTransition(state, op), want, `${state} ${op}`);
});

test('exitReason', () => {
  assert.equal(exitReason(0), 'Completed');
  assert.equal(exitReason(3), 'Error');
  assert.equal(exitReason(137), 'Error');
});
