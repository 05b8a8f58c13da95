import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RuntimeClient } from '../cri/runtime-client.ts';
import { criGCRuntime } from './cri.ts';
import type { Recorder } from '../events/recorder.ts';

test("an orphan's stop: a Killing event, its preStop hook from its annotations within upstream's 1 s, then StopContainer", async () => {
  const calls: string[] = [];
  const events: string[] = [];
  let exitCode = 0;
  const annotations: Record<string, string> = {
    'io.kubernetes.container.preStopHandler': '{"exec":{"command":["/drain"]}}',
    'io.kubernetes.pod.terminationGracePeriod': '30',
  };
  const cri = {
    containerStatus: async ({ containerId }: { containerId: string }) => ({
      status: {
        labels: {
          'io.kubernetes.pod.name': 'web',
          'io.kubernetes.pod.namespace': 'shop',
          'io.kubernetes.pod.uid': 'u1',
          'io.kubernetes.container.name': 'main',
        },
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
  const recorder = {
    event: (ref: { namespace?: string; name?: string; uid?: string; fieldPath?: string }, type: string, reason: string, message: string) =>
      events.push(`${ref.namespace}/${ref.name} ${ref.uid} [${ref.fieldPath}] ${type} ${reason}: ${message}`),
  } as unknown as Recorder;
  const gc = criGCRuntime(cri, async () => new Map(), '/var/log/pods', recorder);
  assert.equal(await gc.stopContainer('hooked', 2, { podIP: '10.88.0.9' }), undefined);
  await gc.stopContainer('plain', 2, {});
  await gc.stopContainer('known', 2);
  assert.deepEqual(calls, ['exec hooked /drain timeout=1', 'stop hooked 2', 'stop plain 2', 'stop known 2']);
  // The restored pod lists no containers: upstream's GenerateContainerRef names it "implicitly required".
  const killing = 'shop/web u1 [implicitly required container main] Normal Killing: Stopping container main';
  assert.deepEqual(events, [killing, killing], 'one for each orphan, none for a known pod');
  // A hook that fails: the container stops all the same, and the caller gets why (to log it).
  exitCode = 1;
  assert.match(
    (await gc.stopContainer('hooked', 2, {})) ?? '',
    /^Exec lifecycle hook \(\[\/drain\]\) for Container "main" in Pod "web_shop\(u1\)" failed/,
  );
  assert.equal(calls.at(-1), 'stop hooked 2');
  assert.equal(events.at(-1), 'shop/web u1 [implicitly required container main] Warning FailedPreStopHook: PreStopHook failed');
});
