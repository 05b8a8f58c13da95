import { test, after } from 'node:test';
import type { SpanData } from '../tracing/span.ts';
import { TracerProvider } from '../tracing/tracer.ts';
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { createServer, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { Counter, Registry } from 'prom-client';
import { logger } from '../log/log.ts';
import type { Attributes } from './authz.ts';
import type { RequestLabels } from './request-metrics.ts';
import { kubeletServer, podList, readOnlyKubeletServer, type ServerDeps } from './server.ts';
import { isOpen } from '../container-logs/testing.ts';

const logDir = mkdtempSync(join(tmpdir(), 'pods-'));
const rec = (sec: number, stream: string, text: string) => `2026-11-22T12:00:${String(sec).padStart(2, '0')}.5Z ${stream} F ${text}\n`;
function logFile(name: string, content: string): string {
  mkdirSync(join(logDir, name), { recursive: true });
  const path = join(logDir, name, '0.log');
  writeFileSync(path, content);
  return path;
}

const pod: Pod = {
  metadata: { namespace: 'default', name: 'web', uid: 'u1' },
  spec: { containers: [{ name: 'app' }, { name: 'silent' }, { name: 'gone' }], initContainers: [{ name: 'init' }] },
};
const appLog = logFile('app', rec(1, 'stdout', 'one') + rec(2, 'stderr', 'two') + rec(3, 'stdout', 'three'));
const initLog = logFile('init', rec(0, 'stdout', 'initialised'));
const followed = logFile('follow', rec(1, 'stdout', 'start'));
let healthProblem: string | undefined;
let authzCalls: Attributes[] = [];

const registry = new Registry();
const probeMetrics = new Registry();
new Counter({ name: 'prober_probe_total', help: 'Probes.', registers: [probeMetrics] }).inc();
let statsDown = false;
const varLog = mkdtempSync(join(tmpdir(), 'varlog-'));
writeFileSync(join(varLog, 'syslog'), 'booted\n');
new Counter({ name: 'kubelet_test_total', help: 'A test counter.', registers: [registry] }).inc();

// Users by header: admin may do anything, reader only get nodes/pods, broken makes the authorizer fail.
const deps: ServerDeps = {
  nodeName: 'node-1',
  pods: () => [pod],
  containerLog: async (_ns, _name, container, previous) => {
    if (container === 'app' && !previous) return { path: appLog, running: () => false };
    if (container === 'init') return { path: initLog, running: () => false };
    if (container === 'silent' && !previous) return { path: followed, running: () => true };
    if (container === 'gone') return { path: join(logDir, 'gone', '0.log'), running: () => false };
    return undefined;
  },
  metrics: registry,
  probeMetrics,
  stats: {
    summaryJSON: async (only) => {
      if (statsDown) throw new Error('failed to list pod stats: runtime down');
      return JSON.stringify({ node: { nodeName: 'node-1', only }, pods: [] });
    },
    cadvisorMetrics: async () => 'container_memory_working_set_bytes{container="",id="/",image="",name="",namespace="",pod=""} 5 1\n',
    resourceMetrics: async () => 'node_cpu_usage_seconds_total 1 1\n',
  },
  runningPods: async () => [
    { metadata: { name: 'web', namespace: 'default', uid: 'u1' }, spec: { containers: [{ name: 'app', image: 'busybox' }] } },
  ],
  configz: () => ({ kubeletconfig: { staticPodPath: '/etc/kubernetes/manifests' } }),
  systemLogsDir: varLog,
  healthy: () => healthProblem,
  authenticate: async (req) => {
    const name = req.headers['x-user'];
    return typeof name === 'string' ? { name, groups: ['system:authenticated'] } : undefined;
  },
  authorize: async (user, a) => {
    authzCalls.push(a);
    if (user.name === 'broken') throw new Error('apiserver down');
    return { allowed: user.name === 'admin' || (user.name === 'reader' && a.subresource === 'pods') };
  },
  log: logger('test'),
};

const server = createServer(kubeletServer(deps));
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const { port } = server.address() as AddressInfo;
after(() => {
  server.closeAllConnections();
  server.close();
});

function get(path: string, user: string | null = 'admin'): Promise<{ status: number; type?: string; body: string }> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, agent: false, headers: user ? { 'x-user': user } : {} }, (res) => {
      let body = '';
      res
        .setEncoding('utf8')
        .on('data', (d) => {
          body += d;
        })
        .on('end', () => resolve({ status: res.statusCode!, type: res.headers['content-type'], body }));
    })
      .on('error', reject)
      .end();
  });
}

test('healthz', async () => {
  healthProblem = undefined;
  assert.deepEqual(await get('/healthz'), { status: 200, type: 'text/plain; charset=utf-8', body: 'ok' });
  assert.equal((await get('/healthz?verbose')).body, '[+]ping ok\n[+]log ok\n[+]syncloop ok\nhealthz check passed\n');
  assert.equal((await get('/healthz/ping')).body, 'ok');
  healthProblem = 'PLEG is not healthy: pleg was last seen active 4m0s ago';
  assert.equal((await get('/healthz')).status, 500);
  assert.deepEqual(await get('/healthz/syncloop'), {
    status: 500,
    type: 'text/plain; charset=utf-8',
    body: 'internal server error: PLEG is not healthy: pleg was last seen active 4m0s ago\n',
  });
  assert.equal((await get('/healthz/nope')).status, 404);
  healthProblem = undefined;
});

test('pods and metrics', async () => {
  const pods = await get('/pods');
  assert.equal(pods.status, 200);
  assert.match(pods.type!, /^application\/json/);
  assert.deepEqual(JSON.parse(pods.body), { kind: 'PodList', apiVersion: 'v1', metadata: {}, items: [pod] });
  const metrics = await get('/metrics');
  assert.equal(metrics.status, 200);
  assert.equal(metrics.type, registry.contentType);
  assert.match(metrics.body, /^kubelet_test_total 1$/m);
  const resource = await get('/metrics/resource');
  assert.equal(resource.status, 200);
  assert.match(resource.body, /^node_cpu_usage_seconds_total 1 1$/m);
});

test('stats/summary: JSON, only_cpu_and_memory, 400 on a malformed query, 500 when the runtime fails', async () => {
  const r = await get('/stats/summary');
  assert.equal(r.status, 200);
  assert.match(r.type!, /^application\/json/);
  assert.deepEqual(JSON.parse(r.body), { node: { nodeName: 'node-1', only: false }, pods: [] });
  assert.equal(JSON.parse((await get('/stats/summary?only_cpu_and_memory=true')).body).node.only, true);
  assert.deepEqual(await get('/stats/summary?only_cpu_and_memory=maybe'), {
    status: 400,
    type: 'text/plain; charset=utf-8',
    body: 'invalid value "maybe" for query parameter only_cpu_and_memory: must be true or false\n',
  });
  const posted = await new Promise<number>((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: '/stats/summary', method: 'POST', agent: false, headers: { 'x-user': 'admin' } }, (res) => {
      res.resume();
      resolve(res.statusCode!);
    })
      .on('error', reject)
      .end();
  });
  assert.equal(posted, 200, 'upstream answers POST too');
  statsDown = true;
  try {
    assert.deepEqual(await get('/stats/summary'), {
      status: 500,
      type: 'text/plain; charset=utf-8',
      body: 'Internal Error: failed to list pod stats: runtime down\n',
    });
  } finally {
    statsDown = false;
  }
});

test('metrics/cadvisor, metrics/probes, runningpods, configz and logs', async () => {
  const cadvisor = await get('/metrics/cadvisor');
  assert.equal(cadvisor.type, 'text/plain; version=0.0.4; charset=utf-8');
  assert.match(cadvisor.body, /^container_memory_working_set_bytes\{/m);
  assert.match((await get('/metrics/probes')).body, /^prober_probe_total 1$/m);
  assert.doesNotMatch((await get('/metrics')).body, /prober_probe_total/, 'probe metrics have their own registry');
  assert.deepEqual(JSON.parse((await get('/runningpods/')).body), {
    kind: 'PodList',
    apiVersion: 'v1',
    metadata: {},
    items: [{ metadata: { name: 'web', namespace: 'default', uid: 'u1' }, spec: { containers: [{ name: 'app', image: 'busybox' }] } }],
  });
  assert.equal(JSON.parse((await get('/configz')).body).kubeletconfig.staticPodPath, '/etc/kubernetes/manifests');
  assert.match((await get('/logs/')).body, /<a href="syslog">syslog<\/a>/);
  assert.equal((await get('/logs/syslog')).body, 'booted\n');
  assert.equal((await get('/logs/../etc/passwd')).status, 400);
  assert.equal((await get('/logs')).status, 404, 'as upstream, only /logs/ and below');
});

test('new endpoints are authorized as their upstream subresources', async () => {
  const denied = async (path: string) => (await get(path, 'reader')).body;
  assert.equal(await denied('/stats/summary'), 'Forbidden (user=reader, verb=get, resource=nodes, subresource(s)=[stats])\n');
  assert.equal(await denied('/metrics/cadvisor'), 'Forbidden (user=reader, verb=get, resource=nodes, subresource(s)=[metrics])\n');
  assert.equal(await denied('/logs/syslog'), 'Forbidden (user=reader, verb=get, resource=nodes, subresource(s)=[log])\n');
  assert.equal(await denied('/configz'), 'Forbidden (user=reader, verb=get, resource=nodes, subresource(s)=[configz proxy])\n');
  assert.equal((await get('/runningpods/', 'reader')).status, 200, 'nodes/pods is enough for running pods');
});

test('unknown paths are 404 once authorized', async () => {
  assert.deepEqual(await get('/nope'), { status: 404, type: 'text/plain; charset=utf-8', body: '404 page not found\n' });
  assert.equal((await get('/nope', null)).status, 401);
  assert.equal((await get('/PODS')).status, 404); // routing is case-sensitive, as the authorization mapping
});

test('401 without a user, 403 with upstream message, 500 when authorization fails', async () => {
  assert.deepEqual(await get('/pods', null), { status: 401, type: 'text/plain; charset=utf-8', body: 'Unauthorized' });
  authzCalls = [];
  assert.deepEqual(await get('/healthz', 'nobody'), {
    status: 403,
    type: 'text/plain; charset=utf-8',
    body: 'Forbidden (user=nobody, verb=get, resource=nodes, subresource(s)=[healthz proxy])\n',
  });
  assert.deepEqual(
    authzCalls.map((a) => [a.verb, a.resource, a.subresource, a.name]),
    [
      ['get', 'nodes', 'healthz', 'node-1'],
      ['get', 'nodes', 'proxy', 'node-1'],
    ],
  );
  assert.equal((await get('/pods', 'reader')).status, 200);
  assert.equal((await get('/metrics', 'reader')).body, 'Forbidden (user=reader, verb=get, resource=nodes, subresource(s)=[metrics])\n');
  assert.equal((await get('/containerLogs/default/web/app', 'reader')).status, 403);
  assert.deepEqual(await get('/pods', 'broken'), {
    status: 500,
    type: 'text/plain; charset=utf-8',
    body: 'Authorization error (user=broken, verb=get, resource=nodes, subresource=pods)',
  });
});

test('containerLogs streams the log with the query options', async () => {
  const cases: [query: string, body: string][] = [
    ['', 'one\ntwo\nthree\n'],
    ['?tailLines=1&timestamps=true', '2026-11-22T12:00:03.500000000Z three\n'],
    ['?limitBytes=6', 'one\ntw'],
    ['?sinceTime=2026-11-22T12:00:02Z', 'two\nthree\n'],
    ['?follow=true', 'one\ntwo\nthree\n'], // the container is not running: ends at the end of the log
  ];
  for (const [query, body] of cases) {
    assert.deepEqual(await get(`/containerLogs/default/web/app${query}`), { status: 200, type: 'text/plain; charset=utf-8', body }, query);
  }
  assert.equal((await get('/containerLogs/default/web/init')).body, 'initialised\n');
});

test('containerLogs errors name what is wrong', async () => {
  const cases: [path: string, status: number, body: string][] = [
    ['/containerLogs/default/web/app?tailLines=x', 400, 'invalid value "x" for query parameter tailLines: must be an integer'],
    ['/containerLogs/default/web/app?sinceTime=noon', 400, 'invalid value "noon" for query parameter sinceTime: must be an RFC3339 time'],
    ['/containerLogs/default/web/app?limitBytes=0', 422, 'limitBytes: Invalid value: 0: must be greater than 0'],
    ['/containerLogs/default/db/app', 404, 'pod "db" does not exist in namespace "default"'],
    ['/containerLogs/other/web/app', 404, 'pod "web" does not exist in namespace "other"'],
    ['/containerLogs/default/web/sidecar', 404, 'container "sidecar" not found in pod "web"'],
    ['/containerLogs/default/web/app?previous=true', 404, 'previous terminated container "app" in pod "web" not found'],
    ['/containerLogs/default/web/gone', 404, 'log of container "gone" in pod "web" not found'],
  ];
  for (const [path, status, body] of cases) assert.deepEqual(await get(path), { status, type: 'text/plain; charset=utf-8', body }, path);
});

test('containerLogs follow streams as the log grows and stops when the client goes away', async () => {
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    request(
      { host: '127.0.0.1', port, path: '/containerLogs/default/web/silent?follow=true', agent: false, headers: { 'x-user': 'admin' } },
      resolve,
    )
      .on('error', reject)
      .end();
  });
  assert.equal(res.statusCode, 200);
  let body = '';
  res.setEncoding('utf8').on('data', (d) => {
    body += d;
  });
  const until = async (cond: () => boolean) => {
    for (let i = 0; i < 200 && !cond(); i++) await sleep(10);
    assert.ok(cond(), body);
  };
  await until(() => body === 'start\n');
  appendFileSync(followed, rec(5, 'stdout', 'more'));
  await until(() => body === 'start\nmore\n');
  assert.equal(isOpen(followed), true);
  res.destroy();
  await until(() => !isOpen(followed));
});

test('/pods body: kept while the pod objects are the same, rebuilt when one is replaced', () => {
  const a = { metadata: { name: 'a' } },
    b = { metadata: { name: 'b' } };
  const first = podList([a, b]);
  assert.equal(podList([a, b]), first, 'the same Buffer for the same objects');
  const b2 = { metadata: { name: 'b', labels: { v: '2' } } };
  const next = podList([a, b2]);
  assert.notEqual(next, first);
  assert.deepEqual(
    JSON.parse(next.toString()).items.map((p: { metadata: { name: string } }) => p.metadata.name),
    ['a', 'b'],
  );
  assert.equal(JSON.parse(podList([a]).toString()).items.length, 1);
});

// The read-only port: the same default handlers without the auth filter; deps carry the
// authenticator and authorizer of :10250 to prove they are never asked.
const observed: RequestLabels[] = [];
const readOnly = createServer(
  readOnlyKubeletServer({
    ...deps,
    authenticate: async () => assert.fail('the read-only port authenticates nobody'),
    authorize: async () => assert.fail('the read-only port authorizes nothing'),
    observeRequest: (labels) => {
      observed.push(labels);
      return () => {};
    },
  } as ServerDeps),
);
await new Promise<void>((r) => readOnly.listen(0, '127.0.0.1', r));
const readOnlyPort = (readOnly.address() as AddressInfo).port;
// After the last top-level await: a root hook registered before it would run once the tests before it are done.
after(() => {
  readOnly.closeAllConnections();
  readOnly.close();
  for (const d of [logDir, varLog]) rmSync(d, { recursive: true, force: true });
});

function getReadOnly(path: string, method = 'GET', headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port: readOnlyPort, path, method, agent: false, headers }, (res) => {
      let body = '';
      res
        .setEncoding('utf8')
        .on('data', (d) => {
          body += d;
        })
        .on('end', () => resolve({ status: res.statusCode!, body }));
    })
      .on('error', reject)
      .end();
  });
}

test('read-only port: the default handlers, without credentials', async () => {
  healthProblem = undefined;
  assert.deepEqual(await getReadOnly('/healthz'), { status: 200, body: 'ok' });
  assert.equal((await getReadOnly('/healthz/syncloop')).body, 'ok');
  assert.deepEqual(JSON.parse((await getReadOnly('/pods')).body).items, [pod]);
  assert.match((await getReadOnly('/metrics')).body, /^kubelet_test_total 1$/m);
  assert.deepEqual(JSON.parse((await getReadOnly('/stats/summary')).body), { node: { nodeName: 'node-1', only: false }, pods: [] });
  assert.equal((await getReadOnly('/stats/summary', 'POST')).status, 200);
  assert.match((await getReadOnly('/metrics/cadvisor')).body, /^container_memory_working_set_bytes\{/m);
  assert.match((await getReadOnly('/metrics/resource')).body, /^node_cpu_usage_seconds_total 1 1$/m);
  assert.match((await getReadOnly('/metrics/probes')).body, /^prober_probe_total 1$/m);
});

test('read-only port: never the debugging handlers (405 as upstream InstallDebuggingDisabledHandlers), /configz 404', async () => {
  const disabled = { status: 405, body: 'Debug endpoints are disabled.\n' };
  for (const [path, method] of [
    ['/exec/default/web/app?command=ls&output=1', 'POST'],
    ['/attach/default/web/app?output=1', 'POST'],
    ['/portForward/default/web', 'POST'],
    ['/run/default/web/app?cmd=ls', 'POST'],
    ['/containerLogs/default/web/app', 'GET'],
    ['/logs/', 'GET'],
    ['/logs/syslog', 'GET'],
    ['/runningpods/', 'GET'],
    ['/debug/pprof/', 'GET'],
  ])
    assert.deepEqual(await getReadOnly(path!, method), disabled, path);
  // A streaming upgrade is not taken up: no upgrade listener, so it is a plain request.
  assert.deepEqual(
    await getReadOnly('/exec/default/web/app?command=ls&output=1', 'POST', { Connection: 'Upgrade', Upgrade: 'SPDY/3.1' }),
    disabled,
  );
  assert.deepEqual(await getReadOnly('/configz'), { status: 404, body: '404 page not found\n' });
  assert.equal((await getReadOnly('/debug/flags/v')).status, 404);
  assert.equal((await getReadOnly('/nope')).status, 404);
});

test('enableDebuggingHandlers false: the debugging endpoints answer 405 to anyone, /configz is gone, the rest still served', async () => {
  const disabled = { status: 405, body: 'Debug endpoints are disabled.\n' };
  const off = { debuggingHandlers: false };
  for (const path of [
    '/exec/default/web/app?command=ls&output=1',
    '/containerLogs/default/web/app',
    '/logs/',
    '/runningpods/',
    '/debug/pprof/',
  ])
    assert.deepEqual(await once(off, path, null), disabled, path);
  assert.equal((await once(off, '/configz', 'admin')).status, 404);
  assert.equal((await once(off, '/healthz', 'admin')).status, 200);
  assert.equal((await once(off, '/pods', null)).status, 401, 'the other endpoints keep their authentication');
  assert.equal((await once({}, '/configz', 'admin')).status, 200, 'on by default');
});

test('read-only port: requests count under server_type readonly', async () => {
  observed.length = 0;
  await getReadOnly('/pods');
  await getReadOnly('/configz');
  assert.deepEqual(observed, [
    { method: 'GET', path: 'pods', server_type: 'readonly', long_running: 'false' },
    { method: 'GET', path: 'other', server_type: 'readonly', long_running: 'false' },
  ]);
});

/** Serves kubeletServer(over) for one request. */
async function once(over: Partial<ServerDeps>, path: string, user: string | null): Promise<{ status: number; body: string }> {
  const s = createServer(kubeletServer({ ...deps, ...over }));
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  try {
    return await new Promise((resolve, reject) => {
      const { port: p } = s.address() as AddressInfo;
      request({ host: '127.0.0.1', port: p, path, agent: false, headers: user ? { 'x-user': user } : {} }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      })
        .on('error', reject)
        .end();
    });
  } finally {
    s.close();
  }
}

test('enableSystemLogHandler false: /logs/ answers 405 to anyone; enableSystemLogQuery: the query mode', async () => {
  const disabled = { status: 405, body: 'logs endpoint is disabled.\n' };
  assert.deepEqual(await once({ enableSystemLogHandler: false }, '/logs/syslog', null), disabled, 'before authentication, as upstream');
  assert.deepEqual(await once({ enableSystemLogHandler: false }, '/logs/?query=kubelet', 'admin'), disabled);
  assert.equal((await once({}, '/logs/?query', 'admin')).status, 200, 'without the query mode, the file server');
  const journal = {
    units: async () => 'kubelet.service\n',
    read: async (a: string[], out: NodeJS.WritableStream) => {
      out.write(`${a.at(-1)}\n`);
      return 'exited' as const;
    },
  };
  assert.deepEqual(await once({ systemLogQuery: journal }, '/logs/?query', 'admin'), {
    status: 400,
    body: 'query: Invalid value: [""]: may not be empty\n',
  });
  assert.deepEqual(await once({ systemLogQuery: journal }, '/logs/?query=kubelet', 'admin'), { status: 200, body: '--unit=kubelet\n' });
  assert.equal((await once({ systemLogQuery: journal }, '/logs/syslog', 'admin')).body, 'booted\n');
  assert.equal((await once({ systemLogQuery: journal }, '/logs/?query=kubelet', 'reader')).status, 403, 'nodes/log, as the file server');
});

test('enableProfilingHandler and enableDebugFlagsHandler false: /debug/pprof/ and /debug/flags/v answer 405 to anyone', async () => {
  const rows: [Parameters<typeof once>[0], string, { status: number; body?: string }][] = [
    [{ enableProfilingHandler: false }, '/debug/pprof/', { status: 405, body: 'profiling endpoint is disabled.\n' }],
    [{ enableProfilingHandler: false }, '/debug/pprof/heap', { status: 405, body: 'profiling endpoint is disabled.\n' }],
    [{ enableDebugFlagsHandler: false }, '/debug/flags/v', { status: 405, body: 'flags endpoint is disabled.\n' }],
    // Otherwise behind authentication, as upstream's (which then serves Go's pprof).
    [{ enableDebugFlagsHandler: false }, '/debug/pprof/', { status: 401 }],
    [{}, '/debug/flags/v', { status: 401 }],
  ];
  for (const [deps, path, want] of rows) {
    const got = await once(deps, path, null);
    assert.deepEqual(want.body === undefined ? { status: got.status } : got, want, `${JSON.stringify(deps)} ${path}`);
  }
});

test('/debug/flags/v and /debug/pprof/ served behind nodes/proxy: PUT sets the verbosity, other methods 406 as StringFlagPutHandler', async () => {
  const set: number[] = [];
  const s = createServer(kubeletServer({ ...deps, setVerbosity: (v) => set.push(v) }));
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port: p } = s.address() as AddressInfo;
  const call = (method: string, path: string, user: string, body?: string) =>
    new Promise<{ status: number; type?: string; body: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: p, method, path, agent: false, headers: { 'x-user': user } }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, type: res.headers['content-type'], body: text }));
      }).on('error', reject);
      req.end(body);
    });
  try {
    authzCalls = [];
    assert.deepEqual(await call('PUT', '/debug/flags/v', 'admin', '4'), {
      status: 200,
      type: 'text/plain',
      body: 'successfully set klog.logging.verbosity to 4\n',
    });
    assert.deepEqual(
      authzCalls.map((a) => [a.verb, a.resource, a.subresource]),
      [['update', 'nodes', 'proxy']],
    );
    assert.deepEqual(set, [4]);
    assert.deepEqual(await call('PUT', '/debug/flags/v', 'admin', 'x'), {
      status: 400,
      type: 'text/plain',
      body: 'strconv.ParseUint: parsing "x": invalid syntax\n',
    });
    assert.deepEqual(await call('GET', '/debug/flags/v', 'admin'), { status: 406, type: 'text/plain', body: 'unsupported http method\n' });
    assert.equal((await call('PUT', '/debug/flags/v', 'reader', '9')).status, 403);
    assert.deepEqual(set, [4]);
    assert.equal((await call('GET', '/debug/pprof/', 'reader')).status, 403);
    const index = await call('GET', '/debug/pprof/', 'admin');
    assert.deepEqual([index.status, index.type], [200, 'text/html; charset=utf-8']);
    assert.deepEqual(await call('GET', '/debug/pprof/goroutine', 'admin'), {
      status: 404,
      type: 'text/plain; charset=utf-8',
      body: 'Unknown profile\n',
    });
    assert.equal((await call('GET', '/debug/pprof/cmdline', 'admin')).body, process.argv.join('\0'));
  } finally {
    s.close();
  }
});

test('/statusz and /flagz: served when given (their gates), behind authorization, the path exact; not without the debugging handlers', async () => {
  const zpages: Partial<ServerDeps> = {
    statusz: { startTime: new Date('2026-12-04T10:00:00Z'), goVersion: 'v24.0.0', binaryVersion: '1.36.3', emulationVersion: '1.36' },
    flagz: { v: '2', 'root-dir': '/var/lib/kubelet' },
  };
  const statusz = await once(zpages, '/statusz', 'admin');
  assert.equal(statusz.status, 200);
  assert.match(statusz.body, /^\nkubelet statusz\nWarning: /);
  assert.match(statusz.body, /\nBinary version(:|: |=| ) 1\.36\.3\n/);
  assert.match(statusz.body, /\nPaths(:|: |=| ) \/configz \/debug \/flagz \/healthz \/metrics\n$/);
  assert.match((await once(zpages, '/flagz', 'admin')).body, /\nroot-dir(:|: |=| )\/var\/lib\/kubelet\nv(:|: |=| )2\n$/);
  assert.equal((await once(zpages, '/flagz', 'reader')).status, 403);
  assert.equal((await once(zpages, '/statusz/', 'admin')).status, 404);
  assert.equal((await once({}, '/statusz', 'admin')).status, 404, 'gate off');
  assert.equal((await once({}, '/flagz', 'admin')).status, 404, 'gate off');
  assert.equal((await once({ ...zpages, debuggingHandlers: false }, '/statusz', 'admin')).status, 404);
  const noFlagz = await once({ statusz: zpages.statusz, enableSystemLogHandler: false }, '/statusz', 'admin');
  assert.match(noFlagz.body, /\nPaths(:|: |=| ) \/configz \/debug \/healthz \/logs \/metrics\n$/, 'the disabled /logs is a Handle path');
});

test("tracing: otelrestful's server span a request, named for its route, continuing the caller's trace; none for a refused one", async () => {
  const spans: SpanData[] = [];
  const provider = new TracerProvider(1, { add: (s) => void spans.push(s) });
  const traced = createServer(kubeletServer({ ...deps, tracer: provider.tracer({ name: 'otelrestful' }) }));
  await new Promise<void>((r) => traced.listen(0, '127.0.0.1', r));
  const at = (traced.address() as AddressInfo).port;
  const call = (path: string, headers: Record<string, string>) =>
    new Promise<number>((resolve, reject) =>
      request({ host: '127.0.0.1', port: at, path, agent: false, headers }, (res) => {
        res.resume().on('end', () => resolve(res.statusCode!));
      })
        .on('error', reject)
        .end(),
    );
  const parent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
  try {
    assert.equal(await call('/containerLogs/default/web/app', { 'x-user': 'admin', traceparent: parent }), 200);
    assert.equal(await call('/pods', { 'x-user': 'nobody' }), 403);
    assert.equal(await call('/healthz', { 'x-user': 'admin' }), 200);
    await new Promise((r) => setTimeout(r, 20));
  } finally {
    traced.closeAllConnections();
    traced.close();
  }
  assert.equal(spans.length, 1, 'the refused request and healthz (on the mux upstream) have no span');
  const [span] = spans as [SpanData];
  assert.equal(span.name, '/containerLogs/{podNamespace}/{podID}/{containerName}');
  assert.equal(span.kind, 2);
  assert.equal(Buffer.from(span.traceId).toString('hex'), '0af7651916cd43dd8448eb211c80319c');
  assert.equal(Buffer.from(span.parentSpanId!).toString('hex'), 'b7ad6b7169203331');
  assert.equal(span.parentRemote, true);
  assert.equal(span.attributes['http.route'], '/containerLogs/{podNamespace}/{podID}/{containerName}');
  assert.equal(span.attributes['http.request.method'], 'GET');
  assert.equal(span.attributes['url.path'], '/containerLogs/default/web/app');
  assert.equal(span.attributes['http.response.status_code'], 200);
});
