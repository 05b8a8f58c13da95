// The in-memory runtime through the kubelet's own CRI clients and event stream: what a hollow
// node's kubelet sees.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { logger } from '../../log/log.ts';
import { runtimeEvents } from '../../pleg/cri-events.ts';
import type { RuntimeEvent } from '../../pleg/runtime-events.ts';
import { ImageClient } from '../image-client.ts';
import { RuntimeClient } from '../runtime-client.ts';
import { type InMemoryRuntimeServer, serveInMemoryRuntime } from './server.ts';

let dir: string;
let served: InMemoryRuntimeServer;
let cri: RuntimeClient;
let images: ImageClient;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'in-memory-cri-'));
  served = await serveInMemoryRuntime(join(dir, 'cri.sock'));
  cri = new RuntimeClient(served.endpoint, { retryDelayMs: 5 });
  images = new ImageClient(served.endpoint);
});

after(async () => {
  cri.close();
  images.close();
  await served.stop();
  await rm(dir, { recursive: true, force: true });
});

test('a pod through CRI: pull, sandbox, a container that exits 3 and one that runs, the stop event, the sandbox stopped and removed', async () => {
  const events: RuntimeEvent[] = [];
  const stream = runtimeEvents(served.endpoint, { onEvent: (e) => events.push(e), onReconnect: () => {}, log: logger('test') });
  try {
    assert.deepEqual((await cri.version({})).runtimeName, 'hollow');
    assert.equal((await cri.runtimeConfig({})).linux?.cgroupDriver, 'CGROUPFS');
    assert.equal((await images.imageStatus({ image: { image: 'busybox:1' } })).image, null);
    const { imageRef } = await images.pullImage({ image: { image: 'busybox:1' } });
    assert.equal((await images.imageStatus({ image: { image: 'busybox:1' } })).image?.id, imageRef);

    const logDirectory = join(dir, 'pods', 'p');
    const metadata = { name: 'p', namespace: 'ns', uid: 'u1', attempt: 0 };
    const { podSandboxId } = await cri.runPodSandbox({ config: { metadata, logDirectory, labels: { a: 'b' } } });
    assert.match((await cri.podSandboxStatus({ podSandboxId })).status?.network?.ip ?? '', /^10\.200\./);
    const create = async (name: string, command: string[]) =>
      (
        await cri.createContainer({
          podSandboxId,
          config: { metadata: { name, attempt: 0 }, image: { image: 'busybox:1' }, command, logPath: `${name}/0.log` },
          sandboxConfig: { metadata },
        })
      ).containerId;
    const job = await create('job', ['sh', '-c', 'exit 3']);
    const web = await create('web', ['httpd', '-f']);
    await cri.startContainer({ containerId: job });
    await cri.startContainer({ containerId: web });
    const deadline = Date.now() + 5000;
    while (!events.some((e) => e.containerID === job) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(events, [{ kind: 'stopped', containerID: job }]);
    const js = (await cri.containerStatus({ containerId: job })).status;
    assert.deepEqual([js?.state, js?.exitCode, js?.reason, js?.logPath], ['CONTAINER_EXITED', 3, 'Error', join(logDirectory, 'job/0.log')]);
    assert.equal((await cri.listContainers({ filter: { state: { state: 'CONTAINER_RUNNING' } } })).containers[0]?.id, web);
    assert.equal((await cri.listContainerStats({})).stats.length, 2);
    assert.equal((await cri.execSync({ containerId: web, cmd: ['true'], timeout: '1' })).exitCode, 0);

    await cri.stopPodSandbox({ podSandboxId });
    const ws = (await cri.containerStatus({ containerId: web })).status;
    assert.deepEqual([ws?.state, ws?.exitCode], ['CONTAINER_EXITED', 137]);
    await cri.removePodSandbox({ podSandboxId });
    assert.deepEqual((await cri.listContainers({})).containers, []);
    assert.deepEqual((await cri.listPodSandbox({})).items, []);
    await assert.rejects(cri.containerStatus({ containerId: web }), /not found/);
  } finally {
    stream.stop();
  }
});
