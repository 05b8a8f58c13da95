import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ContainerDevices, PodDevices } from './allocation.ts';
import { changedDevices, deviceResourcesStatus, podsWithDevices, reportedHealth } from './health.ts';

const h = (entries: [string, boolean][]) => new Map(entries);
const on = (numa: string, ...ids: string[]): ContainerDevices => ({ byNuma: { [numa]: ids } });

test('changedDevices: health flips and new devices, not the unchanged', () => {
  const cases: [string, Map<string, boolean> | undefined, Map<string, boolean>, string[]][] = [
    [
      'first list: every device is new',
      undefined,
      h([
        ['a', true],
        ['b', false],
      ]),
      ['a', 'b'],
    ],
    ['nothing changed', h([['a', true]]), h([['a', true]]), []],
    [
      'one turned unhealthy',
      h([
        ['a', true],
        ['b', true],
      ]),
      h([
        ['a', true],
        ['b', false],
      ]),
      ['b'],
    ],
    ['one came back healthy', h([['a', false]]), h([['a', true]]), ['a']],
    [
      'a new one; a gone one is not named',
      h([
        ['a', true],
        ['b', true],
      ]),
      h([
        ['a', true],
        ['c', true],
      ]),
      ['c'],
    ],
  ];
  for (const [name, before, after, want] of cases) assert.deepEqual(changedDevices(before, after), want, name);
});

test('reportedHealth: by id', () => {
  assert.deepEqual(reportedHealth([{ id: 'a', healthy: false, numaNodes: [] }]), h([['a', false]]));
});

const pods: PodDevices = new Map([
  ['p1', new Map([['c', new Map([['r', on('-1', 'a')]])]])],
  [
    'p2',
    new Map([
      ['init', new Map([['r', on('0', 'b')]])],
      ['c', new Map([['other', on('-1', 'a')]])],
    ]),
  ],
]);

test('podsWithDevices: the pods holding any of the devices of that resource', () => {
  const cases: [string, string, string[], string[]][] = [
    ['one device, one pod', 'r', ['a'], ['p1']],
    ['an init container holds it', 'r', ['b'], ['p2']],
    ['both', 'r', ['a', 'b'], ['p1', 'p2']],
    ['same id of another resource', 'other', ['a'], ['p2']],
    ['nobody', 'r', ['z'], []],
  ];
  for (const [name, resource, ids, want] of cases) assert.deepEqual(podsWithDevices(pods, resource, ids), want, name);
});

test('deviceResourcesStatus: one entry per resource, unknown devices healthy', () => {
  const assigned = new Map<string, ContainerDevices>([
    ['r', { byNuma: { '0': ['a'], '1': ['b'] } }],
    ['s', on('-1', 'x')],
    ['empty', { byNuma: {} }],
  ]);
  const reported = (r: string) =>
    r === 'r'
      ? h([
          ['a', true],
          ['b', false],
        ])
      : undefined;
  assert.deepEqual(deviceResourcesStatus(assigned, reported), [
    {
      name: 'r',
      resources: [
        { resourceID: 'a', health: 'Healthy' },
        { resourceID: 'b', health: 'Unhealthy' },
      ],
    },
    { name: 's', resources: [{ resourceID: 'x', health: 'Healthy' }] },
  ]);
  assert.deepEqual(deviceResourcesStatus(undefined, reported), []);
});
