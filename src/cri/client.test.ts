import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Server,
  ServerCredentials,
  status,
  type sendUnaryData,
  type ServerUnaryCall,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { CriError } from './error.ts';
import { ImageClient } from './image-client.ts';
import { criServices } from './proto.ts';
import { RuntimeClient } from './runtime-client.ts';
import type { SpanData } from '../tracing/span.ts';
import { TracerProvider } from '../tracing/tracer.ts';

type Handler = (call: ServerUnaryCall<any, any>, callback: sendUnaryData<any>) => void;

// A fake runtime on a unix socket, loaded from the same proto; tests swap handlers.
const handlers: Record<string, Handler> = {};
const calls: Record<string, number> = {};
const implementation = (names: string[]): UntypedServiceImplementation =>
  Object.fromEntries(
    names.map((name) => [
      name,
      (call: ServerUnaryCall<any, any>, callback: sendUnaryData<any>) => {
        calls[name] = (calls[name] ?? 0) + 1;
        const handler = handlers[name];
        if (handler) handler(call, callback);
        else callback({ code: status.UNIMPLEMENTED, details: `${name} not faked` });
      },
    ]),
  );

let dir: string;
let server: Server;
let runtime: RuntimeClient;
let image: ImageClient;
const observed: [string, number, CriError | undefined][] = [];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cri-test-'));
  server = new Server();
  const { runtime: runtimeService, image: imageService } = criServices();
  server.addService(runtimeService, implementation(Object.keys(runtimeService)));
  server.addService(imageService, implementation(Object.keys(imageService)));
  await new Promise<number>((resolve, reject) =>
    server.bindAsync(`unix://${dir}/cri.sock`, ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))),
  );
  const options = { retryDelayMs: 5, observer: (op: string, s: number, e?: CriError) => void observed.push([op, s, e]) };
  runtime = new RuntimeClient(`unix://${dir}/cri.sock`, options);
  image = new ImageClient(`${dir}/cri.sock`, options);
});

after(async () => {
  runtime.close();
  image.close();
  server.forceShutdown();
  await rm(dir, { recursive: true, force: true });
});

function reset() {
  for (const k of Object.keys(handlers)) delete handlers[k];
  for (const k of Object.keys(calls)) delete calls[k];
  observed.length = 0;
}

test('a call round-trips maps, bytes and 64-bit integers', async () => {
  reset();
  let received: any;
  handlers.CreateContainer = (call, cb) => {
    received = call.request;
    cb(null, { containerId: 'c1' });
  };
  handlers.ExecSync = (_call, cb) => cb(null, { stdout: Buffer.from([0xff, 0x00, 0x41]), exitCode: 3 });
  handlers.PodSandboxStatus = (_call, cb) => cb(null, { status: { id: 'p1', createdAt: '1763812857276476673', labels: { app: 'web' } } });

  const env = Buffer.from([0xc3, 0x28]); // not valid UTF-8: must arrive byte for byte
  const created = await runtime.createContainer({
    podSandboxId: 'p1',
    config: { metadata: { name: 'web' }, labels: { app: 'web', tier: 'front' }, envs: [{ key: 'RAW', value: env }] },
  });
  assert.deepEqual(created, { containerId: 'c1' });
  assert.deepEqual(received.config.labels, { app: 'web', tier: 'front' });
  assert.deepEqual(received.config.envs, [{ key: 'RAW', value: env }]);

  const exec = await runtime.execSync({ containerId: 'c1', cmd: ['true'] });
  assert.ok(Buffer.isBuffer(exec.stdout));
  assert.deepEqual([...exec.stdout], [0xff, 0x00, 0x41]);
  assert.equal(exec.stderr.length, 0);
  assert.equal(exec.exitCode, 3);

  const sandbox = await runtime.podSandboxStatus({ podSandboxId: 'p1' });
  assert.equal(sandbox.status?.createdAt, '1763812857276476673'); // beyond 2^53: a string, exact
  assert.equal(sandbox.status?.state, 'SANDBOX_READY'); // defaults and enums as strings
  assert.deepEqual(sandbox.status?.labels, { app: 'web' });
  assert.deepEqual(
    observed.map(([op, , e]) => [op, e]),
    [
      ['create_container', undefined],
      ['exec_sync', undefined],
      ['podsandbox_status', undefined],
    ],
  );
});

test('an error names the call and carries the grpc code', async () => {
  reset();
  handlers.RunPodSandbox = (_call, cb) => cb({ code: status.UNKNOWN, details: 'failed to setup network' });
  const err = await runtime.runPodSandbox({ config: {} }).catch((e: unknown) => e);
  assert.ok(err instanceof CriError);
  assert.equal(err.message, 'CRI RunPodSandbox failed: code 2 UNKNOWN: failed to setup network');
  assert.equal(err.code, status.UNKNOWN);
  assert.equal(err.method, 'RunPodSandbox');
  assert.equal(observed.length, 1);
  assert.equal(observed[0]![0], 'run_podsandbox');
  assert.equal(observed[0]![2], err);
});

test('a read retries on UNAVAILABLE, then succeeds', async () => {
  reset();
  handlers.ListContainers = (_call, cb) =>
    calls.ListContainers! < 3 ? cb({ code: status.UNAVAILABLE, details: 'restarting' }) : cb(null, { containers: [{ id: 'c1' }] });
  const list = await runtime.listContainers();
  assert.deepEqual(
    list.containers.map((c) => c.id),
    ['c1'],
  );
  assert.equal(calls.ListContainers, 3);
  assert.deepEqual(
    observed.map(([op, , e]) => [op, e]),
    [['list_containers', undefined]],
  );
});

test('a read gives up after 3 tries', async () => {
  reset();
  handlers.ListImages = (_call, cb) => cb({ code: status.UNAVAILABLE, details: 'restarting' });
  await assert.rejects(image.listImages(), { name: 'CriError', code: status.UNAVAILABLE });
  assert.equal(calls.ListImages, 3);
});

test('a write is not retried', async () => {
  reset();
  handlers.CreateContainer = (_call, cb) => cb({ code: status.UNAVAILABLE, details: 'restarting' });
  await assert.rejects(runtime.createContainer({ podSandboxId: 'p1' }), {
    message: 'CRI CreateContainer failed: code 14 UNAVAILABLE: restarting',
  });
  assert.equal(calls.CreateContainer, 1);
});

test('a deadline fires', async () => {
  reset();
  handlers.StartContainer = () => {}; // never answers
  const started = Date.now();
  await assert.rejects(runtime.startContainer({ containerId: 'c1' }, { timeoutMs: 100 }), {
    code: status.DEADLINE_EXCEEDED,
    message: /^CRI StartContainer failed: code 4 DEADLINE_EXCEEDED: /,
  });
  assert.ok(Date.now() - started < 1000);
});

test('stopContainer waits longer than the grace period', async () => {
  reset();
  let deadline = 0;
  handlers.StopContainer = (call, cb) => {
    deadline = Number(call.getDeadline());
    cb(null, {});
  };
  await runtime.stopContainer({ containerId: 'c1', timeout: 30 });
  assert.ok(deadline - Date.now() > 30_000 + 110_000, `deadline only ${deadline - Date.now()} ms away`);
});

test('runtimeRequestTimeout is the deadline of the calls that change state, and what StopContainer adds its grace period to', async () => {
  reset();
  const short = new RuntimeClient(`unix://${dir}/cri.sock`, { requestTimeoutMs: 150 });
  const shortImages = new ImageClient(`unix://${dir}/cri.sock`, { requestTimeoutMs: 150 });
  try {
    const deadlines: Record<string, number> = {};
    for (const name of ['RemovePodSandbox', 'StopContainer', 'RemoveImage', 'ListContainers'])
      handlers[name] = (call, cb) => {
        deadlines[name] = Number(call.getDeadline()) - Date.now();
        cb(null, {});
      };
    await short.removePodSandbox({ podSandboxId: 's' });
    await short.stopContainer({ containerId: 'c1', timeout: 2 });
    await shortImages.removeImage({ image: { image: 'i' } });
    await short.listContainers({});
    assert.ok(deadlines.RemovePodSandbox! <= 150, `RemovePodSandbox ${deadlines.RemovePodSandbox} ms`);
    assert.ok(deadlines.StopContainer! > 2000 && deadlines.StopContainer! <= 2150, `StopContainer ${deadlines.StopContainer} ms`);
    assert.ok(deadlines.RemoveImage! <= 150, `RemoveImage ${deadlines.RemoveImage} ms`);
    assert.ok(deadlines.ListContainers! > 150, 'a read keeps its own deadline');
    handlers.RemovePodSandbox = () => {}; // never answers
    await assert.rejects(short.removePodSandbox({ podSandboxId: 's' }), { code: status.DEADLINE_EXCEEDED });
  } finally {
    short.close();
    shortImages.close();
  }
});

test('PullImage has no deadline, as upstream; its signal cancels it', async () => {
  reset();
  let deadline: unknown;
  handlers.PullImage = (call, cb) => {
    deadline = call.getDeadline();
    cb(null, { imageRef: 'sha256:x' });
  };
  await image.pullImage({ image: { image: 'r.io/big:1' } });
  assert.equal(deadline, Number.POSITIVE_INFINITY);
  handlers.PullImage = () => {}; // a pull that never ends
  const ac = new AbortController();
  const pulling = image.pullImage({ image: { image: 'r.io/big:1' } }, { signal: ac.signal });
  setTimeout(() => ac.abort(), 50);
  await assert.rejects(pulling, { code: status.CANCELLED });
});

test('an unreachable socket says so on one line', async () => {
  const missing = new RuntimeClient(`unix://${dir}/missing.sock`, { readAttempts: 1 });
  try {
    const err = await missing.version().catch((e: unknown) => e);
    assert.ok(err instanceof CriError);
    assert.equal(err.code, status.UNAVAILABLE);
    assert.equal(
      err.message,
      `CRI Version failed: code 14 UNAVAILABLE: cannot reach the container runtime at unix://${dir}/missing.sock: connect ENOENT ${dir}/missing.sock`,
    );
  } finally {
    missing.close();
  }
});

test("with tracing, each call is otelgrpc's client span, a child of the current span, its traceparent in the metadata", async () => {
  reset();
  const spans: SpanData[] = [];
  const provider = new TracerProvider(1, { add: (s) => void spans.push(s) });
  const traced = new RuntimeClient(`unix://${dir}/cri.sock`, { tracer: provider.tracer({ name: 'otelgrpc' }) });
  let traceparent: unknown;
  handlers.Version = (call, cb) => {
    traceparent = call.metadata.get('traceparent')[0];
    cb(null, { runtimeName: 'fake' });
  };
  handlers.RemovePodSandbox = (_call, cb) => cb({ code: status.NOT_FOUND, details: 'no such sandbox' });
  try {
    await provider.tracer({ name: 'kubelet' }).inSpan('syncPod', {}, async () => {
      await traced.version();
      await traced.removePodSandbox({ podSandboxId: 'gone' }).catch(() => {});
    });
  } finally {
    traced.close();
  }
  const [version, remove, sync] = spans as [SpanData, SpanData, SpanData];
  assert.equal(version.name, 'runtime.v1.RuntimeService/Version');
  assert.equal(version.kind, 3);
  assert.deepEqual(version.attributes, {
    'rpc.method': 'runtime.v1.RuntimeService/Version',
    'rpc.system.name': 'grpc',
    'server.address': `${dir}/cri.sock`,
    'rpc.response.status_code': 'OK',
  });
  assert.deepEqual(
    version.events.map((e) => [e.name, e.attributes['rpc.message.type']]),
    [
      ['message', 'SENT'],
      ['message', 'RECEIVED'],
    ],
  );
  assert.equal(Buffer.from(version.parentSpanId!).toString('hex'), Buffer.from(sync.spanId).toString('hex'));
  assert.equal(traceparent, `00-${Buffer.from(version.traceId).toString('hex')}-${Buffer.from(version.spanId).toString('hex')}-01`);
  assert.equal(remove.attributes['rpc.response.status_code'], 'NOT_FOUND');
  assert.deepEqual(remove.status, { code: 2, message: 'no such sandbox' });
});
