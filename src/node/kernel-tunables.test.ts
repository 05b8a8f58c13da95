import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KERNEL_TUNABLES, setupKernelTunables, tunablesPlan } from './kernel-tunables.ts';
import { logger } from '../log/log.ts';

const as = (over: Record<string, number | Error>) => ({ ...KERNEL_TUNABLES, ...over });

// Upstream's setupKernelTunables with KernelTunableModify and KernelTunableError.
const cases: [string, Record<string, number | Error>, boolean, ReturnType<typeof tunablesPlan>][] = [
  ['all as wanted', as({}), false, { set: [], errors: [] }],
  ['all as wanted, protected', as({}), true, { set: [], errors: [] }],
  [
    'two differ: written',
    as({ 'vm/overcommit_memory': 0, 'kernel/panic': 0 }),
    false,
    {
      set: [
        ['vm/overcommit_memory', 1],
        ['kernel/panic', 10],
      ],
      errors: [],
    },
  ],
  [
    'two differ, protected: refused',
    as({ 'vm/overcommit_memory': 0, 'kernel/panic': 0 }),
    true,
    {
      set: [],
      errors: [
        'invalid kernel flag: vm/overcommit_memory, expected value: 1, actual value: 0',
        'invalid kernel flag: kernel/panic, expected value: 10, actual value: 0',
      ],
    },
  ],
  ['unreadable', as({ 'kernel/panic': new Error('ENOENT') }), false, { set: [], errors: ['ENOENT'] }],
];
for (const [name, current, protect, want] of cases)
  test(`tunablesPlan: ${name}`, () => assert.deepEqual(tunablesPlan(current, protect), want));

test('setupKernelTunables writes what differs, and throws with every refusal', () => {
  const host = new Map<string, number>(Object.entries({ ...KERNEL_TUNABLES, 'kernel/panic_on_oops': 0 }));
  const sysctl = { get: (n: string) => host.get(n)!, set: (n: string, v: number) => void host.set(n, v) };
  setupKernelTunables(false, logger('test'), sysctl);
  assert.equal(host.get('kernel/panic_on_oops'), 1);
  host.set('kernel/panic', 0);
  host.set('vm/panic_on_oom', 1);
  assert.throws(
    () => setupKernelTunables(true, logger('test'), sysctl),
    /^Error: Failed to start ContainerManager: \[invalid kernel flag: vm\/panic_on_oom, expected value: 0, actual value: 1, invalid kernel flag: kernel\/panic, expected value: 10, actual value: 0\]$/,
  );
});
