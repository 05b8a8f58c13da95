import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../apiserver/client.ts';
import type { Logger } from '../log/log.ts';
import { chooseService, DraPlugins } from './plugins.ts';

const quiet: Logger = { info() {}, v() {}, warn() {}, error() {} };
const until = async (cond: () => boolean, what: string) => {
  for (let i = 0; i < 300 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(cond(), what);
};

test('the service called on a plugin: the first it lists that the kubelet speaks (upstream validateSupportedServices)', () => {
  const cases: [string[], { service: string } | { error: string }][] = [
    [['v1.DRAPlugin', 'v1beta1.DRAPlugin', 'v1alpha1.DRAResourceHealth'], { service: 'v1.DRAPlugin' }],
    [['v1beta1.DRAPlugin', 'v1.DRAPlugin'], { service: 'v1beta1.DRAPlugin' }],
    [['v1alpha1.DRAResourceHealth', 'v1beta1.DRAPlugin'], { service: 'v1beta1.DRAPlugin' }],
    [[], { error: 'empty list of supported gRPC services (aka supported versions)' }],
    [
      ['v1alpha4', '1.0.0'],
      {
        error:
          'none of services supported by the plugin (["v1alpha4" "1.0.0"]) are supported by the kubelet (["v1.DRAPlugin" "v1beta1.DRAPlugin"])',
      },
    ],
  ];
  for (const [services, want] of cases)
    if ('error' in want) assert.throws(() => chooseService(services), { message: want.error }, services.join());
    else assert.equal(chooseService(services), want.service, services.join());
});

test('plugins refused, kept per driver, looked up (upstream DRAPluginManager)', async () => {
  const plugins = new DraPlugins({ nodeName: 'n1', log: quiet });
  try {
    assert.throws(() => plugins.validatePlugin('gpu.example.com', '/p/gpu.sock', ['v1alpha3']), {
      message:
        'invalid supported gRPC versions of DRA driver plugin gpu.example.com at endpoint /p/gpu.sock: none of services supported by the plugin (["v1alpha3"]) are supported by the kubelet (["v1.DRAPlugin" "v1beta1.DRAPlugin"])',
    });
    assert.throws(() => plugins.get(''), { message: 'DRA driver name is empty' });
    assert.throws(() => plugins.get('gpu.example.com'), { message: 'DRA driver gpu.example.com is not registered' });
    await plugins.registerPlugin('gpu.example.com', '/p/gpu-1.sock', ['v1.DRAPlugin']);
    await plugins.registerPlugin('gpu.example.com', '/p/gpu-2.sock', ['v1beta1.DRAPlugin']);
    await assert.rejects(plugins.registerPlugin('gpu.example.com', '/p/gpu-1.sock', ['v1.DRAPlugin']), {
      message: 'endpoint /p/gpu-1.sock already registered for DRA driver plugin gpu.example.com',
    });
    // None connected (no such sockets): the newest.
    assert.equal(plugins.get('gpu.example.com').endpoint, '/p/gpu-2.sock');
    assert.equal(plugins.get('gpu.example.com').service, 'v1beta1.DRAPlugin');
    plugins.deRegisterPlugin('gpu.example.com', '/p/gpu-2.sock');
    assert.equal(plugins.get('gpu.example.com').endpoint, '/p/gpu-1.sock');
    plugins.deRegisterPlugin('gpu.example.com', '/p/gpu-1.sock');
    assert.throws(() => plugins.get('gpu.example.com'), { message: 'DRA driver gpu.example.com is not registered' });
  } finally {
    plugins.stop();
  }
});

/** An apiserver with a Node n1 (after `missing` tries) that records the ResourceSlice collections deleted. */
function fakeApi(opts: { missing?: number; unauthorized?: number } = {}) {
  const deleted: string[] = [];
  let missing = opts.missing ?? 0;
  let unauthorized = opts.unauthorized ?? 0;
  return {
    deleted,
    async get<T>(path: string): Promise<T> {
      assert.equal(path, '/api/v1/nodes/n1');
      if (missing-- > 0) throw new ApiError(404, 'NotFound', 'nodes "n1" not found');
      return {} as T;
    },
    async delete<T>(path: string): Promise<T> {
      if (unauthorized-- > 0) throw new ApiError(401, 'Unauthorized', 'Unauthorized');
      deleted.push(decodeURIComponent(path));
      return {} as T;
    },
  };
}

test("the node's ResourceSlices: all at start, then a driver's once it stayed away for the wiping delay", async () => {
  const api = fakeApi({ missing: 1 });
  const plugins = new DraPlugins({ api, nodeName: 'n1', log: quiet, wipingDelayMs: 50 });
  try {
    plugins.start();
    // The Node is not there at first: tried again after upstream's first second.
    await until(() => api.deleted.length === 1, 'all slices of the node deleted at start');
    assert.deepEqual(api.deleted, ['/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.nodeName=n1']);

    // A plugin that never connects (no such socket): its driver is unusable from the start.
    await plugins.registerPlugin('gpu.example.com', '/nonexistent/gpu.sock', ['v1.DRAPlugin']);
    await until(() => api.deleted.length === 2, "the driver's slices deleted after the delay");
    assert.equal(api.deleted[1], '/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.driver=gpu.example.com,spec.nodeName=n1');
  } finally {
    plugins.stop();
  }
});

test('a wipe pending when the kubelet stops is dropped; a 401 is retried', async () => {
  const api = fakeApi({ unauthorized: 1 });
  const plugins = new DraPlugins({ api, nodeName: 'n1', log: quiet, wipingDelayMs: 50 });
  await plugins.registerPlugin('gpu.example.com', '/nonexistent/gpu.sock', ['v1.DRAPlugin']);
  plugins.stop();
  await new Promise((r) => setTimeout(r, 150));
  assert.deepEqual(api.deleted, []);

  const again = new DraPlugins({ api, nodeName: 'n1', log: quiet });
  try {
    again.start();
    await until(() => api.deleted.length === 1, 'deleted once authorized');
  } finally {
    again.stop();
  }
});
