import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { taskEvent } from './containerd-events.ts';

const root = new protobuf.Root().loadSync(fileURLToPath(new URL('../../proto/containerd/task-events.proto', import.meta.url)), {
  keepCase: true,
});
const encode = (type: string, msg: object) => ({
  type_url: type,
  value: Buffer.from(root.lookupType(type).encode(root.lookupType(type).create(msg)).finish()),
});
const decode = (t: string, v: Buffer) => root.lookupType(t).decode(v) as { container_id?: string; id?: string };
const env = (type: string, msg: object) => ({ topic: '/tasks/x', namespace: 'k8s.io', event: encode(type, msg) });

test('task events: a container exit counts, an exec exit does not', () => {
  assert.deepEqual(taskEvent(env('containerd.events.TaskExit', { container_id: 'c1', id: 'c1', exit_status: 1 }), decode), {
    kind: 'exit',
    containerID: 'c1',
  });
  assert.equal(taskEvent(env('containerd.events.TaskExit', { container_id: 'c1', id: 'exec-7', exit_status: 0 }), decode), undefined);
  assert.deepEqual(taskEvent(env('containerd.events.TaskStart', { container_id: 'c2', pid: 42 }), decode), {
    kind: 'start',
    containerID: 'c2',
  });
  assert.deepEqual(taskEvent(env('containerd.events.TaskOOM', { container_id: 'c3' }), decode), { kind: 'oom', containerID: 'c3' });
  assert.equal(
    taskEvent(
      { topic: '/tasks/paused', namespace: 'k8s.io', event: { type_url: 'containerd.events.TaskPaused', value: Buffer.alloc(0) } },
      decode,
    ),
    undefined,
  );
});
