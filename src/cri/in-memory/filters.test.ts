import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type ListFilter, passes } from './filters.ts';

test('passes: CRI list filters', () => {
  const item = { id: 'abc123', state: 'CONTAINER_RUNNING', labels: { app: 'web', tier: 'front' }, podSandboxId: 'sb99' };
  const rows: [string, ListFilter | null, boolean][] = [
    ['no filter', null, true],
    ['empty filter (defaults)', { id: '', state: null, podSandboxId: '', labelSelector: {} }, true],
    ['id prefix', { id: 'abc' }, true],
    ['other id', { id: 'abd' }, false],
    ['state matches', { state: { state: 'CONTAINER_RUNNING' } }, true],
    ['state differs', { state: { state: 'CONTAINER_EXITED' } }, false],
    ['sandbox matches', { podSandboxId: 'sb99' }, true],
    ['sandbox differs', { podSandboxId: 'sb1' }, false],
    ['labels subset', { labelSelector: { app: 'web' } }, true],
    ['label value differs', { labelSelector: { app: 'db' } }, false],
    ['label missing', { labelSelector: { zone: 'a' } }, false],
    ['all at once', { id: 'abc1', state: { state: 'CONTAINER_RUNNING' }, podSandboxId: 'sb', labelSelector: { tier: 'front' } }, true],
  ];
  for (const [name, filter, want] of rows) assert.equal(passes(item, filter), want, name);
});
