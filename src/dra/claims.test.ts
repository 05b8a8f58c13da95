import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { claimInfoFor, claimName, claimsInUse, podClaimNames, type ResourceClaim } from './claims.ts';

const pod = (over: { claims?: object[]; statuses?: object[]; extended?: object } = {}): Pod =>
  ({
    metadata: { name: 'p', namespace: 'ns', uid: 'pod-uid' },
    spec: { containers: [], resourceClaims: over.claims },
    status: { resourceClaimStatuses: over.statuses, extendedResourceClaimStatus: over.extended },
  }) as Pod;

test('the ResourceClaim behind a pod claim (upstream resourceclaim.Name)', () => {
  const cases: [string, Pod, object, { name?: string; mustCheckOwner: boolean } | string][] = [
    ['by name', pod(), { name: 'a', resourceClaimName: 'claim-a' }, { name: 'claim-a', mustCheckOwner: false }],
    [
      'from a template: the name in the status, owned by the pod',
      pod({ statuses: [{ name: 'a', resourceClaimName: 'p-a-xyz' }] }),
      { name: 'a', resourceClaimTemplateName: 't' },
      { name: 'p-a-xyz', mustCheckOwner: true },
    ],
    [
      'from a template, none generated',
      pod({ statuses: [{ name: 'a' }] }),
      { name: 'a', resourceClaimTemplateName: 't' },
      { name: undefined, mustCheckOwner: true },
    ],
    ['from a template, not created yet', pod(), { name: 'a', resourceClaimTemplateName: 't' }, 'pod "ns/p": ResourceClaim not created yet'],
    ['neither', pod(), { name: 'a' }, 'pod "ns/p", spec.resourceClaim "a": none of the supported fields are set'],
  ];
  for (const [what, p, podClaim, want] of cases) {
    if (typeof want === 'string') assert.throws(() => claimName(p, podClaim as never), { message: want }, what);
    else assert.deepEqual(claimName(p, podClaim as never), want, what);
  }
});

test("a pod's claim names: its own, then the one for its extended resources", () => {
  const p = pod({
    claims: [
      { name: 'a', resourceClaimName: 'claim-a' },
      { name: 'b', resourceClaimTemplateName: 't' },
      { name: 'c', resourceClaimTemplateName: 't' },
    ],
    statuses: [{ name: 'b', resourceClaimName: 'p-b-1' }, { name: 'c' }],
    extended: { resourceClaimName: 'p-extended-resources-2', requestMappings: [] },
  });
  assert.deepEqual(podClaimNames(p), ['claim-a', 'p-b-1', 'p-extended-resources-2']);
});

const claim = (over: { owner?: string; reservedFor?: string[]; allocated?: boolean; namespace?: string } = {}): ResourceClaim => ({
  metadata: {
    name: 'c',
    namespace: over.namespace ?? 'ns',
    uid: 'claim-uid',
    ownerReferences: over.owner ? [{ apiVersion: 'v1', kind: 'Pod', name: 'p', uid: over.owner, controller: true }] : [],
  },
  status: {
    reservedFor: (over.reservedFor ?? ['pod-uid']).map((uid) => ({ resource: 'pods', name: 'p', uid })),
    ...(over.allocated === false
      ? {}
      : {
          allocation: {
            devices: {
              results: [
                { request: 'gpu', driver: 'gpu.example.com', pool: 'node-1', device: 'gpu-0' },
                { request: 'nic', driver: 'net.example.com', pool: 'node-1', device: 'eth1' },
                { request: 'gpu', driver: 'gpu.example.com', pool: 'node-1', device: 'gpu-1' },
              ],
            },
          },
        }),
  },
});

test('a claim checked for the pod: owner, reservation, allocation, its drivers (upstream prepareResources)', () => {
  const p = pod();
  const info = claimInfoFor(p, claim({ owner: 'pod-uid' }), true);
  assert.deepEqual(info, {
    claimUID: 'claim-uid',
    claimName: 'c',
    namespace: 'ns',
    podUIDs: new Set(),
    drivers: new Map([
      ['gpu.example.com', []],
      ['net.example.com', []],
    ]),
    prepared: false,
  });
  const refused: [string, ResourceClaim, boolean, string][] = [
    [
      'another namespace',
      claim({ owner: 'pod-uid', namespace: 'other' }),
      true,
      'ResourceClaim other/c is not in the same namespace as Pod ns/p',
    ],
    ['not the owner', claim({ owner: 'someone' }), true, 'ResourceClaim ns/c was not created for Pod ns/p (Pod is not owner)'],
    ['not reserved for it', claim({ reservedFor: ['other'] }), false, 'pod p (pod-uid) is not allowed to use ResourceClaim c (claim-uid)'],
    ['not allocated', claim({ allocated: false }), false, 'ResourceClaim c: not allocated'],
  ];
  for (const [what, c, mustCheckOwner, message] of refused) assert.throws(() => claimInfoFor(p, c, mustCheckOwner), { message }, what);
  // A claim by name is shared: its owner is not checked.
  assert.equal(claimInfoFor(p, claim({ owner: 'someone' }), false).claimName, 'c');
});

test("claimsInUse: upstream's claimsInUse, the prepared claims by driver and across all under <any>", () => {
  const c = (prepared: boolean, ...drivers: string[]) => ({ prepared, drivers: new Map(drivers.map((d) => [d, []])) });
  const cases: [string, ReturnType<typeof c>[], Record<string, number>][] = [
    ['none', [], { '<any>': 0 }],
    ['not prepared: not in use', [c(false, 'gpu.example.com')], { '<any>': 0 }],
    [
      'a claim of two drivers counts once in all',
      [c(true, 'gpu.example.com', 'net.example.com'), c(true, 'gpu.example.com')],
      { 'gpu.example.com': 2, 'net.example.com': 1, '<any>': 2 },
    ],
  ];
  for (const [name, claims, want] of cases) assert.deepEqual(claimsInUse(claims), want, name);
});
