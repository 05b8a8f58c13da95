import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runProbe, type ProbeSubject } from './run.ts';
import type { ExecRunner } from './exec.ts';

const subject: ProbeSubject = {
  podName: 'ns/web',
  containerId: 'c1',
  podIP: '127.0.0.1',
  container: { name: 'app', env: [{ name: 'FILE', value: '/tmp/ready' }], ports: [{ name: 'http', containerPort: 8080 }] },
};

test('runProbe: exec expands $(VAR) from the container env and passes the timeout', async () => {
  const seen: unknown[] = [];
  const cri = {
    execSync: async (r: unknown) => {
      seen.push(r);
      return { exitCode: 0, stdout: Buffer.alloc(0), stderr: Buffer.alloc(0) };
    },
  } as unknown as ExecRunner;
  assert.deepEqual(await runProbe(cri, { exec: { command: ['cat', '$(FILE)'] } }, subject, 2), { result: 'success', output: '' });
  assert.deepEqual(seen, [{ containerId: 'c1', cmd: ['cat', '/tmp/ready'], timeout: 2 }]);
});

test('runProbe: an error is tried 3 times, then reported as unknown with the error', async () => {
  let calls = 0;
  const cri = {
    execSync: async () => {
      calls++;
      throw new Error('container is stopping');
    },
  } as unknown as ExecRunner;
  assert.deepEqual(await runProbe(cri, { exec: { command: ['true'] } }, subject, 1), {
    result: 'unknown',
    output: '',
    error: 'container is stopping',
  });
  assert.equal(calls, 3);
  assert.deepEqual(await runProbe(cri, { tcpSocket: { port: 'metrics' } }, subject, 1), {
    result: 'unknown',
    output: '',
    error: 'strconv.Atoi: parsing "metrics": invalid syntax',
  });
  assert.deepEqual(await runProbe(cri, {}, subject, 1), { result: 'unknown', output: '', error: 'missing probe handler for ns/web:app' });
  assert.deepEqual(await runProbe(cri, { grpc: { port: 9090 } }, { ...subject, podIP: undefined }, 1), {
    result: 'unknown',
    output: '',
    error: 'the pod has no IP address yet',
  });
});

test('runProbe: tcpSocket on a named port of the pod IP', async () => {
  const cri = {} as ExecRunner;
  const r = await runProbe(
    cri,
    { tcpSocket: { port: 'http' } },
    { ...subject, container: { name: 'app', ports: [{ name: 'http', containerPort: 1 }] } },
    1,
  );
  assert.deepEqual(r, { result: 'failure', output: 'dial tcp 127.0.0.1:1: connect: connection refused' });
});
