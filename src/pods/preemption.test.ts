import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import { podsToPreempt, type Requirement } from './preemption.ts';
import { admitPod } from './admission.ts';

// The pods of upstream's preemption_test.go getTestPods.
const pod = (name: string, requests?: Record<string, string>, opts: { limits?: boolean; priority?: number } = {}): Pod => ({
  metadata: { name, uid: name },
  spec: {
    ...(opts.priority !== undefined ? { priority: opts.priority } : {}),
    containers: [{ name: 'c', resources: requests ? { requests, ...(opts.limits ? { limits: requests } : {}) } : {} }],
  },
});
const SYSTEM_CRITICAL = 2_000_000_000;
const small = { cpu: '100m', memory: '100Mi' },
  high = { cpu: '300m', memory: '300Mi' };
const P = {
  bestEffort: pod('bestEffort'),
  burstable: pod('burstable', small),
  highRequestBurstable: pod('highRequestBurstable', high),
  guaranteed: pod('guaranteed', small, { limits: true }),
  highRequestGuaranteed: pod('highRequestGuaranteed', high, { limits: true }),
  clusterCritical: pod('clusterCritical', small, { priority: SYSTEM_CRITICAL }),
  nodeCritical: pod('nodeCritical', small, { priority: SYSTEM_CRITICAL + 100 }),
};
/** getAdmissionRequirementList(cpu m, memory Mi, pods). */
const reqs = (cpu: number, memory: number, pods: number): Requirement[] => [
  ...(cpu ? [{ resource: 'cpu', quantity: cpu }] : []),
  ...(memory ? [{ resource: 'memory', quantity: memory * 2 ** 20 }] : []),
  ...(pods ? [{ resource: 'pods', quantity: pods }] : []),
];
// As upstream's podListEqual: the set, not the order.
const names = (r: Pod[] | { error: string }) => ('error' in r ? 'error' : r.map((p) => p.metadata!.name!).sort());

test("podsToPreempt: upstream's getPodsToPreempt cases", () => {
  const all = [P.bestEffort, P.burstable, P.highRequestBurstable, P.guaranteed, P.highRequestGuaranteed];
  const cases: [string, Pod, Pod[], Requirement[], string[] | 'error'][] = [
    ['no requirements', P.clusterCritical, [], reqs(0, 0, 0), []],
    ['no pods', P.clusterCritical, [], reqs(0, 0, 1), 'error'],
    ['equal pods and resources requirements', P.clusterCritical, [P.burstable], reqs(100, 100, 1), ['burstable']],
    ['higher requirements than pod requests', P.clusterCritical, [P.burstable], reqs(200, 200, 2), 'error'],
    ['choose between bestEffort and burstable', P.clusterCritical, [P.burstable, P.bestEffort], reqs(0, 0, 1), ['bestEffort']],
    ['choose between burstable and guaranteed', P.clusterCritical, [P.burstable, P.guaranteed], reqs(0, 0, 1), ['burstable']],
    [
      'choose lower request burstable if it meets requirements',
      P.clusterCritical,
      [P.bestEffort, P.highRequestBurstable, P.burstable],
      reqs(100, 100, 0),
      ['burstable'],
    ],
    [
      'choose higher request burstable if lower does not meet requirements',
      P.clusterCritical,
      [P.bestEffort, P.burstable, P.highRequestBurstable],
      reqs(150, 150, 0),
      ['highRequestBurstable'],
    ],
    ['multiple pods required', P.clusterCritical, all, reqs(350, 350, 0), ['burstable', 'highRequestBurstable']],
    [
      "evict guaranteed when we have to, and don't evict the extra burstable",
      P.clusterCritical,
      all,
      reqs(0, 550, 0),
      ['highRequestBurstable', 'highRequestGuaranteed'],
    ],
    ['evict cluster critical pod for node critical pod', P.nodeCritical, [P.clusterCritical], reqs(100, 0, 0), ['clusterCritical']],
    ['can not evict node critical pod for cluster critical pod', P.clusterCritical, [P.nodeCritical], reqs(100, 0, 0), 'error'],
    // Beyond upstream's table: any resource admission refused, here huge pages.
    [
      'huge pages',
      P.clusterCritical,
      [P.burstable, pod('pages', { 'hugepages-2Mi': '4Mi', memory: '8Mi' }, { limits: true })],
      [{ resource: 'hugepages-2Mi', quantity: 2 * 2 ** 20 }],
      ['pages'],
    ],
  ];
  for (const [name, preemptor, active, r, want] of cases)
    assert.deepEqual(names(podsToPreempt(preemptor, active, r)), want === 'error' ? want : [...want].sort(), name);
  assert.deepEqual(podsToPreempt(P.clusterCritical, [], reqs(0, 0, 1)), {
    error: 'no set of running pods found to reclaim resources: [(res: pods, q: 1), ]',
  });
});

const node: Node = { metadata: { name: 'vm' }, status: { allocatable: { cpu: '2', memory: '4Gi', pods: '10' } } };
const critical = (requests: Record<string, string>, name = 'critical') => pod(name, requests, { priority: SYSTEM_CRITICAL + 1000 });

test("admission of a critical pod: preempts for resources alone, refuses for anything else, upstream's error when nothing frees enough", () => {
  const active = [pod('a', { cpu: '1500m' }), pod('b', { cpu: '300m' })];
  const verdict = (p: Pod, act = active, n = node) => {
    const v = admitPod(p, act, n);
    return v.admit ? { preempt: v.preempt?.map((x) => x.metadata!.name), for: v.preemptFor } : { reason: v.reason, message: v.message };
  };
  assert.deepEqual(verdict(critical({ cpu: '1' })), { preempt: ['a'], for: 'cpu' }, 'the nearest pod frees 800m');
  assert.deepEqual(verdict(pod('ordinary', { cpu: '1' })).reason, 'OutOfcpu', 'not critical: refused');
  assert.deepEqual(
    verdict(critical({ cpu: '1' }), [...active, ...Array.from({ length: 8 }, (_, i) => pod(`be${i}`))]),
    { preempt: ['a'], for: 'pods' },
    'pods and cpu short: the Burstable pod that frees the cpu frees a slot too, and no BestEffort one goes',
  );
  assert.deepEqual(verdict(critical({ cpu: '3' })), {
    reason: 'UnexpectedAdmissionError',
    message:
      'Pod was rejected: Unexpected error while attempting to recover from admission failure: preemption: error finding a set of pods to preempt: no set of running pods found to reclaim resources: [(res: cpu, q: 1000), ]',
  });
  const affinity = { ...critical({ cpu: '1' }), spec: { ...critical({ cpu: '1' }).spec!, nodeSelector: { disk: 'ssd' } } };
  assert.equal(verdict(affinity).reason, 'NodeAffinity', 'a failure other than resources refuses a critical pod too');
  const other = [pod('system', { cpu: '1500m' }, { priority: SYSTEM_CRITICAL + 1000 })];
  assert.equal(verdict(critical({ cpu: '1' }), other).reason, 'UnexpectedAdmissionError', 'never a critical pod of equal priority');
});
