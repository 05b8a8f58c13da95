import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import type { ProviderHints } from '../topologymanager/bitmask.ts';
import type { PodDevices, ResourceState } from './allocation.ts';
import { type CaseContainer, type CaseDevice, HINT_CASES } from './testdata/topology-cases.ts';
import { containerTopologyHints, podTopologyHints } from './topology-hints.ts';

const state = (devs: CaseDevice[]): ResourceState => ({
  devices: devs.map(([id, numaNodes, healthy]) => ({ id, healthy: healthy ?? true, numaNodes })),
});
const container = ([name, limits]: CaseContainer): Container => ({
  name,
  resources: { limits: Object.fromEntries(Object.entries(limits).map(([r, n]) => [r, String(n)])) },
});
const held = (m: Record<string, Record<string, string[]>> = {}): PodDevices =>
  new Map([
    ['pod', new Map(Object.entries(m).map(([c, rs]) => [c, new Map(Object.entries(rs).map(([r, ids]) => [r, { byNuma: { '0': ids } }]))]))],
  ]);
const plain = (h: ProviderHints) =>
  Object.fromEntries(
    Object.entries(h ?? {}).map(([r, hs]) => [
      r,
      hs === undefined ? null : hs.map((x) => [x.affinity!.list(), x.preferred] as [number[], boolean]),
    ]),
  );

test('device topology hints: the cases upstream answers the same (hack/devicemanager-check.sh)', () => {
  for (const c of HINT_CASES) {
    const resources = new Map(Object.entries(c.devices).map(([r, d]) => [r, state(d)]));
    const isDeviceResource = (r: string) => resources.has(r);
    const input = { resources, pods: held(c.held), isDeviceResource, numaNodes: c.numaNodes };
    const pod: Pod = {
      metadata: { uid: 'pod' },
      spec: { initContainers: (c.initContainers ?? []).map(container), containers: c.containers.map(container) },
    };
    const reusable = new Map(Object.entries(c.reusable ?? {}).map(([r, ids]) => [r, new Set(ids)]));
    const got = c.container
      ? containerTopologyHints(
          input,
          pod,
          [...pod.spec!.initContainers!, ...pod.spec!.containers].find((x) => x.name === c.container)!,
          reusable,
        )
      : podTopologyHints(input, pod);
    assert.deepEqual(plain(got), c.want, c.name);
  }
});
