import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Server, ServerCredentials, status } from '@grpc/grpc-js';
import { decodeHealthCheckResponse, encodeHealthCheckRequest, grpcProbe } from './grpc.ts';

test('health messages: protobuf wire format', () => {
  assert.deepEqual(encodeHealthCheckRequest(''), Buffer.alloc(0));
  assert.deepEqual(encodeHealthCheckRequest('db'), Buffer.from([0x0a, 2, 0x64, 0x62]));
  assert.equal(decodeHealthCheckResponse(Buffer.from([0x08, 1])), 1);
  assert.equal(decodeHealthCheckResponse(Buffer.alloc(0)), 0);
});

// A health server whose answer depends on the service asked about.
const server = new Server();
let lastService = '';
server.addService(
  {
    Check: {
      path: '/grpc.health.v1.Health/Check',
      requestStream: false,
      responseStream: false,
      requestSerialize: (x: Buffer) => x,
      requestDeserialize: (x: Buffer) => x,
      responseSerialize: (x: Buffer) => x,
      responseDeserialize: (x: Buffer) => x,
    },
  },
  {
    Check: (call: { request: Buffer }, cb: (e: unknown, v?: Buffer) => void) => {
      lastService = call.request.length ? call.request.subarray(2).toString() : '';
      if (lastService === 'down') return cb(null, Buffer.from([0x08, 2]));
      if (lastService === 'gone') return cb({ code: status.NOT_FOUND, details: 'unknown service' });
      return cb(null, Buffer.from([0x08, 1]));
    },
  } as never,
);
const port = await new Promise<number>((r, j) =>
  server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) => (e ? j(e) : r(p))),
);
after(() => server.forceShutdown());

test('grpc: SERVING succeeds, with the service name sent', async () => {
  assert.deepEqual(await grpcProbe('127.0.0.1', port, 'api', 2), { result: 'success', output: 'service is serving' });
  assert.equal(lastService, 'api');
});

test("grpc: NOT_SERVING and errors fail with upstream's messages", async () => {
  assert.deepEqual(await grpcProbe('127.0.0.1', port, 'down', 2), {
    result: 'failure',
    output: 'service unhealthy (responded with "NOT_SERVING")',
  });
  assert.deepEqual(await grpcProbe('127.0.0.1', port, 'gone', 2), {
    result: 'failure',
    output: 'error: health rpc probe failed: rpc error: code = NotFound desc = unknown service',
  });
  const refused = await grpcProbe('127.0.0.1', 1, '', 1);
  assert.equal(refused.result, 'failure');
  assert.match(
    refused.output,
    /^(timeout: failed to connect service "127\.0\.0\.1:1" within 1s|error: failed to connect service at "127\.0\.0\.1:1")/,
  );
});
