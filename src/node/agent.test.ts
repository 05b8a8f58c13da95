// The node agent's registration: registerNode true creates the Node, false never does and keeps
// the status of a Node someone else made once it appears (upstream's syncNodeStatus).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node } from 'kubernetes-types/core/v1.js';
import { ApiError, type ApiClient, type WatchEvent } from '../apiserver/client.ts';
import { nodeAgent, type NodeAgentOptions } from './agent.ts';

const silent = { info() {}, warn() {}, error() {}, v() {} } as never;

/** An apiserver with one optional Node: creates, status patches, a list and a watch of it. */
function fakeApi() {
  const calls: string[] = [];
  let node: Node | undefined;
  let emit: ((e: WatchEvent<Node>) => void) | undefined;
  const api = {
    async get(path: string) {
      calls.push(`get ${path}`);
      return { items: node ? [node] : [], metadata: { resourceVersion: '1' } };
    },
    async create(_path: string, body: Node) {
      calls.push('create');
      node = { ...body, metadata: { ...body.metadata, uid: 'u1', resourceVersion: '2' } };
      return node;
    },
    async patch(path: string) {
      calls.push(`patch ${path.endsWith('/status') ? 'status' : 'node'}`);
      if (!node) throw new ApiError(404, 'NotFound', 'nodes "n1" not found');
      return node;
    },
    watch(_path: string, onEvent: (e: WatchEvent<Node>) => void, signal?: AbortSignal) {
      emit = onEvent;
      return new Promise<void>((resolve) => signal?.addEventListener('abort', () => resolve(), { once: true }));
    },
  } as unknown as ApiClient;
  return {
    api,
    calls,
    /** Someone else (an operator, a cloud controller) creates the Node. */
    createElsewhere() {
      node = { metadata: { name: 'n1', uid: 'u9', resourceVersion: '3' } };
      emit?.({ type: 'ADDED', object: node });
    },
  };
}

const options = (register: boolean, seen: Node[]): NodeAgentOptions => ({
  nodeName: 'n1',
  labels: {},
  taints: [],
  updateEveryMs: 20,
  reportEveryMs: 1_000_000,
  staticInputs: {
    host: {
      machineID: 'm',
      systemUUID: 'u',
      bootID: 'b',
      kernelVersion: '6.1',
      osImage: 'Debian',
      architecture: 'amd64',
      cpuCores: 2,
      memoryBytes: 2 ** 30,
      hugepages: {},
    },
    nodeIPs: ['10.0.0.1'],
    hostname: 'n1',
    kubeletVersion: 'v1.36.3',
    kubeletPort: 10250,
    maxPods: 110,
    reserved: [],
    evictionHard: {},
  },
  fsCapacity: () => 2 ** 30,
  probeRuntime: async () => ({ health: { runtimeReady: true, networkReady: true }, images: [] }),
  onNode: (n) => seen.push(n),
  log: silent,
  register,
});

const until = async (ok: () => boolean) => {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(ok(), 'timed out');
};

test('registerNode true: the Node is created, then its status sent', async () => {
  const fake = fakeApi();
  const seen: Node[] = [];
  const agent = nodeAgent(fake.api, options(true, seen));
  try {
    await until(() => fake.calls.includes('patch status'));
    assert.equal(fake.calls[0], 'create');
    assert.equal(seen[0]?.metadata?.uid, 'u1');
  } finally {
    agent.stop();
  }
});

test('registerNode false: never created; its status is sent once someone else made it', async () => {
  const fake = fakeApi();
  const seen: Node[] = [];
  const agent = nodeAgent(fake.api, options(false, seen));
  try {
    // The status update fails NotFound (and is retried), without a create.
    await until(() => fake.calls.includes('patch status'));
    assert.ok(!fake.calls.includes('create'));
    assert.equal(seen.length, 0);
    fake.createElsewhere();
    await until(() => seen.some((n) => n.metadata?.uid === 'u9'));
    // Woken, the retry sends the status to it.
    const before = fake.calls.length;
    agent.poke();
    await until(() => fake.calls.slice(before).includes('patch status'));
    assert.ok(!fake.calls.includes('create'), 'still never created');
  } finally {
    agent.stop();
  }
});
