import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type ContainerEvent, InMemoryRuntime } from './runtime.ts';

const sandboxConfig = (name: string) => ({ metadata: { name, namespace: 'ns', uid: `uid-${name}`, attempt: 0 }, labels: { pod: name } });
const containerConfig = (name: string, command: string[] = [], annotations: Record<string, string> = {}) => ({
  metadata: { name },
  image: { image: 'busybox' },
  command,
  annotations,
});

/** Waits for the runtime's exit timers (all 0 ms here). */
const tick = () => new Promise((r) => setTimeout(r, 5));

test('InMemoryRuntime: scenarios, each a sequence of calls and the containers it leaves', async () => {
  type Step = (r: InMemoryRuntime, ids: Record<string, string>) => void;
  const rows: [string, Step[], { state: string; exitCode: number; reason: string }[], string[]][] = [
    [
      'a server runs until stopped',
      [(r, ids) => (ids.c = r.createContainer(ids.sb, containerConfig('web'))), (r, ids) => r.startContainer(ids.c)],
      [{ state: 'CONTAINER_RUNNING', exitCode: 0, reason: '' }],
      ['CONTAINER_CREATED_EVENT', 'CONTAINER_STARTED_EVENT'],
    ],
    [
      'sh -c "exit 3" exits by itself',
      [
        (r, ids) => (ids.c = r.createContainer(ids.sb, containerConfig('job', ['sh', '-c', 'exit 3']))),
        (r, ids) => r.startContainer(ids.c),
      ],
      [{ state: 'CONTAINER_EXITED', exitCode: 3, reason: 'Error' }],
      ['CONTAINER_CREATED_EVENT', 'CONTAINER_STARTED_EVENT', 'CONTAINER_STOPPED_EVENT'],
    ],
    [
      'the annotation ends it with its code',
      [
        (r, ids) => (ids.c = r.createContainer(ids.sb, containerConfig('a', [], { 'hollow/exit-after': '0', 'hollow/exit-code': '0' }))),
        (r, ids) => r.startContainer(ids.c),
      ],
      [{ state: 'CONTAINER_EXITED', exitCode: 0, reason: 'Completed' }],
      ['CONTAINER_CREATED_EVENT', 'CONTAINER_STARTED_EVENT', 'CONTAINER_STOPPED_EVENT'],
    ],
    [
      'stopping the sandbox kills its containers',
      [
        (r, ids) => (ids.c = r.createContainer(ids.sb, containerConfig('web'))),
        (r, ids) => r.startContainer(ids.c),
        (r, ids) => r.stopPodSandbox(ids.sb),
      ],
      [{ state: 'CONTAINER_EXITED', exitCode: 137, reason: 'Error' }],
      ['CONTAINER_CREATED_EVENT', 'CONTAINER_STARTED_EVENT', 'CONTAINER_STOPPED_EVENT'],
    ],
    [
      'stopping a created container leaves it created',
      [(r, ids) => (ids.c = r.createContainer(ids.sb, containerConfig('web'))), (r, ids) => r.stopContainer(ids.c)],
      [{ state: 'CONTAINER_CREATED', exitCode: 0, reason: '' }],
      ['CONTAINER_CREATED_EVENT'],
    ],
    [
      'removing the sandbox removes its containers',
      [
        (r, ids) => (ids.c = r.createContainer(ids.sb, containerConfig('web'))),
        (r, ids) => r.startContainer(ids.c),
        (r, ids) => r.removePodSandbox(ids.sb),
      ],
      [],
      ['CONTAINER_CREATED_EVENT', 'CONTAINER_STARTED_EVENT', 'CONTAINER_STOPPED_EVENT', 'CONTAINER_DELETED_EVENT'],
    ],
  ];
  for (const [name, steps, want, wantEvents] of rows) {
    const r = new InMemoryRuntime({ logFiles: false });
    const events: ContainerEvent[] = [];
    r.subscribe((e) => events.push(e));
    r.pullImage('busybox');
    const ids: Record<string, string> = { sb: r.runPodSandbox(sandboxConfig('p')) };
    for (const step of steps) step(r, ids);
    await tick();
    const got = r.listContainers().map((c) => {
      const s = r.containerStatus(c.id);
      return { state: s.state, exitCode: s.exitCode, reason: s.reason };
    });
    assert.deepEqual(got, want, name);
    assert.deepEqual(
      events.map((e) => e.containerEventType),
      wantEvents,
      `${name}: events`,
    );
    r.close();
  }
});

test('InMemoryRuntime: refusals as containerd words them', () => {
  const r = new InMemoryRuntime({ logFiles: false });
  const sb = r.runPodSandbox(sandboxConfig('p'));
  assert.throws(() => r.runPodSandbox(sandboxConfig('p')), { code: 'ALREADY_EXISTS' });
  assert.throws(() => r.createContainer(sb, containerConfig('c')), { code: 'NOT_FOUND' }, 'an image not pulled');
  r.pullImage('docker.io/library/busybox:latest');
  const c = r.createContainer(sb, containerConfig('c'));
  r.startContainer(c);
  assert.throws(() => r.startContainer(c), { code: 'FAILED_PRECONDITION' });
  r.stopPodSandbox(sb);
  assert.throws(() => r.createContainer(sb, containerConfig('d')), { code: 'FAILED_PRECONDITION' });
  assert.throws(() => r.containerStatus('nope'), { code: 'NOT_FOUND' });
  r.removeContainer('nope');
  r.stopPodSandbox('nope');
  r.close();
});

test('InMemoryRuntime: sandboxes get distinct IPs, host-network ones none; lists filter', () => {
  const r = new InMemoryRuntime({ logFiles: false });
  const a = r.runPodSandbox(sandboxConfig('a'));
  const b = r.runPodSandbox(sandboxConfig('b'));
  const h = r.runPodSandbox({ ...sandboxConfig('h'), linux: { securityContext: { namespaceOptions: { network: 'NODE' } } } });
  const ipA = r.podSandboxStatus(a).network.ip;
  assert.match(ipA, /^10\.200\.\d+\.\d+$/);
  assert.notEqual(ipA, r.podSandboxStatus(b).network.ip);
  assert.equal(r.podSandboxStatus(h).network.ip, '');
  r.stopPodSandbox(b);
  assert.deepEqual(
    r.listPodSandbox({ state: { state: 'SANDBOX_READY' } }).map((s) => s.id),
    [a, h],
  );
  assert.deepEqual(
    r.listPodSandbox({ labelSelector: { pod: 'b' } }).map((s) => s.id),
    [b],
  );
  r.close();
});
