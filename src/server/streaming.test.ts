import { test } from 'node:test';
import assert from 'node:assert/strict';
import { status } from '@grpc/grpc-js';
import { CriError } from '../cri/error.ts';
import { parseStreamRequest, StreamError, streamingError, streamRoute, translatedWebSocket, type StreamRequest } from './streaming.ts';

test('streaming routes and parameters as the apiserver sends them', () => {
  assert.deepEqual(parseStreamRequest('/exec/ns/p/c?command=sh&command=-c&command=echo+hi&input=1&output=1&error=1&tty=1'), {
    kind: 'exec',
    namespace: 'ns',
    pod: 'p',
    uid: undefined,
    container: 'c',
    command: ['sh', '-c', 'echo hi'],
    stdin: true,
    stdout: true,
    stderr: true,
    tty: true,
  });
  assert.deepEqual(parseStreamRequest('/attach/ns/p/uid-1/c?output=1&error=1'), {
    kind: 'attach',
    namespace: 'ns',
    pod: 'p',
    uid: 'uid-1',
    container: 'c',
    command: [],
    stdin: false,
    stdout: true,
    stderr: true,
    tty: false,
  });
  assert.deepEqual(parseStreamRequest('/portForward/ns/p?port=8080&port=9090'), {
    kind: 'portForward',
    namespace: 'ns',
    pod: 'p',
    uid: undefined,
    ports: [8080, 9090],
  });
  assert.deepEqual(parseStreamRequest('/exec/ns/p/c'), { status: 400, message: 'missing required parameter "command"' });
  assert.equal((parseStreamRequest('/portForward/ns/p?port=http') as { status: number }).status, 400);
  assert.equal((parseStreamRequest('/exec/ns') as { status: number }).status, 404);
});

test("streamRoute: upstream's go-restful route of each streaming request, its server span's name", () => {
  const cases: [string, string][] = [
    ['/exec/ns/web/app?command=ls', '/exec/{podNamespace}/{podID}/{containerName}'],
    ['/exec/ns/web/u1/app?command=ls', '/exec/{podNamespace}/{podID}/{uid}/{containerName}'],
    ['/attach/ns/web/app', '/attach/{podNamespace}/{podID}/{containerName}'],
    ['/portForward/ns/web?port=80', '/portForward/{podNamespace}/{podID}'],
    ['/portForward/ns/web/u1?port=80', '/portForward/{podNamespace}/{podID}/{uid}'],
  ];
  for (const [url, want] of cases) {
    const r = parseStreamRequest(url);
    assert.ok(!('status' in r), url);
    assert.equal(streamRoute(r), want, url);
  }
});

test("streamingError: a refusal as it says; a runtime's error as upstream's streaming.WriteError answers it", () => {
  const cases: [string, unknown, { status: number; message: string }][] = [
    ['a refusal', new StreamError(404, 'pod does not exist'), { status: 404, message: 'pod does not exist' }],
    [
      'the container is gone',
      new CriError('Exec', status.NOT_FOUND, 'container "c1" not found'),
      { status: 404, message: 'rpc error: code = NotFound desc = container "c1" not found' },
    ],
    [
      'too many in flight',
      new CriError('Exec', status.RESOURCE_EXHAUSTED, 'maximum number of in-flight requests exceeded'),
      { status: 429, message: 'rpc error: code = ResourceExhausted desc = maximum number of in-flight requests exceeded' },
    ],
    ['anything else', new Error('boom'), { status: 500, message: 'boom' }],
  ];
  for (const [name, e, want] of cases) assert.deepEqual(streamingError(e), want, name);
});

// ExtendWebSocketsToKubelet: what the kubelet translates itself (upstream's
// IsWebSocketRequestWithStreamCloseProtocol and IsWebSocketRequestWithTunnelingProtocol); the
// rest goes to the runtime as it came.
const exec = parseStreamRequest('/exec/ns/pod/c?command=sh&output=1') as StreamRequest;
const attach = parseStreamRequest('/attach/ns/pod/c?output=1') as StreamRequest;
const portForward = parseStreamRequest('/portForward/ns/pod') as StreamRequest;
const ws = (protocols: string) => ({ upgrade: 'websocket', connection: 'Upgrade', 'sec-websocket-protocol': protocols });
const translated: [string, StreamRequest, Record<string, string>, string | undefined][] = [
  ["kubectl's exec (v5 first)", exec, ws('v5.channel.k8s.io, v4.channel.k8s.io'), 'exec'],
  ['attach offering v5 among others', attach, ws('v4.channel.k8s.io,v5.channel.k8s.io'), 'attach'],
  ['exec without v5: the runtime serves the older protocols', exec, ws('v4.channel.k8s.io, channel.k8s.io'), undefined],
  ['exec over SPDY', exec, { upgrade: 'SPDY/3.1', connection: 'Upgrade', 'sec-websocket-protocol': 'v5.channel.k8s.io' }, undefined],
  ["kubectl's port-forward tunnel", portForward, ws('SPDY/3.1+portforward.k8s.io'), 'portforward'],
  ['port-forward over the WebSocket channel protocol', portForward, ws('portforward.k8s.io'), undefined],
];
for (const [name, r, headers, want] of translated)
  test(`translatedWebSocket: ${name}`, () => assert.equal(translatedWebSocket(r, headers), want));
