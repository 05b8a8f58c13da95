import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runtimeHealth } from './runtime-health.ts';

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
