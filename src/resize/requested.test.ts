import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { requestedResizes } from './requested.ts';

const pod = (containers: Container[], initContainers: Container[] = []): Pod => ({ spec: { containers, initContainers } });
const c = (
  name: string,
  requests: Record<string, string> = {},
  limits: Record<string, string> = {},
  over: Partial<Container> = {},
): Container => ({
  name,
  resources: { requests, limits },
  ...over,
});

test("requestedResizes: upstream's recordContainerResizeOperations, each changed requirement of each resizable container", () => {
  const cases: [string, Pod, Pod, boolean, string[]][] = [
    ['nothing changed', pod([c('a', { cpu: '1' })]), pod([c('a', { cpu: '1000m' })]), true, []],
    [
      'every operation, in upstream order',
      pod([c('a', { cpu: '1', memory: '1Gi' }, { memory: '2Gi' })]),
      pod([c('a', { cpu: '500m', memory: '2Gi' }, { cpu: '2' })]),
      true,
      ['memory requests increase', 'memory limits remove', 'cpu requests decrease', 'cpu limits add'],
    ],
    [
      'each container counted',
      pod([c('a', { cpu: '1' }), c('b', { cpu: '1' })]),
      pod([c('a', { cpu: '2' }), c('b', { cpu: '2' })]),
      true,
      ['cpu requests increase', 'cpu requests increase'],
    ],
    [
      'init containers with the gate on',
      pod([c('a')], [c('init', { cpu: '1' })]),
      pod([c('a')], [c('init', { cpu: '2' })]),
      true,
      ['cpu requests increase'],
    ],
    [
      'init containers not resizable with the gate off',
      pod([c('a')], [c('init', { cpu: '1' })]),
      pod([c('a')], [c('init', { cpu: '2' })]),
      false,
      [],
    ],
    [
      'a sidecar whatever the gate',
      pod([c('a')], [c('side', { cpu: '1' }, {}, { restartPolicy: 'Always' })]),
      pod([c('a')], [c('side', { cpu: '2' }, {}, { restartPolicy: 'Always' })]),
      false,
      ['cpu requests increase'],
    ],
  ];
  for (const [name, before, now, gate, want] of cases)
    assert.deepEqual(
      requestedResizes(before, now, gate).map((r) => `${r.resource} ${r.requirement} ${r.operation}`),
      want,
      name,
    );
});
