import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { containerOOMScoreAdj } from './qos.ts';

const GiB = 2 ** 30;
const c = (name: string, requests?: Record<string, string>, limits?: Record<string, string>, restartPolicy?: string): Container => ({
  name,
  resources: { requests, limits },
  ...(restartPolicy ? { restartPolicy } : {}),
});
const pod = (containers: Container[], initContainers: Container[] = [], priorityClassName?: string): Pod => ({
  spec: { containers, initContainers, priorityClassName },
});

const cases: [string, Pod, Container, number][] = [
  ['Guaranteed', pod([c('a', undefined, { cpu: '1', memory: '1Gi' })]), c('a', undefined, { cpu: '1', memory: '1Gi' }), -997],
  ['BestEffort', pod([c('a')]), c('a'), 1000],
  ['node-critical', pod([c('a')], [], 'system-node-critical'), c('a'), -997],
  ['Burstable: by the share of memory requested', pod([c('a', { memory: '1Gi' })]), c('a', { memory: '1Gi' }), 1000 - 1000 / 8],
  ['Burstable without a memory request: 999, above BestEffort never', pod([c('a', { cpu: '1' })]), c('a', { cpu: '1' }), 999],
  ['Burstable asking for everything: 3, above Guaranteed', pod([c('a', { memory: '8Gi' })]), c('a', { memory: '8Gi' }), 3],
  [
    'a sidecar no higher than the smallest app container',
    pod([c('a', { memory: '2Gi' }), c('b', { memory: '1Gi' })], [c('s', { memory: '100Mi' }, undefined, 'Always')]),
    c('s', { memory: '100Mi' }, undefined, 'Always'),
    875,
  ],
];
for (const [name, p, ctr, want] of cases)
  test(`containerOOMScoreAdj: ${name}`, () => assert.equal(containerOOMScoreAdj(p, ctr, 8 * GiB), want));
