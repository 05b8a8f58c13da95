import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import { createServer as createTLSServer } from 'node:https';
import { createSecureServer } from 'node:http2';
import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { opensslPki } from '../certificates/testing.ts';
import type { SpanData } from '../tracing/span.ts';
import { TracerProvider } from '../tracing/tracer.ts';
import type { TLSSocket } from 'node:tls';
import { ApiError, apiClient, apiserverBehind, behindWaits, isAlreadyExists, isConflict, isGone, isNotFound } from './client.ts';
import { reflector } from './reflector.ts';
import type { Logger } from '../log/log.ts';
import { fakeApiserver } from './testing.ts';

// Every request to the fake apiserver is recorded (with its whole body) and answered by whatever
// `route` the running test installed.
type Seen = { method: string; url: string; headers: IncomingHttpHeaders; body: string };
let seen: Seen[] = [];
let route: (q: Seen, res: ServerResponse) => void = (_q, res) => {
  res.writeHead(404).end();
};
const base = await fakeApiserver((r, res) => {
  const q = { ...r, body: r.body.toString() };
  seen.push(q);
  route(q, res);
});

const reply = (res: ServerResponse, code: number, body: unknown) =>
  res.writeHead(code, { 'Content-Type': 'application/json' }).end(typeof body === 'string' ? body : JSON.stringify(body));
const status = (code: number, reason: string, message: string) => ({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message,
  reason,
  code,
});
/** Resolves when the server side of a response is closed (the client hung up or it ended). */
const closed = (res: ServerResponse) =>
  new Promise<void>((r) => (res.destroyed || res.writableFinished ? r() : res.once('close', () => r())));
const deferred = () => {
  let resolve!: () => void;
  const p = new Promise<void>((r) => (resolve = r));
  return { p, resolve };
};

// A bug that leaves a request or watch hanging fails its test instead of stalling the run.
const quick = { timeout: 2000 };

const api = apiClient({ server: base, token: 'tok-1' }, { userAgent: 'kubelet-ts/v1.36.0 (linux/amd64)' });

test('requests: method, path, body, Content-Type, Content-Length and credentials go out; the answer is decoded', quick, async () => {
  // The answer names the request, so a reply decoded for the wrong call cannot pass.
  route = (q, res) => reply(res, q.method === 'POST' ? 201 : 200, { kind: 'Pod', metadata: { name: 'p' }, echo: `${q.method} ${q.url}` });
  // Non-ASCII in a body: Content-Length must count bytes, not UTF-16 units, or the server waits/truncates.
  const pod = { metadata: { name: 'p', annotations: { note: 'café ☕' } } };
  const cases: [name: string, call: () => Promise<unknown>, method: string, url: string, contentType: string | undefined, body: unknown][] =
    [
      ['get', () => api.get('/api/v1/nodes/n1'), 'GET', '/api/v1/nodes/n1', undefined, undefined],
      [
        'get keeps the query',
        () => api.get('/api/v1/pods?fieldSelector=spec.nodeName%3Dn1&limit=500'),
        'GET',
        '/api/v1/pods?fieldSelector=spec.nodeName%3Dn1&limit=500',
        undefined,
        undefined,
      ],
      [
        'create',
        () => api.create('/api/v1/namespaces/default/pods', pod),
        'POST',
        '/api/v1/namespaces/default/pods',
        'application/json',
        pod,
      ],
      [
        'replace',
        () => api.replace('/api/v1/namespaces/default/pods/p', pod),
        'PUT',
        '/api/v1/namespaces/default/pods/p',
        'application/json',
        pod,
      ],
      [
        'strategic patch',
        () => api.patch('/api/v1/namespaces/default/pods/p/status', { status: { phase: 'Running' } }, 'strategic'),
        'PATCH',
        '/api/v1/namespaces/default/pods/p/status',
        'application/strategic-merge-patch+json',
        { status: { phase: 'Running' } },
      ],
      [
        'merge patch',
        () => api.patch('/api/v1/nodes/n1', { metadata: { labels: { a: null } } }, 'merge'),
        'PATCH',
        '/api/v1/nodes/n1',
        'application/merge-patch+json',
        { metadata: { labels: { a: null } } },
      ],
      [
        'json patch',
        () => api.patch('/api/v1/nodes/n1/status', [{ op: 'replace', path: '/status/phase', value: 'x' }], 'json'),
        'PATCH',
        '/api/v1/nodes/n1/status',
        'application/json-patch+json',
        [{ op: 'replace', path: '/status/phase', value: 'x' }],
      ],
      [
        'delete',
        () => api.delete('/api/v1/namespaces/default/pods/p'),
        'DELETE',
        '/api/v1/namespaces/default/pods/p',
        undefined,
        undefined,
      ],
      [
        'delete with options',
        () => api.delete('/api/v1/namespaces/default/pods/p', { gracePeriodSeconds: 0, preconditions: { uid: 'u1' } }),
        'DELETE',
        '/api/v1/namespaces/default/pods/p',
        'application/json',
        { gracePeriodSeconds: 0, preconditions: { uid: 'u1' } },
      ],
    ];
  for (const [name, call, method, url, contentType, body] of cases) {
    seen = [];
    assert.deepEqual(await call(), { kind: 'Pod', metadata: { name: 'p' }, echo: `${method} ${url}` }, name);
    assert.equal(seen.length, 1, name);
    const q = seen[0]!;
    assert.equal(q.method, method, name);
    assert.equal(q.url, url, name);
    assert.equal(q.headers['content-type'], contentType, name);
    assert.equal(q.headers.accept, 'application/json', name);
    assert.equal(q.headers['user-agent'], 'kubelet-ts/v1.36.0 (linux/amd64)', name);
    assert.equal(q.headers.authorization, 'Bearer tok-1', name);
    if (body === undefined) assert.equal(q.body, '', name);
    else {
      assert.deepEqual(JSON.parse(q.body), body, name);
      assert.equal(q.headers['content-length'], String(Buffer.byteLength(q.body)), name);
    }
  }
});

test(
  'requests: an empty 200 is undefined; no token sends no Authorization; a server URL with a path prefixes every path',
  quick,
  async () => {
    route = (_q, res) => res.writeHead(200).end();
    seen = [];
    // Default User-Agent; the trailing slash of the server URL must not double the path's.
    const plain = apiClient({ server: `${base}/proxy/k8s/` });
    assert.equal(await plain.delete('/api/v1/namespaces/default/pods/p'), undefined);
    assert.equal(seen[0]!.url, '/proxy/k8s/api/v1/namespaces/default/pods/p');
    assert.equal(seen[0]!.headers['user-agent'], 'kubelet-ts');
    assert.equal(seen[0]!.headers.authorization, undefined);
  },
);

test('reload: requests after it carry the new token', quick, async () => {
  route = (_q, res) => reply(res, 200, {});
  seen = [];
  const c = apiClient({ server: base, token: 'old' });
  await c.get('/a');
  c.reload({ server: base, token: 'new' });
  await c.get('/b');
  assert.deepEqual(
    seen.map((q) => q.headers.authorization),
    ['Bearer old', 'Bearer new'],
  );
});

test('errors: a Status body becomes an ApiError with its code and reason; the predicates follow upstream', quick, async () => {
  const cases: [
    code: number,
    reason: string,
    message: string,
    notFound: boolean,
    conflict: boolean,
    alreadyExists: boolean,
    gone: boolean,
  ][] = [
    [404, 'NotFound', 'pods "p" not found', true, false, false, false],
    [409, 'AlreadyExists', 'pods "p" already exists', false, true, true, false],
    [409, 'Conflict', 'Operation cannot be fulfilled on pods "p": the object has been modified', false, true, false, false],
    [410, 'Expired', 'too old resource version: 5 (900)', false, false, false, true],
    [422, 'Invalid', 'Pod "p" is invalid: spec.containers: Required value', false, false, false, false],
    [500, 'InternalError', 'etcdserver: request timed out', false, false, false, false],
  ];
  for (const [code, reason, message, ...preds] of cases) {
    route = (_q, res) => reply(res, code, status(code, reason, message));
    const e = await api.create('/api/v1/namespaces/default/pods', {}).then(
      () => assert.fail(`${code} ${reason} resolved`),
      (err: unknown) => err,
    );
    assert.ok(e instanceof ApiError, reason);
    assert.equal(e.status, code, reason);
    assert.equal(e.reason, reason, reason);
    assert.equal(e.message, `POST /api/v1/namespaces/default/pods: ${code} ${message}`, reason);
    assert.deepEqual([isNotFound(e), isConflict(e), isAlreadyExists(e), isGone(e)], preds, reason);
  }
  // The predicates want an ApiError, not anything with a status.
  assert.deepEqual([isNotFound({ status: 404 }), isConflict(new Error('409')), isGone(undefined)], [false, false, false]);
});

test('errors: a non-JSON body, or a Status without reason, keeps the code; the body is cut to 200 characters', quick, async () => {
  const cases: [code: number, body: string, reason: string, message: string][] = [
    [503, 'no healthy upstream', '503', 'GET /x: 503 no healthy upstream'],
    [502, `<html>${'x'.repeat(500)}</html>`, '502', `GET /x: 502 <html>${'x'.repeat(194)}`],
    [404, '{"kind":"Status","code":404}', '404', 'GET /x: 404 {"kind":"Status","code":404}'],
    [403, '', '403', 'GET /x: 403 '],
    // JSON that is not an object (a proxy's null) must not be read as a Status.
    [500, 'null', '500', 'GET /x: 500 null'],
  ];
  for (const [code, body, reason, message] of cases) {
    route = (_q, res) => res.writeHead(code, { 'Content-Type': 'text/plain' }).end(body);
    await assert.rejects(
      api.get('/x'),
      (e: ApiError) => e instanceof ApiError && e.status === code && e.reason === reason && e.message === message,
      `${code}`,
    );
  }
  // A 404 is still NotFound whatever the body says (the kubelet branches on it after deletes).
  route = (_q, res) => res.writeHead(404).end('page not found');
  assert.equal(await api.get('/x').catch(isNotFound), true);
});

test('errors: connection refused and a request timeout are status 0 Unreachable', quick, async () => {
  // A port that was just free: listen, note it, close.
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  const refused = await apiClient({ server: `http://127.0.0.1:${port}` })
    .get('/api/v1/nodes/n1')
    .catch((e: unknown) => e);
  assert.ok(refused instanceof ApiError);
  assert.deepEqual([refused.status, refused.reason], [0, 'Unreachable']);
  assert.match(refused.message, /^GET \/api\/v1\/nodes\/n1: .*ECONNREFUSED/);
  assert.deepEqual([isNotFound(refused), isConflict(refused), isGone(refused)], [false, false, false]);

  // The server never answers; the client gives up after timeoutMs and the server sees it hang up.
  let held: ServerResponse | undefined;
  route = (_q, res) => {
    held = res;
  };
  const started = Date.now();
  const slow = await apiClient({ server: base }, { timeoutMs: 50 })
    .get('/slow')
    .catch((e: unknown) => e);
  assert.ok(slow instanceof ApiError);
  assert.deepEqual([slow.status, slow.reason, slow.message], [0, 'Unreachable', 'GET /slow: timed out after 50 ms']);
  assert.ok(Date.now() - started < 1000);
  await closed(held!);
});

test(
  'observe: each request is counted once with its code, or <error> when no answer came (rest_client_requests_total)',
  quick,
  async () => {
    const counted: string[] = [];
    const observe = (method: string, code: string, host: string) => counted.push(`${method} ${code} ${host}`);
    route = (q, res) => (q.url === '/ok' ? reply(res, 200, {}) : reply(res, 404, status(404, 'NotFound', 'no')));
    const api = apiClient({ server: base }, { observe });
    await api.get('/ok');
    await api.patch('/missing', {}, 'merge').catch(() => {});
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const port = (s.address() as AddressInfo).port;
    await new Promise((r) => s.close(r));
    await apiClient({ server: `http://127.0.0.1:${port}` }, { observe })
      .get('/x')
      .catch(() => {});
    const host = new URL(base).host;
    assert.deepEqual(counted, [`GET 200 ${host}`, `PATCH 404 ${host}`, `GET <error> 127.0.0.1:${port}`]);
  },
);

test("time: each request's span and sizes, as client-go's Request.request observes them; watches are not timed", quick, async () => {
  const timed: [string, string, number | undefined, number | undefined][] = [];
  const time = (verb: string, host: string, seconds: number, size: { request?: number; response?: number }) => {
    assert.ok(seconds >= 0 && seconds < 5, `${seconds}`);
    timed.push([verb, host, size.request, size.response]);
  };
  route = (q, res) => {
    if (q.url === '/ok') return reply(res, 200, { a: 1 });
    if (q.url?.startsWith('/watch')) return res.writeHead(200).end();
    return reply(res, 404, status(404, 'NotFound', 'no'));
  };
  const api = apiClient({ server: base }, { time });
  await api.get('/ok');
  await api.patch('/missing', { b: 2 }, 'merge').catch(() => {});
  await api.watch('/watch', () => {});
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  await apiClient({ server: `http://127.0.0.1:${port}` }, { time })
    .create('/x', {})
    .catch(() => {});
  const host = new URL(base).host;
  const notFound = JSON.stringify(status(404, 'NotFound', 'no')).length;
  assert.deepEqual(timed, [
    ['GET', host, 0, 7],
    ['PATCH', host, 7, notFound],
    // Refused: sent, no answer.
    ['POST', `127.0.0.1:${port}`, 2, undefined],
  ]);
});

test('a request is bounded as a whole: a body trickled forever ends at timeoutMs', quick, async () => {
  let held: ServerResponse | undefined;
  route = (_q, res) => {
    held = res;
    res.writeHead(200, { 'Content-Type': 'application/json' }).write('{');
    // Never silent for long enough for the socket timeout.
    const drip = setInterval(() => res.write(' '), 10);
    res.once('close', () => clearInterval(drip));
  };
  const started = Date.now();
  const slow = await apiClient({ server: base }, { timeoutMs: 100 })
    .get('/trickle')
    .catch((e: unknown) => e);
  assert.ok(slow instanceof ApiError);
  assert.deepEqual([slow.status, slow.reason, slow.message], [0, 'Unreachable', 'GET /trickle: timed out after 100 ms']);
  assert.ok(Date.now() - started < 1000);
  await closed(held!);
});

const line = (type: string, object: unknown) => JSON.stringify({ type, object }) + '\n';
const pod = (name: string, rv: string) => ({ metadata: { name, resourceVersion: rv } });
type Pod = ReturnType<typeof pod>;

test('watch: newline-delimited events, one split across chunks mid-character, arrive in order until the stream ends', quick, async () => {
  // The second event is cut inside the two-byte "é", and the rest is only sent once the
  // client has handled the first: the two halves cannot arrive in one read.
  const second = Buffer.from(line('MODIFIED', pod('café', '11')));
  const cut = second.indexOf(Buffer.from('é')) + 1;
  const firstSeen = deferred();
  let res!: ServerResponse;
  route = async (_q, r) => {
    res = r;
    r.writeHead(200, { 'Content-Type': 'application/json' });
    r.write(Buffer.concat([Buffer.from(line('ADDED', pod('a', '10'))), second.subarray(0, cut)]));
    await firstSeen.p;
    r.write(second.subarray(cut));
    // A blank line (as a keepalive) is skipped; a BOOKMARK is passed on for its resourceVersion.
    r.write('\n' + line('BOOKMARK', { metadata: { resourceVersion: '12' } }) + line('DELETED', pod('a', '13')));
    r.end();
  };
  seen = [];
  const got: string[] = [];
  await api.watch<Pod>('/api/v1/pods?watch=1&resourceVersion=9', (e) => {
    got.push(`${e.type} ${e.object.metadata.name ?? '-'} ${e.object.metadata.resourceVersion}`);
    if (got.length === 1) {
      assert.equal(res.writableEnded, false);
      firstSeen.resolve();
    }
  });
  assert.deepEqual(got, ['ADDED a 10', 'MODIFIED café 11', 'BOOKMARK - 12', 'DELETED a 13']);
  assert.deepEqual(
    [seen[0]!.method, seen[0]!.url, seen[0]!.headers.authorization, seen[0]!.headers['content-type']],
    ['GET', '/api/v1/pods?watch=1&resourceVersion=9', 'Bearer tok-1', undefined],
  );
});

test('watch: an ERROR event rejects with its Status as an ApiError, drops what follows and hangs up', quick, async () => {
  const cases: [object: unknown, code: number, reason: string, message: string, gone: boolean][] = [
    [status(410, 'Expired', 'too old resource version: 9 (20)'), 410, 'Expired', 'watch /w: too old resource version: 9 (20)', true],
    [status(410, 'Gone', 'resourceVersion compacted'), 410, 'Gone', 'watch /w: resourceVersion compacted', true],
    [{}, 500, 'WatchError', 'watch /w: error', false],
  ];
  for (const [object, code, reason, message, gone] of cases) {
    let res!: ServerResponse;
    // The server keeps the stream open after the ERROR: only the client can end it.
    route = (_q, r) => {
      res = r;
      r.writeHead(200);
      r.write(line('ADDED', pod('a', '10')) + line('ERROR', object) + line('MODIFIED', pod('a', '11')));
    };
    const got: string[] = [];
    const e = await api
      .watch<Pod>('/w', (ev) => got.push(ev.type))
      .then(
        () => assert.fail(`${reason} resolved`),
        (err: unknown) => err,
      );
    assert.ok(e instanceof ApiError, reason);
    assert.deepEqual([e.status, e.reason, e.message, isGone(e)], [code, reason, message, gone]);
    assert.deepEqual(got, ['ADDED'], reason);
    await closed(res);
  }
});

test('watch: a refused watch is an ApiError; a line that is not JSON rejects', quick, async () => {
  route = (_q, res) => reply(res, 403, status(403, 'Forbidden', 'pods is forbidden: User "system:node:n1" cannot watch resource "pods"'));
  await assert.rejects(
    api.watch('/w', () => assert.fail('no events')),
    (e: ApiError) => e.status === 403 && e.reason === 'Forbidden',
  );
  route = (_q, res) => {
    res.writeHead(200);
    res.end('<html>proxy error</html>\n');
  };
  await assert.rejects(
    api.watch('/w', () => assert.fail('no events')),
    SyntaxError,
  );
});

test('watch: aborting the signal mid-stream resolves the watch and closes the connection', quick, async () => {
  let res!: ServerResponse;
  route = (_q, r) => {
    res = r;
    r.writeHead(200);
    r.write(line('ADDED', pod('a', '10')));
  };
  const ac = new AbortController();
  const got: string[] = [];
  await api.watch<Pod>(
    '/w',
    (e) => {
      got.push(e.type);
      ac.abort();
    },
    ac.signal,
  );
  assert.deepEqual(got, ['ADDED']);
  await closed(res);
});

test(
  'watch over HTTP/1.1: a stream silent for watchIdleMs (no ping to ask: a dead connection, or a quiet watch) is Unreachable and hung up',
  quick,
  async () => {
    let res!: ServerResponse;
    route = (_q, r) => {
      res = r;
      r.writeHead(200);
      r.write(line('ADDED', pod('a', '10')));
    };
    const got: string[] = [];
    const e = await apiClient({ server: base }, { watchIdleMs: 100 })
      .watch<Pod>('/quiet', (ev) => got.push(ev.type))
      .catch((err: unknown) => err);
    assert.deepEqual(got, ['ADDED']);
    assert.ok(e instanceof ApiError);
    assert.deepEqual([e.status, e.reason, e.message], [0, 'Unreachable', 'watch /quiet: silent for 100 ms']);
    await closed(res);
  },
);

test("watch: aborting before the answer's headers resolves the watch too (not Unreachable)", quick, async () => {
  const got = deferred();
  route = () => got.resolve(); // never answers
  const ac = new AbortController();
  const w = api.watch<Pod>('/w', () => {}, ac.signal);
  await got.p;
  ac.abort();
  assert.equal(await w, undefined);
});

test(
  "reflector over HTTP: lists, watches from the list's version, follows bookmarks, rewatches when a stream ends, lists again on an ERROR 410",
  quick,
  async () => {
    let lists = 0;
    const watches: ServerResponse[] = [];
    const lastWatch = deferred();
    route = (q, res) => {
      const u = new URL(q.url, base);
      if (!u.searchParams.has('watch')) {
        lists++;
        return reply(res, 200, {
          kind: 'PodList',
          metadata: { resourceVersion: lists === 1 ? '10' : '20' },
          items: lists === 1 ? [pod('a', '5')] : [pod('a', '5'), pod('b', '11')],
        });
      }
      watches.push(res);
      res.writeHead(200);
      // 1st: a change and a bookmark, then the server ends the watch (its timeoutSeconds).
      if (watches.length === 1) return res.end(line('ADDED', pod('b', '11')) + line('BOOKMARK', { metadata: { resourceVersion: '12' } }));
      // 2nd: the resourceVersion is compacted away.
      if (watches.length === 2) return res.end(line('ERROR', status(410, 'Expired', 'too old resource version: 12 (15)')));
      // 3rd: stays open until the reflector stops.
      res.write(line('MODIFIED', pod('b', '21')));
    };
    seen = [];
    const logs: string[] = [];
    const log: Logger = {
      info: (m) => logs.push(`I ${m}`),
      v: () => {},
      warn: (m) => logs.push(`W ${m}`),
      error: (m) => logs.push(`E ${m}`),
    };
    const got: string[] = [];
    const r = reflector<Pod>(
      api,
      '/api/v1/pods?fieldSelector=spec.nodeName%3Dn1',
      'pods',
      {
        list: (items) => got.push(`list ${items.map((i) => i.metadata.name).join(',')}`),
        event: (type, o) => {
          got.push(`${type} ${o.metadata.name} ${o.metadata.resourceVersion}`);
          if (o.metadata.resourceVersion === '21') lastWatch.resolve();
        },
      },
      log,
    );
    const timer = setTimeout(() => lastWatch.resolve(), 1500);
    await lastWatch.p;
    clearTimeout(timer);
    r.stop();
    await closed(watches[2]!);

    assert.deepEqual(got, ['list a', 'ADDED b 11', 'list a,b', 'MODIFIED b 21']);
    const calls = seen.map((q) => {
      const u = new URL(q.url, base);
      const p = u.searchParams;
      assert.equal(p.get('fieldSelector'), 'spec.nodeName=n1', q.url);
      if (!p.has('watch')) return 'list';
      assert.equal(p.get('watch'), '1');
      assert.equal(p.get('allowWatchBookmarks'), 'true');
      // Upstream's 5 min, jittered by up to 100%.
      const t = Number(p.get('timeoutSeconds'));
      assert.ok(t >= 300 && t <= 600, `timeoutSeconds=${t}`);
      return `watch rv=${p.get('resourceVersion')}`;
    });
    // The bookmark's version is where the 2nd watch starts; the ended stream needs no list.
    assert.deepEqual(calls, ['list', 'watch rv=10', 'watch rv=12', 'list', 'watch rv=20']);
    assert.deepEqual(logs, ['I Watch of pods expired, listing again']);
  },
);

// HTTPS as the kubelet really talks to the apiserver: a throwaway CA, a serving cert for
// 127.0.0.1 and two client certs, made with openssl in a temp dir.
const dir = mkdtempSync(join(tmpdir(), 'kubelet-apiclient-'));
const pem = (name: string) => readFileSync(join(dir, name));
before(() => {
  writeFileSync(
    join(dir, 'openssl.cnf'),
    [
      '[req]',
      'distinguished_name = dn',
      '[dn]',
      '[ca]',
      'basicConstraints = critical,CA:TRUE',
      'keyUsage = critical,keyCertSign',
      '[client]',
      'extendedKeyUsage = clientAuth',
      '[server]',
      'extendedKeyUsage = serverAuth',
      'subjectAltName = IP:127.0.0.1',
    ].join('\n'),
  );
  const { root, issue } = opensslPki(dir);
  root('ca');
  issue('serving', '/CN=apiserver', 'ca', 'server');
  issue('alice', '/O=system:nodes/CN=system:node:alice', 'ca', 'client');
  issue('bob', '/O=system:nodes/CN=system:node:bob', 'ca', 'client');
  // A second CA and a serving certificate of it: the apiserver's after a CA rotation.
  root('ca2');
  issue('serving2', '/CN=apiserver', 'ca2', 'server');
});
after(() => rmSync(dir, { recursive: true, force: true }));

test(
  'https: the CA verifies the apiserver, the client certificate authenticates, reload switches to a rotated certificate',
  quick,
  async () => {
    const tls = createTLSServer(
      { key: pem('serving.key'), cert: pem('serving.crt'), ca: pem('ca.crt'), requestCert: true, rejectUnauthorized: true },
      (req, res) => {
        reply(res, 200, { user: (req.socket as TLSSocket).getPeerCertificate().subject.CN, url: req.url });
      },
    );
    await new Promise<void>((r) => tls.listen(0, '127.0.0.1', r));
    const server = `https://127.0.0.1:${(tls.address() as AddressInfo).port}`;
    try {
      const c = apiClient({ server, ca: pem('ca.crt'), cert: pem('alice.crt'), key: pem('alice.key') });
      assert.deepEqual(await c.get('/api/v1/nodes/alice'), { user: 'system:node:alice', url: '/api/v1/nodes/alice' });
      c.reload({ server, ca: pem('ca.crt'), cert: pem('bob.crt'), key: pem('bob.key') });
      assert.deepEqual(await c.get('/api/v1/nodes/bob'), { user: 'system:node:bob', url: '/api/v1/nodes/bob' });

      // Without the CA the serving certificate is untrusted, unless verification is off.
      const untrusted = await apiClient({ server, cert: pem('alice.crt'), key: pem('alice.key') })
        .get('/x')
        .catch((e: unknown) => e);
      assert.ok(untrusted instanceof ApiError);
      assert.deepEqual([untrusted.status, untrusted.reason], [0, 'Unreachable']);
      assert.match(untrusted.message, /certificate/);
      assert.deepEqual(await apiClient({ server, cert: pem('alice.crt'), key: pem('alice.key'), insecureSkipTLSVerify: true }).get('/y'), {
        user: 'system:node:alice',
        url: '/y',
      });
    } finally {
      tls.closeAllConnections();
      tls.close();
    }
  },
);

test("HTTP/2 where the server offers it (the apiserver's ALPN h2): requests and watches share one session, reload opens another", {
  timeout: 5000,
}, async () => {
  const sessions: unknown[] = [];
  const h2 = createSecureServer(
    { key: pem('serving.key'), cert: pem('serving.crt'), ca: pem('ca.crt'), requestCert: true, rejectUnauthorized: true, allowHTTP1: true },
    (req, res) => {
      const user = (req.socket as TLSSocket).getPeerCertificate().subject.CN;
      if (req.url?.includes('watch=true')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write(`${JSON.stringify({ type: 'ADDED', object: { user, v: req.httpVersion } })}\n`);
        res.end(`${JSON.stringify({ type: 'DELETED', object: { user } })}\n`);
        return;
      }
      if (req.url === '/missing') return void reply(res as never, 404, status(404, 'NotFound', 'no such thing'));
      if (req.url === '/large') return void reply(res as never, 200, { items: 'x'.repeat(6 << 20) });
      if (req.method !== 'GET') {
        let sent = '';
        req.on('data', (d) => (sent += d));
        req.on('end', () => reply(res as never, 200, { method: req.method, sent: JSON.parse(sent || 'null'), v: req.httpVersion }));
        return;
      }
      reply(res as never, 200, { user, v: req.httpVersion, ua: req.headers['user-agent'], url: req.url });
    },
  );
  h2.on('session', (s) => sessions.push(s));
  await new Promise<void>((r) => h2.listen(0, '127.0.0.1', r));
  const server = `https://127.0.0.1:${(h2.address() as AddressInfo).port}`;
  try {
    const c = apiClient({ server, ca: pem('ca.crt'), cert: pem('alice.crt'), key: pem('alice.key') }, { userAgent: 'kubelet-ts/test' });
    const [a, b] = await Promise.all([c.get('/a'), c.get('/b')]);
    assert.deepEqual(a, { user: 'system:node:alice', v: '2.0', ua: 'kubelet-ts/test', url: '/a' });
    assert.deepEqual(b, { user: 'system:node:alice', v: '2.0', ua: 'kubelet-ts/test', url: '/b' });
    // Go's transport's receive window, 4 MB a stream, not the protocol's 64 KB.
    const windows = sessions[0] as { remoteSettings: { initialWindowSize: number } };
    assert.equal(windows.remoteSettings.initialWindowSize, 4 << 20);
    assert.equal(((await c.get('/large')) as { items: string }).items.length, 6 << 20);
    const events: unknown[] = [];
    await c.watch('/api/v1/pods?watch=true', (e) => events.push(e));
    assert.deepEqual(events, [
      { type: 'ADDED', object: { user: 'system:node:alice', v: '2.0' } },
      { type: 'DELETED', object: { user: 'system:node:alice' } },
    ]);
    // Every verb with its body, DELETE's DeleteOptions too (node:http2 would end a DELETE's stream at once).
    const options = { kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid: 'u1' } };
    assert.deepEqual(await c.delete('/api/v1/namespaces/ns/pods/p', options), { method: 'DELETE', sent: options, v: '2.0' });
    assert.deepEqual(await c.delete('/api/v1/namespaces/ns/pods/q'), { method: 'DELETE', sent: null, v: '2.0' });
    assert.deepEqual(await c.create('/api/v1/namespaces/ns/events', { a: 1 }), { method: 'POST', sent: { a: 1 }, v: '2.0' });
    assert.deepEqual(await c.replace('/x', { b: 2 }), { method: 'PUT', sent: { b: 2 }, v: '2.0' });
    assert.deepEqual(await c.patch('/y', { c: 3 }, 'merge'), { method: 'PATCH', sent: { c: 3 }, v: '2.0' });
    const missing = await c.get('/missing').catch((e: unknown) => e);
    assert.ok(missing instanceof ApiError && missing.status === 404 && missing.reason === 'NotFound', String(missing));
    assert.equal(sessions.length, 1, 'one TLS connection for every request and the watch');
    c.reload({ server, ca: pem('ca.crt'), cert: pem('bob.crt'), key: pem('bob.key') });
    assert.deepEqual(await c.get('/c'), { user: 'system:node:bob', v: '2.0', ua: 'kubelet-ts/test', url: '/c' });
    assert.equal(sessions.length, 2, 'the rotated certificate on a session of its own');
  } finally {
    for (const s of sessions) (s as { destroy(): void }).destroy();
    h2.close();
  }
});

test("HTTP/2: a request never queues behind watches: a second session once the server's stream limit is reached", {
  timeout: 5000,
}, async () => {
  const sessions: { destroy(): void }[] = [];
  const held: ServerResponse[] = [];
  const h2 = createSecureServer(
    { key: pem('serving.key'), cert: pem('serving.crt'), settings: { maxConcurrentStreams: 2 } },
    (req, res) => {
      if (req.url?.includes('watch=true')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('');
        held.push(res as never);
        return;
      }
      reply(res as never, 200, { url: req.url });
    },
  );
  h2.on('session', (s) => sessions.push(s));
  await new Promise<void>((r) => h2.listen(0, '127.0.0.1', r));
  const server = `https://127.0.0.1:${(h2.address() as AddressInfo).port}`;
  const abort = new AbortController();
  try {
    const c = apiClient({ server, ca: pem('ca.crt') });
    assert.deepEqual(await c.get('/first'), { url: '/first' }, "the session knows the server's settings after one answer");
    const watches = [c.watch('/w1?watch=true', () => {}, abort.signal), c.watch('/w2?watch=true', () => {}, abort.signal)];
    while (held.length < 2) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(await c.get('/after'), { url: '/after' });
    assert.equal(sessions.length, 2);
    abort.abort();
    await Promise.all(watches);
  } finally {
    for (const s of sessions) s.destroy();
    h2.close();
  }
});

test('HTTP/2: a request whose session dies before the answer, or in its body, is Unreachable, not pending for good', {
  timeout: 5000,
}, async () => {
  // A killed apiserver: node:http2 closes the session's streams with CANCEL and no error event.
  const sessions: { destroy(): void }[] = [];
  const h2 = createSecureServer({ key: pem('serving.key'), cert: pem('serving.crt') }, (req, res) => {
    // Half an answer first: the body is cut short, not taken for a whole one.
    if (req.url?.startsWith('/half')) res.writeHead(200, { 'content-type': 'application/json' }).write('{"kind":');
    setTimeout(() => sessions.at(-1)?.destroy(), 50);
  });
  h2.on('session', (s) => sessions.push(s));
  await new Promise<void>((r) => h2.listen(0, '127.0.0.1', r));
  const server = `https://127.0.0.1:${(h2.address() as AddressInfo).port}`;
  try {
    const c = apiClient({ server, ca: pem('ca.crt') });
    const err = await c.get('/hang').catch((e: unknown) => e);
    assert.ok(err instanceof ApiError && err.status === 0 && err.reason === 'Unreachable', String(err));
    const watched = await c.watch('/hang?watch=true', () => {}).catch((e: unknown) => e);
    assert.ok(watched instanceof ApiError && watched.status === 0, String(watched));
    const half = await c.get('/half').catch((e: unknown) => e);
    assert.ok(half instanceof ApiError && half.reason === 'Unreachable', String(half));
  } finally {
    for (const s of sessions) s.destroy();
    h2.close();
  }
});

test('HTTP/2: a quiet watch (no bookmark: nothing changed) is not ended at its silence: the session is pinged, and the watch lasts until the server ends it', {
  timeout: 5000,
}, async () => {
  const sessions: { destroy(): void; on(e: 'ping', f: () => void): void }[] = [];
  let pings = 0;
  const h2 = createSecureServer({ key: pem('serving.key'), cert: pem('serving.crt') }, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write(`${JSON.stringify({ type: 'ADDED', object: { n: 1 } })}\n`);
    // Five silences of the client's watchIdleMs, then the server's timeoutSeconds ends the watch.
    setTimeout(() => res.end(`${JSON.stringify({ type: 'DELETED', object: { n: 1 } })}\n`), 500);
  });
  h2.on('session', (s) => {
    sessions.push(s);
    s.on('ping', () => pings++);
  });
  await new Promise<void>((r) => h2.listen(0, '127.0.0.1', r));
  const server = `https://127.0.0.1:${(h2.address() as AddressInfo).port}`;
  try {
    const events: string[] = [];
    await apiClient({ server, ca: pem('ca.crt') }, { watchIdleMs: 100 }).watch<{ n: number }>('/quiet?watch=true', (e) =>
      events.push(e.type),
    );
    assert.deepEqual(events, ['ADDED', 'DELETED']);
    assert.ok(pings >= 2, `a ping at each silence, not one only: ${pings}`);
    // New credentials close the session the watch is on (a client-certificate rotation): its
    // silences ask no ping of the closed session (node:http2 cancels it), and the watch lasts.
    const c = apiClient({ server, ca: pem('ca.crt') }, { watchIdleMs: 100 });
    const after: string[] = [];
    await c.watch<{ n: number }>('/quiet?watch=true', (e) => {
      after.push(e.type);
      if (e.type === 'ADDED') c.reload({ server, ca: pem('ca.crt') });
    });
    assert.deepEqual(after, ['ADDED', 'DELETED']);
  } finally {
    for (const s of sessions) s.destroy();
    h2.close();
  }
});

test('an idle HTTP/2 session keeps no process alive: a one-request program exits', { timeout: 10_000 }, async () => {
  const h2 = createSecureServer({ key: pem('serving.key'), cert: pem('serving.crt') }, (_req, res) =>
    reply(res as never, 200, { ok: true }),
  );
  const open: { destroy(): void }[] = [];
  h2.on('session', (s) => open.push(s));
  await new Promise<void>((r) => h2.listen(0, '127.0.0.1', r));
  const server = `https://127.0.0.1:${(h2.address() as AddressInfo).port}`;
  try {
    const program = `import { apiClient } from ${JSON.stringify(new URL('./client.ts', import.meta.url).href)};
      const c = apiClient({ server: ${JSON.stringify(server)}, ca: Buffer.from(${JSON.stringify(pem('ca.crt').toString())}) });
      console.log(JSON.stringify(await c.get('/x')));`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', program], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const code = await new Promise((r) => child.once('exit', r));
    assert.equal(code, 0);
    assert.equal(out.trim(), '{"ok":true}');
  } finally {
    for (const s of open) s.destroy();
    h2.close();
  }
});

test(
  "ClientsAllowCARotation: the kubeconfig's CA file read again, each look counted as client-go's, the CA in use kept on a bad file",
  quick,
  async () => {
    const tls = createTLSServer(
      { key: pem('serving.key'), cert: pem('serving.crt'), ca: pem('ca.crt'), requestCert: true, rejectUnauthorized: true },
      (req, res) => reply(res, 200, { url: req.url }),
    );
    await new Promise<void>((r) => tls.listen(0, '127.0.0.1', r));
    const server = `https://127.0.0.1:${(tls.address() as AddressInfo).port}`;
    const caFile = join(dir, 'kubeconfig-ca.crt');
    writeFileSync(caFile, pem('ca.crt'));
    const looks: string[] = [];
    const errors: string[] = [];
    const log = { info() {}, warn() {}, error: (_m: string, f: { reason: string }) => errors.push(f.reason), v() {} } as never;
    const conn = { server, ca: pem('ca.crt'), caFile, cert: pem('alice.crt'), key: pem('alice.key') };
    const c = apiClient(conn, { caRotation: { everyMs: 0, observe: (r) => looks.push(`${r.result}/${r.reason}`), log } });
    const withoutRotation = apiClient(conn);
    try {
      assert.deepEqual(await c.get('/a'), { url: '/a' });
      // The apiserver's CA rotated: a new serving certificate, and the kubeconfig's CA file rewritten.
      tls.setSecureContext({ key: pem('serving2.key'), cert: pem('serving2.crt'), ca: pem('ca.crt') });
      writeFileSync(caFile, pem('ca2.crt'));
      assert.deepEqual(await c.get('/b'), { url: '/b' });
      const stale = await withoutRotation.get('/c').catch((e: unknown) => e);
      assert.ok(stale instanceof ApiError && /certificate/.test(stale.message), 'the gate off: the old CA, the new apiserver untrusted');
      // A file that cannot serve keeps the CA in use.
      for (const bad of ['', 'garbage\n']) {
        writeFileSync(caFile, bad);
        assert.deepEqual(await c.get('/d'), { url: '/d' });
      }
      rmSync(caFile);
      assert.deepEqual(await c.get('/e'), { url: '/e' });
      assert.deepEqual(looks, ['success/unchanged', 'success/updated', 'failure/empty', 'failure/ca_parse_error', 'failure/read_error']);
      assert.deepEqual(errors, ['empty', 'ca_parse_error', 'read_error']);
      // Looks come no oftener than everyMs.
      const seldom: string[] = [];
      const d = apiClient({ ...conn, ca: pem('ca2.crt') }, { caRotation: { everyMs: 60_000, observe: (r) => seldom.push(r.reason), log } });
      await d.get('/f');
      await d.get('/g');
      assert.deepEqual(seldom, []);
    } finally {
      tls.closeAllConnections();
      tls.close();
    }
  },
);

test("tracing: otelhttp's client span a request, its traceparent sent; a 4xx is an error", quick, async () => {
  const spans: SpanData[] = [];
  const provider = new TracerProvider(1, { add: (s) => void spans.push(s) });
  route = (q, res) => (q.url === '/ok' ? reply(res, 200, { a: 1 }) : reply(res, 404, status(404, 'NotFound', 'no')));
  seen.length = 0;
  const traced = apiClient({ server: base }, { tracer: provider.tracer({ name: 'otelhttp' }) });
  await traced.get('/ok');
  await traced.get('/missing').catch(() => {});
  await new Promise((r) => setTimeout(r, 20));
  const [ok, missing] = spans as [SpanData, SpanData];
  const u = new URL(base);
  assert.equal(ok.name, 'HTTP GET');
  assert.equal(ok.kind, 3);
  assert.deepEqual(ok.attributes, {
    'http.request.method': 'GET',
    'url.full': `${u.origin}/ok`,
    'server.address': u.hostname,
    'server.port': Number(u.port),
    'network.protocol.version': '1.1',
    'http.response.status_code': 200,
  });
  assert.equal(ok.status.code, 0);
  assert.equal(seen[0]!.headers.traceparent, `00-${Buffer.from(ok.traceId).toString('hex')}-${Buffer.from(ok.spanId).toString('hex')}-01`);
  assert.equal(missing.attributes['http.response.status_code'], 404);
  assert.equal(missing.attributes['error.type'], '404');
  assert.equal(missing.status.code, 2);
});

test('exec credential plugin: its token on each request, run once while valid, run again after a 401 for the next request', {
  timeout: 10_000,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kts-exec-'));
  try {
    // The plugin hands out tok-1, tok-2, ... (a counter file), and records the KUBERNETES_EXEC_INFO it got.
    const plugin = join(dir, 'plugin.sh');
    writeFileSync(
      plugin,
      `#!/bin/sh\nn=$(($(cat ${dir}/n 2>/dev/null || echo 0) + 1)); echo $n > ${dir}/n\necho "$KUBERNETES_EXEC_INFO" > ${dir}/info\nprintf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"tok-%s"}}' $n\n`,
      { mode: 0o755 },
    );
    const calls: string[] = [];
    const c = apiClient(
      {
        server: base,
        exec: { apiVersion: 'client.authentication.k8s.io/v1', command: plugin, args: [], env: [{ name: 'X', value: '1' }] },
      },
      { execObserver: { call: (code, s) => calls.push(`${code} ${s}`), certificateExpiry: () => {}, rotated: () => {} } },
    );
    let refuse = 'tok-1';
    seen = [];
    route = (q, res) =>
      q.headers.authorization === `Bearer ${refuse}` ? reply(res, 401, status(401, 'Unauthorized', 'no')) : reply(res, 200, {});
    refuse = '';
    await c.get('/a');
    await c.get('/b');
    refuse = 'tok-1'; // the token expired on the apiserver's side
    await assert.rejects(c.get('/c'), (e: ApiError) => e.status === 401);
    await new Promise((r) => setTimeout(r, 300)); // the plugin runs again after the 401
    await c.get('/d');
    assert.deepEqual(
      seen.map((q) => q.headers.authorization),
      ['Bearer tok-1', 'Bearer tok-1', 'Bearer tok-1', 'Bearer tok-2'],
    );
    assert.deepEqual(calls, ['0 no_error', '0 no_error']);
    assert.deepEqual(JSON.parse(readFileSync(join(dir, 'info'), 'utf8')), {
      kind: 'ExecCredential',
      apiVersion: 'client.authentication.k8s.io/v1',
      spec: { interactive: false },
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("exec credential plugin: one that is missing or fails is each request's error, counted by its kind", quick, async () => {
  const calls: string[] = [];
  const observer = { call: (code: number, s: string) => calls.push(`${code} ${s}`), certificateExpiry: () => {}, rotated: () => {} };
  const exec = (command: string, args: string[] = []) => ({ apiVersion: 'client.authentication.k8s.io/v1beta1', command, args, env: [] });
  const missing = apiClient(
    { server: base, exec: { ...exec('/nonexistent/aws-iam-authenticator'), installHint: 'install it' } },
    { execObserver: observer },
  );
  await assert.rejects(missing.get('/a'), {
    message: 'GET /a: getting credentials: exec: executable /nonexistent/aws-iam-authenticator not found (install it)',
  });
  const failing = apiClient({ server: base, exec: exec('/bin/sh', ['-c', 'exit 3']) }, { execObserver: observer });
  await assert.rejects(failing.get('/a'), { message: 'GET /a: getting credentials: exec: executable /bin/sh failed with exit code 3' });
  assert.deepEqual(calls, ['1 plugin_not_found_error', '3 plugin_execution_error']);
});

const NO_RELATIONSHIP =
  'POST /api/v1/namespaces/ns/serviceaccounts/default/token: 403 serviceaccounts "default" is forbidden: User "system:node:vm" cannot create resource "serviceaccounts/token" in API group "" in the namespace "ns": no relationship found between node \'vm\' and this object';

test("apiserverBehind: only the 403s of an apiserver whose view of the pod trails the kubelet's", () => {
  const cases: [unknown, boolean][] = [
    [new ApiError(403, 'Forbidden', NO_RELATIONSHIP), true],
    [
      new ApiError(
        403,
        'Forbidden',
        'POST /api/v1/namespaces/ns/serviceaccounts/default/token: 403 serviceaccounts "default" is forbidden: node requested token bound to a pod scheduled on a different node',
      ),
      true,
    ],
    [
      new ApiError(
        403,
        'Forbidden',
        `GET /api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3Dkube-root-ca.crt: 403 configmaps "kube-root-ca.crt" is forbidden: User "system:node:vm" cannot list resource "configmaps" in API group "" in the namespace "ns": no relationship found between node 'vm' and this object`,
      ),
      true,
    ],
    [new ApiError(403, 'Forbidden', 'serviceaccounts "default" is forbidden: User "system:node:vm" cannot create resource'), false],
    [new ApiError(404, 'NotFound', 'serviceaccounts "default" not found'), false],
    [new Error(NO_RELATIONSHIP), false],
  ];
  for (const [e, want] of cases) assert.equal(apiserverBehind(e), want, (e as Error).message);
});

test('behindWaits: 0.1, 0.2 and 0.4 s, each up to 1.5x, then none', () => {
  const next = behindWaits();
  const waits = [next(), next(), next(), next(), next()];
  assert.ok(waits[0]! >= 100 && waits[0]! <= 150, `${waits}`);
  assert.ok(waits[1]! >= 200 && waits[1]! <= 300, `${waits}`);
  assert.ok(waits[2]! >= 400 && waits[2]! <= 600, `${waits}`);
  assert.deepEqual(waits.slice(3), [undefined, undefined]);
});
