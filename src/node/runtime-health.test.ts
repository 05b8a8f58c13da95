import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ImageClient } from '../cri/image-client.ts';
import type { RuntimeClient } from '../cri/runtime-client.ts';
import { logger } from '../log/log.ts';
import { RuntimeState } from '../runtime/runtime-state.ts';
import { IMAGE_LIST_MAX_AGE_MS, imageListCache, probeRuntime, runtimeHealth, runtimeVersionString } from './runtime-health.ts';

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

test("probeRuntime hands its Status on, as updateRuntimeUp sets runtimeState: the network's state always, the handlers of a ready runtime only", async () => {
  const handlers = [{ name: 'crun', features: { recursiveReadOnlyMounts: true, userNamespaces: false } }];
  const images = async () => ({ images: [] });
  for (const [runtime, network, handlersWant, networkWant] of [
    [true, true, handlers, undefined],
    [false, true, undefined, undefined],
    [
      true,
      false,
      handlers,
      'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:cni plugin not initialized',
    ],
  ] as const) {
    const cri = {
      status: async () => ({ ...status(runtime, network), runtimeHandlers: handlers }),
      version: async () => version,
    } as unknown as RuntimeClient;
    // Its own Status reads answer as the probe did (a network not ready is asked again).
    const state = new RuntimeState(() => cri.status({}));
    const r = await probeRuntime(cri, images, 50, logger('test'), (st, ready) => state.probed(st, ready));
    assert.equal(r.health.runtimeReady, runtime);
    assert.deepEqual(state.known(), handlersWant);
    assert.equal(await state.networkError(), networkWant);
  }
});

test('imageListCache asks ListImages again only once the answer is 30 s old (upstream imageCache), and does not keep a failure', async () => {
  let t = 0;
  let asked = 0;
  let fail = false;
  const images = {
    listImages: async () => {
      asked++;
      if (fail) throw new Error('runtime down');
      return { images: [{ id: `sha256:${asked}` }] };
    },
  } as unknown as ImageClient;
  const list = imageListCache(images, IMAGE_LIST_MAX_AGE_MS, () => t);
  // [time, fails, asked after, first image's id]
  for (const [at, failing, want, id] of [
    [0, false, 1, 'sha256:1'],
    [10_000, false, 1, 'sha256:1'],
    [29_999, false, 1, 'sha256:1'],
    [30_000, false, 2, 'sha256:2'],
    [40_000, false, 2, 'sha256:2'],
    [60_000, true, 3, undefined],
    [60_001, false, 4, 'sha256:4'],
    [70_000, false, 4, 'sha256:4'],
  ] as const) {
    t = at;
    fail = failing;
    const got = await list().then(
      (r) => r.images[0]!.id,
      () => undefined,
    );
    assert.equal(got, id, `at ${at}`);
    assert.equal(asked, want, `asked at ${at}`);
  }
});
