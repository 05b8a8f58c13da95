import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ImageClient } from '../cri/image-client.ts';
import type { RuntimeClient } from '../cri/runtime-client.ts';
import { logger } from '../log/log.ts';
import { probeRuntime, runtimeHealth } from './runtime-health.ts';

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
