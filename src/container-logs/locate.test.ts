import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { containerLogFile } from './locate.ts';
import type { ContainerState } from '../container/types.ts';

const pod = (restartPolicy: string): Pod => ({
  metadata: { name: 'p', namespace: 'ns', uid: 'u1' },
  spec: { restartPolicy, containers: [{ name: 'app' }] },
});
const inst = (id: string, attempt: number, phase: ContainerState['phase'] = 'exited'): ContainerState => ({
  id,
  sandboxId: 's',
  name: 'app',
  attempt,
  phase,
  exitCode: 1,
  image: '',
  imageRef: '',
  hash: '',
  createdAtNs: String(attempt),
});
const rt = (...containers: ContainerState[]) => ({ uid: 'u1', sandboxes: [], containers });
const file = (attempt: number, containerID: string) => ({ path: `/var/log/pods/ns_p_u1/app/${attempt}.log`, containerID });

const cases: [string, Pod, ReturnType<typeof rt> | undefined, boolean, ReturnType<typeof file> | undefined][] = [
  ['current: the newest instance', pod('Never'), rt(inst('c2', 1), inst('c1', 0)), false, file(1, 'c2')],
  ['previous of a running container: the one before', pod('Always'), rt(inst('c2', 1, 'running'), inst('c1', 0)), true, file(0, 'c1')],
  ['previous of a finished container: the one before', pod('Never'), rt(inst('c2', 1), inst('c1', 0)), true, file(0, 'c1')],
  ['previous in a crash loop: the newest, shown as lastState while waiting', pod('Always'), rt(inst('c2', 1)), true, file(1, 'c2')],
  ['no previous instance', pod('Never'), rt(inst('c1', 0)), true, undefined],
  ['nothing in the runtime', pod('Always'), undefined, false, undefined],
];
for (const [name, p, r, previous, want] of cases) {
  test(`containerLogFile: ${name}`, () => assert.deepEqual(containerLogFile(p, r, 'app', previous, '/var/log/pods'), want));
}
