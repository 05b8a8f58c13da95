import { test } from 'node:test';
import assert from 'node:assert/strict';
import { containerLogFile } from './locate.ts';
import type { ContainerState } from '../runtime/types.ts';

const pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u1' }, spec: { containers: [{ name: 'app' }] } };
const inst = (id: string, attempt: number): ContainerState => ({ id, sandboxId: 's', name: 'app', attempt, phase: 'exited', image: '', imageRef: '', hash: '', createdAtNs: String(attempt) });

test('the newest instance, or the previous one, as upstream lays log files out', () => {
  const rt = { uid: 'u1', sandboxes: [], containers: [inst('c2', 1), inst('c1', 0)] };
  assert.deepEqual(containerLogFile(pod, rt, 'app', false, '/var/log/pods'), { path: '/var/log/pods/ns_p_u1/app/1.log', containerID: 'c2' });
  assert.deepEqual(containerLogFile(pod, rt, 'app', true, '/var/log/pods'), { path: '/var/log/pods/ns_p_u1/app/0.log', containerID: 'c1' });
  assert.equal(containerLogFile(pod, { ...rt, containers: [inst('c1', 0)] }, 'app', true, '/var/log/pods'), undefined, 'no previous instance');
  assert.equal(containerLogFile(pod, undefined, 'app', false, '/var/log/pods'), undefined);
});
