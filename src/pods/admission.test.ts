import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import { admitPod } from './admission.ts';

const node: Node = { metadata: { name: 'vm', labels: { 'kubernetes.io/os': 'linux', disk: 'ssd', zone: '3' } }, status: { allocatable: { cpu: '1900m', memory: '1Gi', pods: '3' } } };
const pod = (spec: Partial<NonNullable<Pod['spec']>> = {}, cpu?: string, memory?: string): Pod => ({
  metadata: { name: 'p' },
  spec: { containers: [{ name: 'c', image: 'i', resources: { requests: { ...(cpu ? { cpu } : {}), ...(memory ? { memory } : {}) } } }], ...spec },
});
const reason = (a: ReturnType<typeof admitPod>) => (a.admit ? 'admitted' : a.reason);

test('admission: resources, pods, selectors, affinity, host ports, OS', () => {
  const cases: [string, Pod, Pod[], string][] = [
    ['fits', pod({}, '500m', '100Mi'), [pod({}, '1')], 'admitted'],
    ['cpu over allocatable', pod({}, '1'), [pod({}, '1')], 'OutOfcpu'],
    ['memory over allocatable', pod({}, undefined, '2Gi'), [], 'OutOfmemory'],
    ['best effort pods still count toward pods', pod(), [pod(), pod(), pod()], 'OutOfpods'],
    ['node selector matches', pod({ nodeSelector: { disk: 'ssd' } }), [], 'admitted'],
    ['node selector mismatch', pod({ nodeSelector: { disk: 'hdd' } }), [], 'NodeAffinity'],
    ['required affinity In', pod({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [
      { matchExpressions: [{ key: 'disk', operator: 'In', values: ['nvme'] }] }, { matchExpressions: [{ key: 'zone', operator: 'Gt', values: ['2'] }] }] } } } }), [], 'admitted'],
    ['required affinity unmet', pod({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [
      { matchExpressions: [{ key: 'gpu', operator: 'Exists' }] }] } } } }), [], 'NodeAffinity'],
    ['host port taken', pod({ containers: [{ name: 'c', ports: [{ containerPort: 80, hostPort: 8080 }] }] }), [pod({ containers: [{ name: 'c', ports: [{ containerPort: 81, hostPort: 8080 }] }] })], 'NodePorts'],
    ['same port, other protocol', pod({ containers: [{ name: 'c', ports: [{ containerPort: 80, hostPort: 8080, protocol: 'UDP' }] }] }), [pod({ containers: [{ name: 'c', ports: [{ containerPort: 81, hostPort: 8080 }] }] })], 'admitted'],
    ['windows pod', pod({ os: { name: 'windows' } }), [], 'PodOSNotSupported'],
  ];
  for (const [name, p, active, want] of cases) assert.equal(reason(admitPod(p, active, node)), want, name);
});

test('the rejection message in upstream form', () => {
  const a = admitPod(pod({}, '1'), [pod({}, '1')], node);
  assert.deepEqual(a, { admit: false, reason: 'OutOfcpu', message: "Pod was rejected: Node didn't have enough resource: cpu, requested: 1000, used: 1000, capacity: 1900" });
});
