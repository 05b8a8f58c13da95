import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import { admitPod } from './admission.ts';

const node: Node = {
  metadata: { name: 'vm', labels: { 'kubernetes.io/os': 'linux', disk: 'ssd', zone: '3' } },
  status: { allocatable: { cpu: '1900m', memory: '1Gi', pods: '3' } },
};
const pod = (spec: Partial<NonNullable<Pod['spec']>> = {}, cpu?: string, memory?: string): Pod => ({
  metadata: { name: 'p' },
  spec: {
    containers: [{ name: 'c', image: 'i', resources: { requests: { ...(cpu ? { cpu } : {}), ...(memory ? { memory } : {}) } } }],
    ...spec,
  },
});
const withStorage = (p: Pod, q: string): Pod => {
  p.spec!.containers[0]!.resources!.requests!['ephemeral-storage'] = q;
  return p;
};
const reason = (a: ReturnType<typeof admitPod>) => (a.admit ? 'admitted' : a.reason);

test('admission: resources, pods, selectors, affinity, host ports, OS', () => {
  const cases: [string, Pod, Pod[], string][] = [
    ['fits', pod({}, '500m', '100Mi'), [pod({}, '1')], 'admitted'],
    ['cpu over allocatable', pod({}, '1'), [pod({}, '1')], 'OutOfcpu'],
    ['memory over allocatable', pod({}, undefined, '2Gi'), [], 'OutOfmemory'],
    // No ephemeral-storage in allocatable (localStorageCapacityIsolation: false): a request for any is refused, as upstream's Fits.
    ['ephemeral-storage on a node without it', withStorage(pod(), '1Mi'), [], 'OutOfephemeral-storage'],
    ['no ephemeral-storage request on a node without it', pod(), [], 'admitted'],
    ['best effort pods still count toward pods', pod(), [pod(), pod(), pod()], 'OutOfpods'],
    ['node selector matches', pod({ nodeSelector: { disk: 'ssd' } }), [], 'admitted'],
    ['node selector mismatch', pod({ nodeSelector: { disk: 'hdd' } }), [], 'NodeAffinity'],
    [
      'required affinity In',
      pod({
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: 'disk', operator: 'In', values: ['nvme'] }] },
                { matchExpressions: [{ key: 'zone', operator: 'Gt', values: ['2'] }] },
              ],
            },
          },
        },
      }),
      [],
      'admitted',
    ],
    [
      'required affinity unmet',
      pod({
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: 'gpu', operator: 'Exists' }] }],
            },
          },
        },
      }),
      [],
      'NodeAffinity',
    ],
    [
      'host port taken',
      pod({ containers: [{ name: 'c', ports: [{ containerPort: 80, hostPort: 8080 }] }] }),
      [pod({ containers: [{ name: 'c', ports: [{ containerPort: 81, hostPort: 8080 }] }] })],
      'NodePorts',
    ],
    [
      'same port, other protocol',
      pod({ containers: [{ name: 'c', ports: [{ containerPort: 80, hostPort: 8080, protocol: 'UDP' }] }] }),
      [pod({ containers: [{ name: 'c', ports: [{ containerPort: 81, hostPort: 8080 }] }] })],
      'admitted',
    ],
    ['windows pod', pod({ os: { name: 'windows' } }), [], 'PodOSNotSupported'],
  ];
  for (const [name, p, active, want] of cases) assert.equal(reason(admitPod(p, active, node)), want, name);
});

test('admission: ephemeral-storage against the allocatable, in bytes', () => {
  const withES: Node = { ...node, status: { allocatable: { ...node.status!.allocatable, 'ephemeral-storage': '10Mi' } } };
  const cases: [string, Node, Pod, Pod[], string][] = [
    ['fits', withES, withStorage(pod(), '4Mi'), [withStorage(pod(), '4Mi')], 'admitted'],
    ['over', withES, withStorage(pod(), '4Mi'), [withStorage(pod(), '8Mi')], 'OutOfephemeral-storage'],
    ['node status not known yet', { metadata: node.metadata }, withStorage(pod(), '4Mi'), [], 'admitted'],
  ];
  for (const [name, n, p, active, want] of cases) assert.equal(reason(admitPod(p, active, n)), want, name);
  assert.deepEqual(admitPod(withStorage(pod(), '1Mi'), [], node), {
    admit: false,
    reason: 'OutOfephemeral-storage',
    message: "Pod was rejected: Node didn't have enough resource: ephemeral-storage, requested: 1048576, used: 0, capacity: 0",
  });
});

test("admission: huge pages and extended resources against the allocatable (Fits' ScalarResources)", () => {
  const withScalar: Node = {
    ...node,
    status: { allocatable: { ...node.status!.allocatable, 'hugepages-2Mi': '8Mi', 'example.com/dongle': '2' } },
  };
  const asks = (r: Record<string, string>): Pod => pod({ containers: [{ name: 'c', image: 'i', resources: { requests: r, limits: r } }] });
  const cases: [string, Pod, Pod[], string][] = [
    ['huge pages that fit', asks({ 'hugepages-2Mi': '4Mi', memory: '1Mi' }), [asks({ 'hugepages-2Mi': '4Mi', memory: '1Mi' })], 'admitted'],
    [
      'huge pages over',
      asks({ 'hugepages-2Mi': '6Mi', memory: '1Mi' }),
      [asks({ 'hugepages-2Mi': '4Mi', memory: '1Mi' })],
      'OutOfhugepages-2Mi',
    ],
    ['a page size the node has none of', asks({ 'hugepages-1Gi': '1Gi', memory: '1Mi' }), [], 'OutOfhugepages-1Gi'],
    ['an extended resource that fits', asks({ 'example.com/dongle': '1' }), [asks({ 'example.com/dongle': '1' })], 'admitted'],
    ['an extended resource over', asks({ 'example.com/dongle': '2' }), [asks({ 'example.com/dongle': '1' })], 'OutOfexample.com/dongle'],
    // removeMissingExtendedResources: a resource the node knows nothing of is the cluster's business.
    ['an extended resource the node does not list', asks({ 'example.com/cluster-wide': '5' }), [], 'admitted'],
    [
      'a DeviceClass extended resource no claim serves',
      asks({ 'deviceclass.resource.kubernetes.io/gpu': '1' }),
      [],
      'OutOfdeviceclass.resource.kubernetes.io/gpu',
    ],
    [
      'a DeviceClass extended resource a claim serves (extendedResourceClaimStatus)',
      {
        ...asks({ 'deviceclass.resource.kubernetes.io/gpu': '1' }),
        status: {
          extendedResourceClaimStatus: {
            resourceClaimName: 'p-extended-resources-x',
            requestMappings: [
              { containerName: 'c', resourceName: 'deviceclass.resource.kubernetes.io/gpu', requestName: 'container-0-request-0' },
            ],
          },
        } as Pod['status'],
      },
      [],
      'admitted',
    ],
  ];
  for (const [name, p, active, want] of cases) assert.equal(reason(admitPod(p, active, withScalar)), want, name);
  assert.deepEqual(admitPod(asks({ 'hugepages-2Mi': '16Mi', memory: '1Mi' }), [], withScalar), {
    admit: false,
    reason: 'OutOfhugepages-2Mi',
    message: "Pod was rejected: Node didn't have enough resource: hugepages-2Mi, requested: 16777216, used: 0, capacity: 8388608",
  });
});

test('the rejection message in upstream form', () => {
  const a = admitPod(pod({}, '1'), [pod({}, '1')], node);
  assert.deepEqual(a, {
    admit: false,
    reason: 'OutOfcpu',
    message: "Pod was rejected: Node didn't have enough resource: cpu, requested: 1000, used: 1000, capacity: 1900",
  });
});

test("predicateAdmitHandler's order: the OS checks first, then every GeneralPredicates failure, resources before the rest", () => {
  const tainted: Node = {
    ...node,
    spec: {
      taints: [
        { key: 'gone', effect: 'NoExecute' },
        { key: 'busy', value: 'yes', effect: 'NoSchedule' },
      ],
    },
  };
  const tolerating = (t: NonNullable<NonNullable<Pod['spec']>['tolerations']>) => pod({ tolerations: t });
  const staticPod: Pod = { ...pod(), metadata: { name: 'p', annotations: { 'kubernetes.io/config.source': 'file' } } };
  const strict = pod({ securityContext: { supplementalGroupsPolicy: 'Strict' } as NonNullable<Pod['spec']>['securityContext'] });
  const withFeatures = { ...node, status: { ...node.status, features: { supplementalGroupsPolicy: true } } } as Node;
  const cases: [string, Pod, Node, string][] = [
    ['a NoExecute taint the pod does not tolerate', pod(), tainted, 'TaintToleration'],
    ['tolerated by key', tolerating([{ key: 'gone', operator: 'Exists' }]), tainted, 'admitted'],
    ['tolerated by every key of that effect', tolerating([{ operator: 'Exists', effect: 'NoExecute' }]), tainted, 'admitted'],
    ['a toleration of another value', tolerating([{ key: 'gone', operator: 'Equal', value: 'x' }]), tainted, 'TaintToleration'],
    ['a static pod ignores taints', staticPod, tainted, 'admitted'],
    ['bound to another node', pod({ nodeName: 'elsewhere' }), node, 'NodeName'],
    ['bound here', pod({ nodeName: 'vm' }), node, 'admitted'],
    ['resources come before node affinity', pod({ nodeSelector: { disk: 'hdd' } }, '4'), node, 'OutOfcpu'],
    ['node affinity before host ports and taints', pod({ nodeSelector: { disk: 'hdd' } }), tainted, 'NodeAffinity'],
    [
      'a kubernetes.io/os label of another OS, before resources',
      { ...pod({}, '4'), metadata: { name: 'p', labels: { 'kubernetes.io/os': 'windows' } } },
      node,
      'PodOSSelectorNodeLabelDoesNotMatch',
    ],
    ['SupplementalGroupsPolicy Strict on a runtime that does not say it can', strict, node, 'SupplementalGroupsPolicyNotSupported'],
    ['SupplementalGroupsPolicy Strict on a runtime that can', strict, withFeatures, 'admitted'],
  ];
  for (const [name, p, n, want] of cases) assert.equal(reason(admitPod(p, [], n)), want, name);
  assert.deepEqual(admitPod(pod(), [], tainted), {
    admit: false,
    reason: 'TaintToleration',
    message: "Pod was rejected: Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate",
  });
  // The Node is read anew (its labels may lag the watch) only when node affinity is the one failure.
  const refetch = (p: Pod, n: Node) => {
    const a = admitPod(p, [], n);
    return !a.admit && !!a.refetchNode;
  };
  assert.equal(refetch(pod({ nodeSelector: { disk: 'hdd' } }), node), true, 'node affinity alone');
  assert.equal(refetch(pod({ nodeSelector: { disk: 'hdd' } }), tainted), false, 'node affinity and a taint');
  assert.equal(refetch(pod({ nodeSelector: { disk: 'hdd' } }, '4'), node), false, 'node affinity and cpu');
  assert.equal(refetch(pod(), tainted), false, 'a taint alone');
});

test('sysctls: the safe ones, allowedUnsafeSysctls, and none of the host namespace a pod shares', () => {
  const withSysctls = (names: string[], spec: Partial<NonNullable<Pod['spec']>> = {}) =>
    pod({ securityContext: { sysctls: names.map((name) => ({ name, value: '1' })) }, ...spec });
  const kernel = (v: string): Node => ({
    ...node,
    status: { ...node.status, nodeInfo: { kernelVersion: v } as NonNullable<Node['status']>['nodeInfo'] },
  });
  const cases: [string, Pod, Node, string[], string][] = [
    ['safe', withSysctls(['net.ipv4.ip_local_port_range', 'kernel.shm_rmid_forced', 'net.ipv4.tcp_keepalive_time']), node, [], 'admitted'],
    ['safe, slash-separated', withSysctls(['net/ipv4/ip_local_port_range']), node, [], 'admitted'],
    ['unsafe', withSysctls(['kernel.msgmax']), node, [], 'SysctlForbidden'],
    ['unsafe but allowed', withSysctls(['kernel.msgmax']), node, ['kernel.msgmax'], 'admitted'],
    ['allowed by prefix', withSysctls(['kernel.msgmax', 'kernel.msgmnb']), node, ['kernel.msg*'], 'admitted'],
    ['allowed, but not namespaced', withSysctls(['vm.swappiness']), node, ['vm.swappiness'], 'SysctlForbidden'],
    ['net sysctl with host network', withSysctls(['net.ipv4.ip_local_port_range'], { hostNetwork: true }), node, [], 'SysctlForbidden'],
    ['ipc sysctl with host IPC', withSysctls(['kernel.shm_rmid_forced'], { hostIPC: true }), node, [], 'SysctlForbidden'],
    ['ipc sysctl with host network', withSysctls(['kernel.shm_rmid_forced'], { hostNetwork: true }), node, [], 'admitted'],
    ['tcp_rmem on a new kernel', withSysctls(['net.ipv4.tcp_rmem']), kernel('6.1.0-18-amd64'), [], 'admitted'],
    ['tcp_rmem on an old kernel', withSysctls(['net.ipv4.tcp_rmem']), kernel('4.9.0'), [], 'SysctlForbidden'],
    ['tcp_rmem, kernel unknown', withSysctls(['net.ipv4.tcp_rmem']), node, [], 'SysctlForbidden'],
  ];
  for (const [name, p, n, allowed, want] of cases) assert.equal(reason(admitPod(p, [], n, { allowedUnsafeSysctls: allowed })), want, name);
  assert.deepEqual(admitPod(withSysctls(['kernel.msgmax']), [], node), {
    admit: false,
    reason: 'SysctlForbidden',
    message: 'Pod was rejected: forbidden sysctl: "kernel.msgmax" not allowlisted',
  });
  assert.deepEqual(admitPod(withSysctls(['net.ipv4.ip_local_port_range'], { hostNetwork: true }), [], node), {
    admit: false,
    reason: 'SysctlForbidden',
    message: 'Pod was rejected: forbidden sysctl: "net.ipv4.ip_local_port_range" not allowed with host net enabled',
  });
});

test("the CPU manager's refusal comes after sysctls and before the predicates, as upstream's handler chain", () => {
  const refuse = () => ({
    admit: false as const,
    reason: 'SMTAlignmentError',
    message: 'Pod was rejected: SMT Alignment Error: requested 3 cpus not multiple cpus per core = 2',
  });
  const asked: string[] = [];
  const cpus = (p: Pod) => {
    asked.push(p.metadata!.name!);
    return refuse();
  };
  assert.equal(reason(admitPod(pod({}, '3'), [], node, { cpus })), 'SMTAlignmentError');
  const badSysctl = pod({ securityContext: { sysctls: [{ name: 'kernel.msgmax', value: '1' }] } });
  assert.equal(reason(admitPod(badSysctl, [], node, { cpus })), 'SysctlForbidden');
  assert.equal(asked.length, 1, 'not asked for a pod the sysctls refused');
  assert.equal(reason(admitPod(pod({}, '3'), [], node, { cpus: () => ({ admit: true }) })), 'OutOfcpu');
});
