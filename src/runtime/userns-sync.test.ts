// PodSyncer with pods' user namespaces (src/userns) over the in-memory runtime: what the sandbox
// and its containers are given for hostUsers unset and false, and the refusal a runtime handler
// without user namespaces gets, as upstream's NamespacesForPod and createPodSandbox.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { RuntimeRequest } from '../cri/runtime-client.ts';
import { UserNamespaces } from '../userns/manager.ts';
import { FakeRuntime, fakeSyncer, type SyncerOptions } from './testing.ts';

const UID = 'u1';
const silent = { info() {}, v() {}, warn() {}, error() {} };
const pod = (hostUsers?: boolean): Pod => ({
  metadata: { name: 'web', namespace: 'shop', uid: UID },
  spec: { containers: [{ name: 'a', image: 'busybox:1.36', volumeMounts: [{ name: 'data', mountPath: '/data' }] }], hostUsers },
});
const volumes = {
  setUp: async () => ({ ready: true, failed: [] }),
  containerMounts: async () => [{ containerPath: '/data', hostPath: '/vol/data', readonly: false }],
  containerDevices: () => [],
  tearDown: async () => {},
};

/** A syncer whose runtime lists these handlers, with user namespaces kept under a scratch root dir (the default range, first slot). */
function harness(
  t: { after(fn: () => void): void },
  handlers: { name: string; features: { userNamespaces: boolean } }[],
  observe?: SyncerOptions['observe'],
) {
  const rootDir = mkdtempSync(join(tmpdir(), 'kts-userns-sync-'));
  t.after(() => rmSync(rootDir, { recursive: true, force: true }));
  const userns = UserNamespaces.load({ rootDir, etcDir: join(rootDir, 'no-etc'), maxPods: 110, log: silent, random: () => 0 });
  const runtime = new FakeRuntime();
  const status = runtime.status.bind(runtime);
  runtime.status = async (r) => ({
    ...(await status(r)),
    runtimeHandlers: handlers.map((h) => ({ ...h, features: { recursiveReadOnlyMounts: false, ...h.features } })),
  });
  const h = fakeSyncer({ runtime, volumes, userns, observe });
  const request = <M extends 'RunPodSandbox' | 'CreateContainer'>(method: M) =>
    h.runtime.calls.find((c) => c.method === method)?.request as RuntimeRequest<M> | undefined;
  return { ...h, rootDir, request };
}

const POD_USERNS = {
  mode: 'POD',
  uids: [{ hostId: 65536, containerId: 0, length: 65536 }],
  gids: [{ hostId: 65536, containerId: 0, length: 65536 }],
};

test("PodSyncer: hostUsers false: the sandbox and its container in the pod's user namespace, the mounts idmapped", async (t) => {
  const h = harness(t, [{ name: '', features: { userNamespaces: true } }]);
  await h.syncer.syncPod(pod(false));
  const sandbox = h.request('RunPodSandbox')!;
  assert.deepEqual(sandbox.config!.linux!.securityContext!.namespaceOptions!.usernsOptions, POD_USERNS);
  const created = h.request('CreateContainer')!;
  assert.deepEqual(created.config!.linux!.securityContext!.namespaceOptions!.usernsOptions, POD_USERNS);
  assert.deepEqual(created.config!.mounts, [
    { containerPath: '/data', hostPath: '/vol/data', readonly: false, uidMappings: POD_USERNS.uids, gidMappings: POD_USERNS.gids },
  ]);
  assert.match(readFileSync(join(h.rootDir, 'pods', UID, 'userns'), 'utf8'), /"hostId":65536/);
  h.syncer.releaseUserNamespace(UID);
  assert.equal(existsSync(join(h.rootDir, 'pods', UID, 'userns')), false);
});

test("PodSyncer: hostUsers unset: the node's user namespace, mounts as they are", async (t) => {
  const h = harness(t, []);
  await h.syncer.syncPod(pod());
  assert.deepEqual(h.request('RunPodSandbox')!.config!.linux!.securityContext!.namespaceOptions!.usernsOptions, { mode: 'NODE' });
  const created = h.request('CreateContainer')!;
  assert.deepEqual(created.config!.linux!.securityContext!.namespaceOptions!.usernsOptions, { mode: 'NODE' });
  assert.deepEqual(created.config!.mounts, [{ containerPath: '/data', hostPath: '/vol/data', readonly: false }]);
});

test('PodSyncer: hostUsers false on a runtime without user namespaces: FailedCreatePodSandBox, no sandbox, nothing allocated', async (t) => {
  const h = harness(t, [{ name: '', features: { userNamespaces: false } }]);
  const r = await h.syncer.syncPod(pod(false));
  assert.deepEqual(h.runtime.trace(), ['Status'], 'CRI calls: the handlers read, nothing run');
  assert.deepEqual(h.events, [
    "Warning FailedCreatePodSandBox: Failed to create pod sandbox: can't set `spec.hostUsers: false`, runtime does not support user namespaces",
  ]);
  assert.equal(r.requeueAfterMs, 10_000);
  assert.equal(existsSync(join(h.rootDir, 'pods', UID, 'userns')), false);
});

test('PodSyncer: a hostUsers: false pod counted started, and failed when its container cannot start (upstream StartedUserNamespacedPods*)', async (t) => {
  const counted: boolean[] = [];
  const h = harness(t, [{ name: '', features: { userNamespaces: true } }], { userNamespacedPod: (failed) => counted.push(failed) });
  h.runtime.failNext('startContainer', new Error('exec: "bogus": executable file not found in $PATH'));
  await h.syncer.syncPod(pod(false));
  await h.syncer.syncPod(pod(false)); // the sandbox is there: not counted again
  await h.syncer.syncPod(pod());
  assert.deepEqual(counted, [true]);
  const ok = harness(t, [{ name: '', features: { userNamespaces: true } }], { userNamespacedPod: (failed) => counted.push(failed) });
  await ok.syncer.syncPod(pod(false));
  assert.deepEqual(counted, [true, false]);
});
