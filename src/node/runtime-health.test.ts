import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ImageClient } from '../cri/image-client.ts';
import type { RuntimeClient } from '../cri/runtime-client.ts';
import { logger } from '../log/log.ts';
import { probeRuntime, runtimeHealth, runtimeVersionString } from './runtime-health.ts';

const version = { version: '0.1.0', runtimeName: 'containerd', runtimeVersion: '1.6.20', runtimeApiVersion: 'v1' };
const status = (runtime: boolean, network: boolean) =>
  ({
    status: {
      conditions: [
        { type: 'RuntimeReady', status: runtime, reason: runtime ? '' : 'Broken', message: runtime ? '' : 'runtime broken' },
        {
          type: 'NetworkReady',
          status: network,
          reason: network ? '' : 'NetworkPluginNotReady',
          message: network ? '' : 'cni plugin not initialized',
        },
      ],
    },
    info: {},
    containerdRuntimeHandlers: [],
    runtimeHandlers: [],
    features: null,
  }) as unknown as Parameters<typeof runtimeHealth>[0];

test('runtime health from CRI Status: the failing condition gives the reason', () => {
  assert.deepEqual(runtimeHealth(status(true, true), version), {
    runtimeReady: true,
    networkReady: true,
    reason: undefined,
    message: undefined,
    version: 'containerd://1.6.20',
  });
  const net = runtimeHealth(status(true, false), version);
  assert.deepEqual([net.networkReady, net.reason, net.message], [false, 'NetworkPluginNotReady', 'cni plugin not initialized']);
  assert.equal(runtimeHealth(status(false, false), version).reason, 'Broken', 'the runtime condition comes first');
});

test("the runtime's features (CRI Status features) when it reports them, for the Node's status.features", () => {
  assert.equal(runtimeHealth(status(true, true), version).features, undefined, 'containerd 1.6: no features');
  const withFeatures = { ...status(true, true), features: { supplementalGroupsPolicy: true } } as ReturnType<typeof status>;
  assert.deepEqual(runtimeHealth(withFeatures, version).features, { supplementalGroupsPolicy: true });
});

test('the runtime version as upstream prints it (utilversion ParseSemantic, else ParseGeneric, String())', () => {
  // containerd 2's CRI says "v2.2.9": upstream's Node shows containerd://2.2.9 (seen side by side in a kind cluster).
  assert.equal(runtimeHealth(status(true, true), { ...version, runtimeVersion: 'v2.2.9' }).version, 'containerd://2.2.9');
  for (const [raw, want] of [
    ['1.6.20', '1.6.20'],
    ['v2.2.9', '2.2.9'],
    ['v2.2.0-rc.1', '2.2.0-rc.1'],
    ['1.7.0+unknown', '1.7.0+unknown'],
    ['1.6.20~ds1', '1.6.20'],
    ['1.2', '1.2'],
    ['1', 'Unknown'],
    ['', 'Unknown'],
    ['abc', 'Unknown'],
  ]) {
    assert.equal(runtimeVersionString(raw), want, raw);
  }
});

test("probeRuntime hands a ready runtime's handlers on (upstream updateRuntimeUp's setRuntimeHandlers), a broken one's not", async () => {
  const handlers = [{ name: 'crun', features: { recursiveReadOnlyMounts: true, userNamespaces: false } }];
  const images = { listImages: async () => ({ images: [] }) } as unknown as ImageClient;
  for (const [ready, want] of [
    [true, [handlers]],
    [false, []],
  ] as const) {
    const cri = {
      status: async () => ({ ...status(ready, true), runtimeHandlers: handlers }),
      version: async () => version,
    } as unknown as RuntimeClient;
    const got: unknown[] = [];
    const r = await probeRuntime(cri, images, 50, logger('test'), (h) => got.push(h));
    assert.equal(r.health.runtimeReady, ready);
    assert.deepEqual(got, want);
  }
});
