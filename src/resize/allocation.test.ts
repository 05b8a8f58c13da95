import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { AllocationManager } from './allocation.ts';

const pod = (cpu: string, extra = false): Pod => ({
  metadata: { uid: 'u' },
  spec: {
    containers: [{ name: 'c', resources: { requests: { cpu } } }, ...(extra ? [{ name: 'd', resources: { requests: { cpu } } }] : [])],
  },
});

test('AllocationManager: the spec when first seen, then only what is set; checkpointed', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kts-alloc-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'allocated_pods_state');
  const m = new AllocationManager({ file });
  assert.deepEqual(m.get(pod('1')), { containers: { c: { requests: { cpu: '1' } } } });
  assert.deepEqual(m.get(pod('2')), { containers: { c: { requests: { cpu: '1' } } } }, 'a resize is not taken for granted');
  m.set('u', { containers: { c: { requests: { cpu: '2' } } } });
  await m.flushed();
  // A restarted kubelet reads the checkpoint.
  const again = new AllocationManager({ file });
  assert.deepEqual(again.get(pod('3')), { containers: { c: { requests: { cpu: '2' } } } });
  assert.deepEqual(
    again.get(pod('3', true)),
    { containers: { c: { requests: { cpu: '2' } }, d: { requests: { cpu: '3' } } } },
    'a new container gets its spec',
  );
  again.remove('u');
  await again.flushed();
  assert.equal(new AllocationManager({ file }).peek('u'), undefined);
});

test('AllocationManager: pod-level resources are allocated with the containers; a version 1 checkpoint takes them from the spec', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kts-alloc-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'allocated_pods_state');
  const plr = (cpu: string): Pod => ({ ...pod('1'), spec: { ...pod('1').spec!, resources: { requests: { cpu } } } as Pod['spec'] });
  const m = new AllocationManager({ file });
  assert.deepEqual(m.get(plr('2')).pod, { requests: { cpu: '2' } });
  await m.flushed();
  assert.deepEqual(
    new AllocationManager({ file }).get(plr('3')).pod,
    { requests: { cpu: '2' } },
    'checkpointed, a resize not taken for granted',
  );
  writeFileSync(file, JSON.stringify({ pods: { u: { c: { requests: { cpu: '1' } } } } }));
  const old = new AllocationManager({ file });
  assert.deepEqual(old.get(plr('4')), { containers: { c: { requests: { cpu: '1' } } }, pod: { requests: { cpu: '4' } } });
  assert.deepEqual(old.get(plr('5')).pod, { requests: { cpu: '4' } }, 'only once');
});

test('AllocationManager: a corrupt checkpoint is said, and the specs are taken again', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kts-alloc-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'allocated_pods_state');
  writeFileSync(file, '{"version": 2, "pods": {"u": ');
  const said: string[] = [];
  const m = new AllocationManager({ file, onError: (message, e) => said.push(`${message}: ${(e as Error).message}`) });
  assert.match(said[0] ?? '', /^Cannot read the pod resource allocation checkpoint, starting from the pods' specs: .*JSON/);
  assert.deepEqual(m.get(pod('1')), { containers: { c: { requests: { cpu: '1' } } } });
  await m.flushed();
  assert.equal(said.length, 1, 'the checkpoint written again');
  assert.equal(new AllocationManager({ file: join(dir, 'none'), onError: () => said.push('x') }).peek('u'), undefined);
  assert.equal(said.length, 1, 'a missing checkpoint is not an error');
});
