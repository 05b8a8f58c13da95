import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RuntimeClient } from '../cri/runtime-client.ts';
import { criGCRuntime } from './cri.ts';

test("an orphan's stop runs its preStop hook from its annotations first, within upstream's 1 s, then StopContainer", async () => {
  const calls: string[] = [];
  let exitCode = 0;
  const annotations: Record<string, string> = {
    'io.kubernetes.container.preStopHandler': '{"exec":{"command":["/drain"]}}',
    'io.kubernetes.pod.terminationGracePeriod': '30',
  };
  const cri = {
    containerStatus: async ({ containerId }: { containerId: string }) => ({
      status: {
        labels: { 'io.kubernetes.pod.name': 'web', 'io.kubernetes.pod.namespace': 'shop', 'io.kubernetes.container.name': 'main' },
        annotations: containerId === 'hooked' ? annotations : {},
      },
    }),
    execSync: async (r: { containerId: string; cmd: string[]; timeout: number }) => {
      calls.push(`exec ${r.containerId} ${r.cmd.join(' ')} timeout=${r.timeout}`);
      return { exitCode, stdout: Buffer.alloc(0), stderr: Buffer.alloc(0) };
    },
    stopContainer: async (r: { containerId: string; timeout: number }) => {
      calls.push(`stop ${r.containerId} ${r.timeout}`);
      return {};
    },
  } as unknown as RuntimeClient;
  const gc = criGCRuntime(cri, async () => new Map(), '/var/log/pods');
  assert.equal(await gc.stopContainer('hooked', 2, { podIP: '10.88.0.9' }), undefined);
  await gc.stopContainer('plain', 2, {});
  await gc.stopContainer('known', 2);
  assert.deepEqual(calls, ['exec hooked /drain timeout=1', 'stop hooked 2', 'stop plain 2', 'stop known 2']);
  // A hook that fails: the container stops all the same, and the caller gets why (to log it).
  exitCode = 1;
  assert.match(
    (await gc.stopContainer('hooked', 2, {})) ?? '',
    /^Exec lifecycle hook \(\["\/drain"\]\) for Container "main" in Pod "shop\/web" failed/,
  );
  assert.equal(calls.at(-1), 'stop hooked 2');
});
