import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, type ApiClient } from '../apiserver/client.ts';
import type { Logger } from '../log/log.ts';
import { eventRecorder } from './recorder.ts';

const log = { warn() {}, info() {}, error() {}, v() {} } as unknown as Logger;
const pod = { kind: 'Pod', apiVersion: 'v1', namespace: 'default', name: 'web', uid: 'u1' };

/** An apiserver that records the requests and answers as told (gone: the events it has lost). */
function fakeApi(gone = new Set<string>()) {
  const calls: string[] = [];
  const api = {
    async create(path: string, body: { metadata: { name: string }; count: number }) {
      calls.push(`POST ${path} ${body.metadata.name} x${body.count}`);
      return body;
    },
    async patch(path: string, body: { count: number }, type: string) {
      calls.push(`PATCH ${path} x${body.count} (${type})`);
      if (gone.has(path.split('/').pop()!)) throw new ApiError(404, 'NotFound', 'gone');
      return body;
    },
  } as unknown as ApiClient;
  return { api, calls };
}

const settled = async (calls: string[], n: number) => {
  for (let i = 0; i < 200 && calls.length < n; i++) await new Promise((r) => setTimeout(r, 5));
};

test('the recorder creates an event, then patches it for a repeat, as upstream recordToSink', async (t) => {
  const { api, calls } = fakeApi();
  const r = eventRecorder(api, { host: 'node-a', log, qps: 0 });
  t.after(() => r.stop());
  r.event(pod, 'Warning', 'BackOff', 'Back-off restarting failed container');
  r.event(pod, 'Warning', 'BackOff', 'Back-off restarting failed container');
  r.event(pod, 'Normal', 'Pulled', 'Container image "busybox" already present on machine');
  await settled(calls, 3);
  const name = calls[0]!.split(' ')[2];
  assert.match(calls[0]!, /^POST \/api\/v1\/namespaces\/default\/events web\.[0-9a-f]+ x1$/);
  assert.equal(calls[1], `PATCH /api/v1/namespaces/default/events/${name} x2 (strategic)`);
  assert.match(calls[2]!, /^POST \/api\/v1\/namespaces\/default\/events web\.[0-9a-f]+ x1$/);
  assert.notEqual(calls[2]!.split(' ')[2], name, 'another event, another name');
});

test('a repeat of an event the apiserver no longer has is created again, with its count', async (t) => {
  const gone = new Set<string>();
  const { api, calls } = fakeApi(gone);
  const r = eventRecorder(api, { host: 'node-a', log, qps: 0 });
  t.after(() => r.stop());
  r.event(pod, 'Warning', 'Unhealthy', 'Readiness probe failed');
  await settled(calls, 1);
  gone.add(calls[0]!.split(' ')[2]!);
  r.event(pod, 'Warning', 'Unhealthy', 'Readiness probe failed');
  await settled(calls, 3);
  assert.match(calls[1]!, /^PATCH .* x2 \(strategic\)$/);
  assert.equal(calls[2], `POST /api/v1/namespaces/default/events ${calls[0]!.split(' ')[2]} x2`);
});
