// Huge pages as a pod asks for them, what upstream's test/e2e_node/hugepages_test.go checks and a
// user would: with 2 MiB pages reserved on the host, the restarted kubelet offers hugepages-2Mi on
// its Node; a container that asks for some runs with that limit for the 2MB size in its resources,
// the pod's other container with 0 for every size (upstream's GetHugepageLimitsFromResources: a
// container cannot take pages it did not ask for), and a pod asking for more than the node has is
// refused at admission. (This host's hugetlb cgroup controller is not mounted, so containerd does
// not write the limits to a cgroup: the check is the container's CRI config, which it was given.)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { clients, crictl, ensureStack, eventually, nodeName, restartKubelet, runningPod, withNamespace } from './stack.ts';

const NR = '/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages';
const PAGES = 4; // 8 MiB
let saved = '0';

before(() => {
  ensureStack();
  saved = readFileSync(NR, 'utf8').trim();
  writeFileSync(NR, String(PAGES));
  const got = readFileSync(NR, 'utf8').trim();
  assert.equal(got, String(PAGES), `the kernel reserved ${got} of ${PAGES} huge pages (no contiguous memory?)`);
  // The kubelet reads the host's huge pages at start, as upstream's machine info.
  restartKubelet();
});
after(() => {
  writeFileSync(NR, saved);
  restartKubelet();
});

test('the Node offers the reserved pages as hugepages-2Mi', async () => {
  const { core } = clients();
  await eventually('hugepages-2Mi: 8Mi in capacity and allocatable', 60_000, async () => {
    const s = (await core.readNode({ name: nodeName() })).status;
    return s?.capacity?.['hugepages-2Mi'] === '8Mi' && s.allocatable?.['hugepages-2Mi'] === '8Mi';
  });
});

test("a container's huge pages are its limit for that size; its neighbour's are 0; more than the node has is refused", () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    const huge = { 'hugepages-2Mi': '4Mi', memory: '64Mi', cpu: '100m' };
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'huge' },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: 'asks',
              image: 'docker.io/library/busybox:1.36',
              command: ['sleep', '3600'],
              resources: { requests: huge, limits: huge },
            },
            { name: 'none', image: 'docker.io/library/busybox:1.36', command: ['sleep', '3600'] },
          ],
        },
      },
    });
    await runningPod(ns, 'huge', 90_000);
    const limits = (name: string) => {
      const id = crictl('ps', '-q', '--label', `io.kubernetes.pod.namespace=${ns}`, '--name', `^${name}$`).trim();
      const l = JSON.parse(crictl('inspect', id)).info.config.linux.resources.hugepage_limits as { page_size: string; limit?: number }[];
      return Object.fromEntries(l.map((x) => [x.page_size, x.limit ?? 0]));
    };
    assert.equal(limits('asks')['2MB'], 4 * 2 ** 20);
    assert.equal(limits('none')['2MB'], 0);

    const tooMany = { 'hugepages-2Mi': '16Mi', memory: '64Mi' };
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'too-many' },
        spec: {
          nodeName: nodeName(),
          containers: [
            {
              name: 'c',
              image: 'docker.io/library/busybox:1.36',
              command: ['sleep', '3600'],
              resources: { requests: tooMany, limits: tooMany },
            },
          ],
        },
      },
    });
    const refused = await eventually('the pod refused at admission', 60_000, async () => {
      const p = await core.readNamespacedPod({ name: 'too-many', namespace: ns });
      return p.status?.phase === 'Failed' ? p.status : undefined;
    });
    assert.equal(refused.reason, 'OutOfhugepages-2Mi');
  }));
