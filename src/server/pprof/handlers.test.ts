import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { logger } from '../../log/log.ts';
import { Router } from '../router.ts';
import type { CpuProfile, HeapNode } from './convert.ts';
import { HEAP_INTERVAL_BYTES, indexPage, pprofHandler, profileSeconds } from './handlers.ts';
import { inspectorProfiler, type Profiler } from './profiler.ts';

const frame = (functionName: string) => ({ functionName, url: 'file:///k.js', lineNumber: 0, columnNumber: 0 });
const cpuProfile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)'), children: [2] },
    { id: 2, callFrame: frame('busy') },
  ],
  startTime: 0,
  endTime: 1_000_000,
  samples: [2, 2],
  timeDeltas: [0, 10_000],
};

/** A profiler that records its calls; a CPU profile runs until stopped. */
function fakeProfiler(): Profiler & { calls: string[] } {
  let running = false;
  const calls: string[] = [];
  return {
    calls,
    async startCpu(interval) {
      calls.push(`startCpu ${interval}`);
      if (running) return false;
      running = true;
      return true;
    },
    async stopCpu() {
      calls.push('stopCpu');
      running = false;
      return cpuProfile;
    },
    async startHeapSampling(interval) {
      calls.push(`startHeapSampling ${interval}`);
    },
    async heapProfile(): Promise<HeapNode> {
      return { callFrame: frame('(root)'), selfSize: 0, children: [{ callFrame: frame('alloc'), selfSize: 1024, children: [] }] };
    },
  };
}

async function serve(profiler: Profiler) {
  const app = new Router();
  app.get(
    /^\/debug\/pprof\/.*$/,
    pprofHandler({ profiler, log: logger('test'), argv: ['/usr/bin/node', '/opt/kubelet-ts/main.js', '--v=2'] }),
  );
  const s = createServer(app.listener());
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  const get = (path: string) =>
    new Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }>((resolve, reject) =>
      request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      })
        .on('error', reject)
        .end(),
    );
  return { get, close: () => s.close() };
}

test("profileSeconds: Go's reading of seconds, 30 unless a positive integer", () => {
  const cases: [unknown, number][] = [
    [undefined, 30],
    ['', 30],
    ['10', 10],
    ['+5', 5],
    ['0', 30],
    ['-3', 30],
    ['1.5', 30],
    ['x', 30],
    [['2', '3'], 30],
  ];
  for (const [raw, want] of cases) assert.equal(profileSeconds(raw), want, JSON.stringify(raw));
});

test('/debug/pprof/: the index, cmdline, Go\'s "Unknown profile" for what Node has not, heap, heap sampling started at the first heap request', async () => {
  const profiler = fakeProfiler();
  const { get, close } = await serve(profiler);
  try {
    assert.deepEqual(profiler.calls, [], 'nothing sampled until asked');
    const index = await get('/debug/pprof/');
    assert.equal(index.status, 200);
    assert.equal(index.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(index.body.toString(), indexPage());
    for (const n of ['cmdline', 'heap', 'profile']) assert.match(indexPage(), new RegExp(`<a href='${n}\\?debug=1'>${n}</a>`));
    assert.doesNotMatch(indexPage(), /goroutine/);

    const cmdline = await get('/debug/pprof/cmdline');
    assert.deepEqual([cmdline.status, cmdline.body.toString()], [200, '/usr/bin/node\0/opt/kubelet-ts/main.js\0--v=2']);

    for (const name of ['goroutine', 'block', 'mutex', 'threadcreate', 'allocs', 'trace', 'symbol', 'nope']) {
      const r = await get(`/debug/pprof/${name}`);
      assert.deepEqual(
        [r.status, r.body.toString(), r.headers['x-go-pprof'], r.headers['content-type']],
        [404, 'Unknown profile\n', '1', 'text/plain; charset=utf-8'],
      );
    }

    const heap = await get('/debug/pprof/heap');
    assert.equal(heap.status, 200);
    assert.equal(heap.headers['content-disposition'], 'attachment; filename="heap"');
    assert.equal(heap.headers['content-type'], 'application/octet-stream');
    assert.match(gunzipSync(heap.body).toString('latin1'), /inuse_space/);
    assert.deepEqual(profiler.calls, [`startHeapSampling ${HEAP_INTERVAL_BYTES}`]);
    const delta = await get('/debug/pprof/heap?seconds=5');
    assert.deepEqual([delta.status, delta.body.toString()], [400, '"seconds" parameter is not supported for this profile type\n']);
  } finally {
    close();
  }
});

test('/debug/pprof/profile: for seconds, gzipped profile.proto; a second one meanwhile is refused as Go refuses it', async () => {
  const profiler = fakeProfiler();
  const { get, close } = await serve(profiler);
  try {
    const first = get('/debug/pprof/profile?seconds=1');
    await new Promise((r) => setTimeout(r, 200));
    const second = await get('/debug/pprof/profile?seconds=1');
    assert.deepEqual(
      [second.status, second.body.toString(), second.headers['content-disposition']],
      [500, 'Could not enable CPU profiling: cpu profiling already in use\n', undefined],
    );
    const r = await first;
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/octet-stream');
    assert.equal(r.headers['content-disposition'], 'attachment; filename="profile"');
    assert.equal(r.headers['x-content-type-options'], 'nosniff');
    assert.match(gunzipSync(r.body).toString('latin1'), /busy/);
    assert.deepEqual(profiler.calls, ['startCpu 10000', 'startCpu 10000', 'stopCpu']);
  } finally {
    close();
  }
});

// The real profilers of this process, read back by the real tool.
const GO = process.env.GO ?? '/usr/local/go/bin/go';
function pprofTop(bytes: Buffer, ...args: string[]): string {
  assert.ok(existsSync(GO), `go tool pprof is needed to check the profiles: no go at ${GO} (set GO=/path/to/go)`);
  const dir = mkdtempSync(join(tmpdir(), 'pprof-'));
  try {
    writeFileSync(join(dir, 'p.pb.gz'), bytes);
    return execFileSync(GO, ['tool', 'pprof', '-top', ...args, join(dir, 'p.pb.gz')], {
      encoding: 'utf8',
      env: { ...process.env, PPROF_TMPDIR: dir },
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function spinForAWhile(ms: number): number {
  let x = 0;
  const end = Date.now() + ms;
  while (Date.now() < end) for (let i = 0; i < 10_000; i++) x += Math.sqrt(i);
  return x;
}

test('the inspector: a real CPU profile and heap profile of this process, which go tool pprof reads', async () => {
  const { get, close } = await serve(inspectorProfiler);
  try {
    const pending = get('/debug/pprof/profile?seconds=1');
    await new Promise((r) => setTimeout(r, 100));
    spinForAWhile(600);
    const cpu = await pending;
    assert.equal(cpu.status, 200);
    const top = pprofTop(cpu.body, '-sample_index=cpu');
    assert.match(top, /Type: cpu/);
    assert.match(top, /spinForAWhile/);

    // The first heap request starts sampling; what is allocated after it is in the next one.
    assert.equal((await get('/debug/pprof/heap')).status, 200);
    globalThis.keepForHeapTest = Array.from({ length: 100 }, () => new Array(100_000).fill(1));
    const heap = await get('/debug/pprof/heap');
    assert.equal(heap.status, 200);
    const heapTop = pprofTop(heap.body);
    assert.match(heapTop, /Type: inuse_space/);
    assert.match(heapTop, /MB/);
    globalThis.keepForHeapTest = undefined;
  } finally {
    close();
  }
});

declare global {
  var keepForHeapTest: unknown;
}
