import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, type Writable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { copyNodeLogs, findInLogDir, journalctl, type Journal, nodeLogQueryHandler } from './node-logs.ts';
import type { NodeLogQuery } from './node-log-query.ts';
import { Router } from './router.ts';

const root = mkdtempSync(join(tmpdir(), 'varlog-'));
const outside = mkdtempSync(join(tmpdir(), 'secret-'));
writeFileSync(join(outside, 'passwd'), 'root:x:0:0\n');
writeFileSync(join(root, 'syslog'), 'booted\n');
mkdirSync(join(root, 'apt'));
writeFileSync(join(root, 'apt', 'history.log'), 'installed\n');
writeFileSync(join(root, 'containerd.log'), 'containerd from a file\n');
symlinkSync(outside, join(root, 'leak'));
after(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

/** A journal that knows kubelet.service; its reads are recorded. */
let journalReads: string[][] = [];
let journal: Journal = fakeJournal('kubelet.service\ncontainerd-shim.service\n');
function fakeJournal(
  units: string | undefined,
  read: Journal['read'] = async (args, out) => {
    out.write(`journal ${args.join(' ')}\n`);
    return 'exited';
  },
): Journal {
  return {
    units: async () => units,
    read: (args, out, signal) => {
      journalReads.push(args);
      return read(args, out, signal);
    },
  };
}

const app = new Router();
app.get(
  /^\/logs\/.*$/,
  nodeLogQueryHandler({ root, journal: { units: (s) => journal.units(s), read: (a, o, s) => journal.read(a, o, s) }, timeoutMs: 200 }),
);
const server = createServer(app.listener());
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const { port } = server.address() as AddressInfo;
after(() => server.close());

type Answer = { status: number; type?: string; encoding?: string; location?: string; body: string };
function get(path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, agent: false, headers }, (res) => {
      const chunks: Buffer[] = [];
      res
        .on('data', (d: Buffer) => chunks.push(d))
        .on('end', () => {
          const raw = Buffer.concat(chunks);
          const encoding = res.headers['content-encoding'];
          resolve({
            status: res.statusCode!,
            type: res.headers['content-type'],
            encoding,
            location: res.headers.location,
            body: (encoding === 'gzip' ? gunzipSync(raw) : raw).toString(),
          });
        });
    })
      .on('error', reject)
      .end();
  });
}

test('errors in the query are 400, invalid queries 406, as upstream', async () => {
  const cases: [path: string, status: number, body: string][] = [
    // The e2e "should return the error with an empty --query option".
    ['/logs/?query', 400, 'query: Invalid value: [""]: may not be empty\n'],
    ['/logs/?query=%20%20', 400, 'query: Invalid value: ["  "]: may not be empty\n'],
    ['/logs/?query=kubelet&sinceTime=yesterday', 400, 'sinceTime: Invalid value: "yesterday": invalid time format\n'],
    ['/logs/?tailLines=x', 400, 'tailLines: Invalid value: "x": strconv.Atoi: parsing "x": invalid syntax\n'],
    ['/logs/syslog?query=kubelet', 406, 'path not allowed in query mode\n'],
    ['/logs/?tailLines=3', 406, 'query: Required value: cannot be empty with options\n'],
    ['/logs/?query=kubelet&boot=1', 406, 'boot: Invalid value: 1: must be less than 1\n'],
    ['/logs/?query=kubelet&tailLines=100001', 406, 'tailLines: Invalid value: 100001: must be between 0 and 100000, inclusive\n'],
    ['/logs/?query=kubelet&pattern=a(', 406, 'pattern: Invalid value: "a(": error parsing regexp: missing closing ): `a(`\n'],
    [
      '/logs/?query=kubelet&query=apt/history.log',
      406,
      'query: Invalid value: "[apt/history.log], [kubelet]": cannot specify a file and service\n',
    ],
    ['/logs/?query=apt/history.log&tailLines=1', 406, 'query: Invalid value: ["apt/history.log"]: cannot specify file with options\n'],
    ['/logs/?query=/syslog', 406, 'query: Invalid value: ["/syslog"]: statat /syslog: path escapes from parent\n'],
    ['/logs/?query=apt/nope.log', 406, 'query: Invalid value: ["apt/nope.log"]: statat apt/nope.log: no such file or directory\n'],
    ['/logs/?query=../etc/passwd', 406, 'query: Invalid value: ["../etc/passwd"]: statat ../etc/passwd: path escapes from parent\n'],
    ['/logs/?query=leak/passwd', 406, 'query: Invalid value: ["leak/passwd"]: statat leak/passwd: path escapes from parent\n'],
    ['/logs/?query=syslog/', 406, 'query: Invalid value: ["syslog/"]: statat syslog/: not a directory\n'],
    // Inside the directory for os.Root, a ".." for the file server.
    ['/logs/?query=apt/../syslog', 400, 'invalid URL path\n'],
  ];
  for (const [path, status, body] of cases) {
    const got = await get(path);
    assert.deepEqual([got.status, got.body], [status, body], path);
    assert.equal(got.type, 'text/plain; charset=utf-8', path);
  }
  assert.deepEqual(journalReads, [], 'nothing read for a refused query');
});

test('without query parameters it is the file server; one file is served as the file server serves it', async () => {
  assert.match((await get('/logs/')).body, /<a href="syslog">syslog<\/a>/);
  assert.equal((await get('/logs/syslog')).body, 'booted\n');
  assert.equal((await get('/logs/syslog?unknown=1')).body, 'booted\n', 'parameters the query mode does not know');
  assert.deepEqual(await get('/logs/?query=apt/history.log'), {
    status: 200,
    type: 'text/plain; charset=utf-8',
    encoding: undefined,
    location: undefined,
    body: 'installed\n',
  });
  // Go's FileServer answers a directory asked without a slash with a redirect that keeps the query.
  const dir = await get('/logs/?query=./apt');
  assert.deepEqual([dir.status, dir.location], [301, 'apt/?query=./apt']);
  assert.match((await get('/logs/?query=apt/')).body, /<a href="history.log">history.log<\/a>/);
});

test('services the journal knows are read with journalctl and the arguments upstream builds', async () => {
  journalReads = [];
  const plain = await get('/logs/?query=kubelet');
  assert.deepEqual(plain, {
    status: 200,
    type: 'text/plain;charset=UTF-8',
    encoding: undefined,
    location: undefined,
    body: 'journal --utc --no-pager --output=short-precise --unit=kubelet\n',
  });
  await get(
    '/logs/?query=kubelet&sinceTime=2026-11-25T10:04:05Z&untilTime=2026-11-25T12:00:00%2B01:00&tailLines=3&boot=0&pattern=container',
  );
  assert.deepEqual(journalReads[1], [
    '--utc',
    '--no-pager',
    '--output=short-precise',
    '--since=2026-11-25 10:4:5',
    '--until=2026-11-25 12:0:0',
    '--pager-end',
    '--lines=3',
    '--unit=kubelet',
    '--grep=container',
    '--boot',
    '0',
  ]);
  // Gzip only for exactly "gzip", as upstream compares the header.
  const gz = await get('/logs/?query=kubelet', { 'accept-encoding': 'gzip' });
  assert.deepEqual([gz.encoding, gz.body], ['gzip', 'journal --utc --no-pager --output=short-precise --unit=kubelet\n']);
  assert.equal((await get('/logs/?query=kubelet', { 'accept-encoding': 'gzip, deflate' })).encoding, undefined);
});

test('services the journal does not know come from /var/log, as upstream heuristicsCopyFileLogs', async () => {
  journalReads = [];
  assert.equal((await get('/logs/?query=containerd')).body, 'containerd from a file\n');
  // The e2e "should return the kubelet logs" on a node whose journal lacks the kubelet: the answer names it.
  assert.equal((await get('/logs/?query=nokubelet')).body, '\nlog not found for nokubelet\n');
  assert.equal(
    (await get('/logs/?query=nokubelet&boot=0')).body,
    '\noptions present and query resolved to log files for [nokubelet]\ntry without specifying options\n',
  );
  assert.equal(
    (await get('/logs/?query=kubelet&query=containerd')).body,
    'journal --utc --no-pager --output=short-precise --unit=kubelet\ncontainerd from a file\n',
    'the journal first, then the files',
  );
  assert.deepEqual(journalReads, [['--utc', '--no-pager', '--output=short-precise', '--unit=kubelet']]);
});

test('journalctl missing or failing: the answer says so as upstream writes it', async () => {
  try {
    // Missing: `journalctl --field` fails, so every service is looked for as a file.
    journal = journalctl(join(root, 'no-such-journalctl'));
    assert.equal((await get('/logs/?query=kubelet')).body, '\nlog not found for kubelet\n');
    // In the unit list but not startable: upstream's message, unless an older boot was asked.
    journal = fakeJournal('kubelet.service\n', async () => 'unavailable');
    assert.equal((await get('/logs/?query=kubelet')).body, '\nerror: journal output not available\n');
    assert.equal((await get('/logs/?query=kubelet&boot=-1')).body, '');
    // Still running at the deadline (timeoutMs 200 here, 30 s upstream): what it wrote, then the end.
    journal = fakeJournal('kubelet.service\n', async (_args, out, signal) => {
      out.write('partial\n');
      await new Promise((r) => signal.addEventListener('abort', r, { once: true }));
      return 'exited';
    });
    assert.equal((await get('/logs/?query=kubelet&query=containerd')).body, 'partial\n\ncontext error: context deadline exceeded\n');
  } finally {
    journal = fakeJournal('kubelet.service\ncontainerd-shim.service\n');
  }
});

function collect(): { out: Writable; text: () => string } {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  return { out, text: () => Buffer.concat(chunks).toString() };
}

// Upstream's Test_heuristicsCopyFileLogs, through copyNodeLogs with a journal that knows nothing.
test('the file heuristics: the cases of upstream Test_heuristicsCopyFileLogs', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'logs-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const copy = async (service: string) => {
    const { out, text } = collect();
    const q: NodeLogQuery = { services: [service], files: [], pattern: '' };
    await copyNodeLogs(q, out, { root: dir, journal: fakeJournal(undefined) }, new AbortController().signal);
    return text();
  };
  assert.match(await copy('service.log'), /log not found for service.log/);
  assert.match(await copy('service'), /log not found for service/);
  writeFileSync(join(dir, 'service.log'), 'valid logs');
  assert.equal(await copy('service.log'), 'valid logs');
  assert.equal(await copy('service'), 'valid logs');
  mkdirSync(join(dir, 'service'));
  assert.equal(await copy('service'), 'valid logs', 'a directory is passed over');
  writeFileSync(join(dir, 'service', 'service.log'), 'error');
  assert.equal(await copy('service'), 'valid logs', 'the first match wins');
  // Not "not found": upstream stops and says why.
  writeFileSync(join(dir, 'locked'), 'secret');
  chmodSync(join(dir, 'locked'), 0);
  if (process.getuid?.() !== 0) assert.match(await copy('locked'), /^\nerror getting log for locked: /);
  assert.equal(await copy('..'), '\nerror getting log for ..: openat ..: path escapes from parent\n');
});

test('findInLogDir: what os.Root says of a path under the log directory', async () => {
  assert.deepEqual(await findInLogDir(root, 'syslog', 'statat'), { path: join(root, 'syslog'), dir: false });
  assert.deepEqual(await findInLogDir(root, 'apt', 'statat'), { path: join(root, 'apt'), dir: true });
  assert.deepEqual(await findInLogDir(root, 'nope', 'openat'), { error: 'openat nope: no such file or directory', notExist: true });
  assert.deepEqual(await findInLogDir(root, 'leak', 'statat'), { error: 'statat leak: path escapes from parent', notExist: false });
  assert.deepEqual(await findInLogDir(root, 'apt/../../x', 'statat'), {
    error: 'statat apt/../../x: path escapes from parent',
    notExist: false,
  });
});

test('journalctl: output and errors streamed, missing binary unavailable, killed at the deadline', async () => {
  const bin = join(root, 'fake-journalctl');
  writeFileSync(
    bin,
    '#!/bin/sh\nif [ "$1" = --field ]; then echo kubelet.service; exit 0; fi\nif [ "$1" = --hang ]; then echo started; exec sleep 30; fi\necho "args: $*"; echo "warn" >&2; exit 1\n',
  );
  chmodSync(bin, 0o755);
  const j = journalctl(bin);
  const signal = new AbortController().signal;
  assert.equal(await j.units(signal), 'kubelet.service\n');
  let c = collect();
  assert.equal(await j.read(['--utc', '--unit=kubelet'], c.out, signal), 'exited', 'a failing journalctl still ran');
  assert.deepEqual(c.text().split('\n').sort(), ['', 'args: --utc --unit=kubelet', 'warn']);
  const missing = journalctl(join(root, 'missing'));
  assert.equal(await missing.units(signal), undefined);
  assert.equal(await missing.read([], collect().out, signal), 'unavailable');
  c = collect();
  const started = Date.now();
  assert.equal(await j.read(['--hang'], c.out, AbortSignal.timeout(300)), 'exited');
  assert.ok(Date.now() - started < 5000, 'killed');
  assert.equal(c.text(), 'started\n');
});
