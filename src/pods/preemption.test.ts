import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import { podsToPreempt } from './preemption.ts';
import { admitPod } from './admission.ts';

const node: Node = { status: { allocatable: { cpu: '2', memory: '4Gi', pods: '10' } } };
const pod = (name: string, cpu: string | undefined, priority = 0, guaranteed = false): Pod => ({
  metadata: { name, uid: name },
  spec: {
    priority,
    containers: [
      {
        name: 'c',
        ...(cpu
          ? { resources: guaranteed ? { requests: { cpu, memory: '1Gi' }, limits: { cpu, memory: '1Gi' } } : { requests: { cpu } } }
          : {}),
      },
    ],
  },
});
const critical = (cpu: string) => pod('critical', cpu, 2_000_001_000);
const names = (p: Pod[] | undefined) => p?.map((x) => x.metadata!.name);
const refusal = (p: Pod, active: Pod[]) => admitPod(p, active, node);

test('a critical pod that does not fit preempts the fewest lower-priority pods, lowest QoS first', () => {
  const active = [
    pod('guaranteed', '600m', 0, true),
    pod('burstable-big', '800m'),
    pod('burstable-small', '300m'),
    pod('besteffort', undefined),
  ];
  const p = critical('900m');
  assert.equal(refusal(p, active).admit, false);
  // BestEffort frees no cpu, so it is skipped; the larger Burstable pod is enough.
  assert.deepEqual(names(podsToPreempt(p, refusal(p, active), active, node)), ['burstable-big']);
  const big = critical('1500m');
  assert.deepEqual(names(podsToPreempt(big, refusal(big, active), active, node)), ['burstable-big', 'burstable-small', 'guaranteed']);
});

test('no preemption for a pod that is not critical, a refusal for another reason, or when even all candidates cannot make room', () => {
  const active = [pod('a', '1500m')];
  const ordinary = pod('ordinary', '1');
  assert.equal(podsToPreempt(ordinary, refusal(ordinary, active), active, node), undefined);
  assert.equal(podsToPreempt(critical('1'), { admit: false, reason: 'NodeAffinity', message: '' }, active, node), undefined);
  const tooBig = critical('3');
  assert.equal(podsToPreempt(tooBig, refusal(tooBig, active), active, node), undefined);
  const otherCritical = [pod('system', '1500m', 2_000_001_000)];
  const p = critical('1');
  assert.equal(podsToPreempt(p, refusal(p, otherCritical), otherCritical, node), undefined, 'never another critical pod');
});
