import { test } from 'node:test';
import assert from 'node:assert/strict';
import { declaredFeatures } from './declared-features.ts';

const rows: [string, Record<string, boolean>, string[] | undefined][] = [
  [
    'the defaults: what kubelet-ts implements of the gates on in 1.36, sorted',
    {},
    ['InPlacePodLevelResourcesVerticalScaling', 'InPlacePodVerticalScalingInitContainers', 'RestartAllContainersOnContainerExits'],
  ],
  [
    'a gate turned off is not declared',
    { RestartAllContainersOnContainerExits: false },
    ['InPlacePodLevelResourcesVerticalScaling', 'InPlacePodVerticalScalingInitContainers'],
  ],
  [
    'a feature kubelet-ts lacks stays undeclared with its gate on',
    { ExtendWebSocketsToKubelet: true, UserNamespacesHostNetworkSupport: true },
    ['InPlacePodLevelResourcesVerticalScaling', 'InPlacePodVerticalScalingInitContainers', 'RestartAllContainersOnContainerExits'],
  ],
  ['NodeDeclaredFeatures off: no field at all', { NodeDeclaredFeatures: false }, undefined],
];
for (const [name, gates, want] of rows) test(`declaredFeatures: ${name}`, () => assert.deepEqual(declaredFeatures(gates), want));
