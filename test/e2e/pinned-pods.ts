// A Guaranteed pod with whole CPUs on the stack's node of 2 CPUs, 1 allocatable under
// reservedSystemCPUs "0" (cpu-manager.test.ts, topology-manager.test.ts): the room it needs,
// and its start while the kubelet may still count an earlier test's pod.
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { clients, eventually, nodeName } from './stack.ts';

/** The stack's node Ready (after a kubelet restart with other managers' settings). */
export const nodeReady = async () =>
  (await clients().core.readNode({ name: nodeName() })).status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';

/**
 * Waits until no pod of another namespace requests cpu on the node, or a cpu: 1 pod does not fit
 * the one allocatable CPU (the earlier test files' pods may still be going with their
 * namespaces; pod-level, init and overhead requests count).
 */
export async function waitForCpuRoom(ns: string): Promise<void> {
  const others = async () =>
    (await clients().core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${nodeName()}` })).items
      .filter(
        (p) =>
          p.metadata?.namespace !== ns &&
          (p.spec?.resources?.requests?.cpu ||
            p.spec?.overhead?.cpu ||
            [...(p.spec?.containers ?? []), ...(p.spec?.initContainers ?? [])].some((c) => c.resources?.requests?.cpu)),
      )
      .map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`);
  await eventually('no other pod requesting cpu on the node', 120_000, async () => (await others()).length === 0, 1000).catch(async (e) =>
    assert.fail(`${(e as Error).message}: ${(await others()).join(', ')} leave no room for a cpu: 1 pod`),
  );
}

/**
 * Creates the pod and waits for it Running. The kubelet may still count a pod it is terminating
 * after the API no longer lists it: a pod it refuses as OutOfcpu then is made again (upstream's
 * admission refuses it the same way). fail: a status that fails the test at once.
 */
export async function runPinned(ns: string, body: V1Pod, fail?: (p: V1Pod) => void): Promise<V1Pod> {
  const name = body.metadata!.name!;
  const { core } = clients();
  return eventually(
    `pod ${name} admitted and Running`,
    120_000,
    async () => {
      await core.createNamespacedPod({ namespace: ns, body });
      const p = await eventually(`pod ${name} Running or refused`, 90_000, async () => {
        const q = await core.readNamespacedPod({ name, namespace: ns });
        fail?.(q);
        return (q.status?.phase === 'Running' || q.status?.reason === 'OutOfcpu') && q;
      });
      if (p.status?.phase === 'Running') return p;
      await core.deleteNamespacedPod({ name, namespace: ns, gracePeriodSeconds: 0 });
      await eventually(`the refused ${name} gone`, 30_000, async () =>
        core
          .readNamespacedPod({ name, namespace: ns })
          .then(() => false)
          .catch(() => true),
      );
      return undefined;
    },
    2000,
  );
}
