import { test } from 'node:test';
import assert from 'node:assert/strict';
import { declaredFeatures } from './declared-features.ts';

const ALL = [
  'ExtendWebSocketsToKubelet',
  'InPlacePodLevelResourcesVerticalScaling',
  'InPlacePodVerticalScalingInitContainers',
  'RestartAllContainersOnContainerExits',
];
const rows: [string, Record<string, boolean>, string[] | undefined][] = [
  ['the defaults: what kubelet-ts implements of the gates on in 1.36, sorted', {}, ALL],
  [
    'a gate turned off is not declared',
    { RestartAllContainersOnContainerExits: false, ExtendWebSocketsToKubelet: false },
    ['InPlacePodLevelResourcesVerticalScaling', 'InPlacePodVerticalScalingInitContainers'],
  ],
  ['a feature kubelet-ts lacks stays undeclared with its gate on', { UserNamespacesHostNetworkSupport: true }, ALL],
  ['NodeDeclaredFeatures off: no field at all', { NodeDeclaredFeatures: false }, undefined],
];
for (const [name, gates, want] of rows) test(`declaredFeatures: ${name}`, () => assert.deepEqual(declaredFeatures(gates), want));
