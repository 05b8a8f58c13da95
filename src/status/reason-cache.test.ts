import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { ContainerState, PodRuntimeStatus, Waiting } from '../container/types.ts';
import { type Reason, rememberReasons } from './reason-cache.ts';

const pod = (restartPolicy = 'Always', deleting = false): Pod => ({
  metadata: { uid: 'u', name: 'p', namespace: 'ns', ...(deleting ? { deletionTimestamp: '2026-12-04T00:00:00Z' } : {}) },
  spec: {
    restartPolicy,
    containers: [{ name: 'app', image: 'busybox' }],
    ephemeralContainers: [{ name: 'dbg', image: 'busybox' }],
  },
});
const exited = (name: string, id: string, exitCode = 128): ContainerState =>
  ({ id, name, attempt: 0, phase: 'exited', exitCode }) as ContainerState;
const running = (name: string, id: string): ContainerState => ({ id, name, attempt: 0, phase: 'running' }) as ContainerState;
const rt = (...containers: ContainerState[]): PodRuntimeStatus => ({ uid: 'u', sandboxes: [], containers });
const startError: Waiting = { reason: 'RunContainerError', message: 'exec: "/nope": no such file or directory' };

test('rememberReasons: a reason outlives its sync while nothing new happens to the container, as upstream ReasonCache', () => {
  const rows: { name: string; pod?: Pod; rt: PodRuntimeStatus; fresh?: [string, Waiting][]; kept?: [string, Reason][]; want: string[] }[] =
    [
      { name: "the sync's own reasons are shown and kept", rt: rt(exited('dbg', 'c1')), fresh: [['dbg', startError]], want: ['dbg'] },
      {
        name: 'an ephemeral container that failed to start and is never tried again stays waiting',
        rt: rt(exited('dbg', 'c1')),
        kept: [['dbg', { waiting: startError, instance: 'c1' }]],
        want: ['dbg'],
      },
      {
        name: 'a newer instance: started again, the reason is gone',
        rt: rt(exited('app', 'c2', 1), exited('app', 'c1', 1)),
        kept: [['app', { waiting: { reason: 'CrashLoopBackOff' }, instance: 'c1' }]],
        want: [],
      },
      {
        name: 'running now: gone',
        rt: rt(running('app', 'c1')),
        kept: [['app', { waiting: { reason: 'CrashLoopBackOff' }, instance: 'c1' }]],
        want: [],
      },
      {
        name: 'restartPolicy Never: not to be restarted, so shown terminated (ShouldContainerBeRestarted)',
        pod: pod('Never'),
        rt: rt(exited('dbg', 'c1')),
        kept: [['dbg', { waiting: startError, instance: 'c1' }]],
        want: [],
      },
      {
        name: 'the pod is being deleted: gone',
        pod: pod('Always', true),
        rt: rt(exited('dbg', 'c1')),
        kept: [['dbg', { waiting: startError, instance: 'c1' }]],
        want: [],
      },
      {
        name: 'no instance then and none now (an image that cannot be pulled): kept',
        rt: rt(),
        kept: [['app', { waiting: { reason: 'ImagePullBackOff' } }]],
        want: ['app'],
      },
      { name: 'a container no longer in the spec: gone', rt: rt(), kept: [['old', { waiting: { reason: 'ErrImagePull' } }]], want: [] },
    ];
  for (const r of rows) {
    const out = rememberReasons(r.pod ?? pod(), r.rt, new Map(r.fresh ?? []), new Map(r.kept ?? []));
    assert.deepEqual([...out.waiting.keys()], r.want, r.name);
    assert.deepEqual([...out.kept.keys()], r.want, `${r.name}: kept`);
  }
  // A fresh reason replaces the kept one and records the newest instance.
  const out = rememberReasons(
    pod(),
    rt(exited('app', 'c2', 1)),
    new Map([['app', { reason: 'CrashLoopBackOff' }]]),
    new Map([['app', { waiting: startError, instance: 'c1' }]]),
  );
  assert.deepEqual(out.kept.get('app'), { waiting: { reason: 'CrashLoopBackOff' }, instance: 'c2' });
});
