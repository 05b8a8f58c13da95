import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PersistentVolume, PersistentVolumeClaim } from 'kubernetes-types/core/v1.js';
import {
  type ExpansionDecision,
  type ExpansionInput,
  markFailedPatch,
  markFinishedPatch,
  markInProgressPatch,
  nodeExpansionDecision,
} from './expansion.ts';

const Gi = 2 ** 30;
const pv = (size: string): PersistentVolume => ({ metadata: { name: 'pv' }, spec: { capacity: { storage: size } } });
const pvc = (o: {
  status?: string;
  capacity?: string;
  allocated?: string;
  request?: string;
  modes?: string[];
  annotations?: Record<string, string>;
}): PersistentVolumeClaim => ({
  metadata: { name: 'c', namespace: 'ns', resourceVersion: '7', ...(o.annotations ? { annotations: o.annotations } : {}) },
  spec: { accessModes: o.modes ?? ['ReadWriteOnce'], resources: { requests: { storage: o.request ?? '2Gi' } } },
  status: {
    capacity: { storage: o.capacity ?? '1Gi' },
    ...(o.allocated ? { allocatedResources: { storage: o.allocated } } : {}),
    ...(o.status ? { allocatedResourceStatuses: { storage: o.status } } : {}),
  },
});

test('nodeExpansionDecision: upstream volumeNeedsExpansion, checkForRecoveryFromExpansion and NodeExpander.runPreCheck', () => {
  const base = { pv: pv('2Gi'), readOnly: false };
  const expand = (o: Partial<Extract<ExpansionDecision, { action: 'expand' }>>): ExpansionDecision => ({
    action: 'expand',
    newSize: 2 * Gi,
    oldSize: Gi,
    recovery: true,
    pvcAlreadyUpdated: false,
    infeasibleOnFailure: false,
    ...o,
  });
  const rows: [string, ExpansionInput, ExpansionDecision][] = [
    ['same size: nothing', { ...base, pv: pv('1Gi'), pvc: pvc({}) }, { action: 'none' }],
    ['PV smaller than the claim status: nothing', { ...base, pv: pv('1Gi'), pvc: pvc({ capacity: '2Gi' }) }, { action: 'none' }],
    [
      'read-only claim: never',
      { ...base, readOnly: true, pvc: pvc({ status: 'NodeResizePending', allocated: '2Gi' }) },
      { action: 'none' },
    ],
    [
      'in-use error (FailedPrecondition) earlier: no online expansion',
      { ...base, inUseError: true, pvc: pvc({ status: 'NodeResizePending', allocated: '2Gi' }) },
      { action: 'none' },
    ],
    [
      'this node expanded it already',
      { ...base, nodeSize: 2 * Gi, pvc: pvc({ status: 'NodeResizePending', allocated: '2Gi' }) },
      { action: 'none' },
    ],
    ['PV without capacity: nothing', { ...base, pv: { spec: {} }, pvc: pvc({}) }, { action: 'none' }],
    [
      'NodeResizePending: expand to allocatedResources',
      { ...base, pvc: pvc({ status: 'NodeResizePending', allocated: '2Gi' }) },
      expand({}),
    ],
    ['NodeResizeInProgress (a retry): expand', { ...base, pvc: pvc({ status: 'NodeResizeInProgress', allocated: '2Gi' }) }, expand({})],
    [
      'the controller is still at it: wait',
      { ...base, pvc: pvc({ status: 'ControllerResizeInProgress', allocated: '2Gi' }) },
      { action: 'wait', resizeStatus: 'ControllerResizeInProgress' },
    ],
    [
      'infeasible on the node earlier: wait for the user',
      { ...base, pvc: pvc({ status: 'NodeResizeInfeasible', allocated: '2Gi' }) },
      { action: 'wait', resizeStatus: 'NodeResizeInfeasible' },
    ],
    [
      'allocatedResources but no status, PVC at the size: done, no call',
      { ...base, pvc: pvc({ capacity: '2Gi', allocated: '2Gi' }), nodeSize: Gi },
      { action: 'assumeDone', newSize: 2 * Gi },
    ],
    ['allocatedResources, no status, PVC below: wait', { ...base, pvc: pvc({ allocated: '2Gi' }) }, { action: 'wait', resizeStatus: '' }],
    [
      'RWX already expanded on another node: expand here too, no PVC update',
      { ...base, nodeSize: Gi, pvc: pvc({ capacity: '2Gi', allocated: '2Gi', modes: ['ReadWriteMany'] }) },
      expand({ pvcAlreadyUpdated: true }),
    ],
    [
      'RWX with node-expansion-not-required: done',
      {
        ...base,
        nodeSize: Gi,
        pvc: pvc({
          capacity: '2Gi',
          allocated: '2Gi',
          modes: ['ReadWriteMany'],
          annotations: { 'volume.kubernetes.io/node-expansion-not-required': 'true' },
        }),
      },
      { action: 'assumeDone', newSize: 2 * Gi },
    ],
    [
      'a final error earlier and the user changed the request since: infeasible on failure',
      { ...base, finalError: true, pvc: pvc({ status: 'NodeResizeInProgress', allocated: '2Gi', request: '3Gi' }) },
      expand({ infeasibleOnFailure: true }),
    ],
    ['an older resizer (no status, no allocatedResources): expand to the PV size', { ...base, pvc: pvc({}) }, expand({ recovery: false })],
  ];
  for (const [name, input, want] of rows) assert.deepEqual(nodeExpansionDecision(input), want, name);
});

test('PVC status patches: upstream MarkNodeExpansionInProgress, MarkNodeExpansionFinishedWithRecovery, MarkNodeExpansionInfeasible, MarkNodeExpansionFailedCondition', () => {
  const claim = pvc({ status: 'NodeResizePending', allocated: '2Gi' });
  assert.deepEqual(markInProgressPatch(claim), {
    metadata: { resourceVersion: '7' },
    status: { allocatedResourceStatuses: { storage: 'NodeResizeInProgress' } },
  });

  claim.status!.conditions = [
    { type: 'FileSystemResizePending', status: 'True' },
    { type: 'NodeResizeError', status: 'True' },
  ];
  assert.deepEqual(markFinishedPatch(claim, '2Gi'), {
    metadata: { resourceVersion: '7' },
    status: { capacity: { storage: '2Gi' }, allocatedResourceStatuses: null, conditions: null },
  });
  claim.status!.conditions.push({ type: 'Other', status: 'True' });
  claim.status!.allocatedResourceStatuses = { storage: 'NodeResizeInProgress', other: 'X' };
  assert.deepEqual(markFinishedPatch(claim, '2Gi').status, {
    capacity: { storage: '2Gi' },
    allocatedResourceStatuses: { storage: null },
    conditions: [
      { $patch: 'delete', type: 'FileSystemResizePending' },
      { $patch: 'delete', type: 'NodeResizeError' },
    ],
  });
  assert.deepEqual(markFinishedPatch(pvc({}), '2Gi').status, { capacity: { storage: '2Gi' } }, 'an older resizer: only the capacity');

  const now = '2026-12-03T04:00:00Z';
  const fresh = pvc({ status: 'NodeResizeInProgress', allocated: '2Gi' });
  const condition = { type: 'NodeResizeError', status: 'True', lastTransitionTime: now, message: 'failed to expand pvc with boom' };
  assert.deepEqual(markFailedPatch(fresh, 'boom', false, now), { status: { conditions: [condition] } });
  assert.deepEqual(markFailedPatch(fresh, 'boom', true, now), {
    status: { allocatedResourceStatuses: { storage: 'NodeResizeInfeasible' }, conditions: [condition] },
  });
  fresh.status!.conditions = [{ type: 'NodeResizeError', status: 'True', message: 'older' }];
  assert.deepEqual(markFailedPatch(fresh, 'boom', false, now), { status: {} }, 'the same condition stays as it was');
});
