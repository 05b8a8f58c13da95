// upstream's nodeinfomanager decisions, table by table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node } from 'kubernetes-types/core/v1.js';
import type { CSINode } from 'kubernetes-types/storage/v1.js';
import type { NodeInfo } from './client.ts';
import {
  MIGRATED_PLUGINS_ANNOTATION,
  NODE_ID_ANNOTATION,
  newCSINode,
  nodePatchForDriver,
  nodePatchWithoutDriver,
  ownsCSINode,
  withDriver,
  withMigrationAnnotation,
  withoutDriver,
} from './node-info.ts';

const node = (annotations?: Record<string, string>, labels?: Record<string, string>): Node => ({
  metadata: { name: 'n1', annotations, labels },
});
const MIGRATED =
  'kubernetes.io/aws-ebs,kubernetes.io/azure-disk,kubernetes.io/azure-file,kubernetes.io/cinder,kubernetes.io/gce-pd,kubernetes.io/portworx-volume,kubernetes.io/vsphere-volume';

test('nodePatchForDriver', async (t) => {
  const cases: { name: string; node: Node; nodeId: string; topology?: Record<string, string>; want?: object; throws?: RegExp }[] = [
    {
      name: 'first driver: the annotation and the topology labels',
      node: node(undefined, { 'kubernetes.io/hostname': 'n1' }),
      nodeId: 'id-1',
      topology: { 'topology.hostpath.csi/node': 'n1' },
      want: {
        metadata: {
          annotations: { [NODE_ID_ANNOTATION]: '{"hostpath.csi.k8s.io":"id-1"}' },
          labels: { 'topology.hostpath.csi/node': 'n1' },
        },
      },
    },
    {
      name: 'a second driver joins the map, keys sorted as Go writes them',
      node: node({ [NODE_ID_ANNOTATION]: '{"zeta.csi":"z"}' }),
      nodeId: 'id-1',
      want: { metadata: { annotations: { [NODE_ID_ANNOTATION]: '{"hostpath.csi.k8s.io":"id-1","zeta.csi":"z"}' } } },
    },
    {
      name: 'a new node ID replaces the old one',
      node: node({ [NODE_ID_ANNOTATION]: '{"hostpath.csi.k8s.io":"old"}' }),
      nodeId: 'id-1',
      want: { metadata: { annotations: { [NODE_ID_ANNOTATION]: '{"hostpath.csi.k8s.io":"id-1"}' } } },
    },
    {
      name: 'already recorded, labels already there: no patch',
      node: node({ [NODE_ID_ANNOTATION]: '{"hostpath.csi.k8s.io":"id-1"}' }, { zone: 'a' }),
      nodeId: 'id-1',
      topology: { zone: 'a' },
      want: undefined,
    },
    {
      name: 'only a missing topology label',
      node: node({ [NODE_ID_ANNOTATION]: '{"hostpath.csi.k8s.io":"id-1"}' }, { zone: 'a' }),
      nodeId: 'id-1',
      topology: { zone: 'a', rack: 'r1' },
      want: { metadata: { labels: { rack: 'r1' } } },
    },
    {
      name: 'a topology value that contradicts a label',
      node: node(undefined, { zone: 'a' }),
      nodeId: 'id-1',
      topology: { zone: 'b' },
      throws: /topology value collision/,
    },
    {
      name: 'an unreadable annotation',
      node: node({ [NODE_ID_ANNOTATION]: 'not json' }),
      nodeId: 'id-1',
      throws: /failed to parse node's/,
    },
  ];
  for (const c of cases)
    await t.test(c.name, () => {
      const run = () => nodePatchForDriver(c.node, 'hostpath.csi.k8s.io', { nodeId: c.nodeId, topology: c.topology ?? {} });
      if (c.throws) assert.throws(run, c.throws);
      else assert.deepEqual(run(), c.want);
    });
});

test('nodePatchWithoutDriver', () => {
  const cases: [string, Node, object | undefined][] = [
    [
      'one of two drivers leaves',
      node({ [NODE_ID_ANNOTATION]: '{"a":"1","b":"2"}' }),
      { metadata: { annotations: { [NODE_ID_ANNOTATION]: '{"b":"2"}' } } },
    ],
    [
      'the last driver takes the annotation with it',
      node({ [NODE_ID_ANNOTATION]: '{"a":"1"}' }),
      { metadata: { annotations: { [NODE_ID_ANNOTATION]: null } } },
    ],
    ['a driver not in the map: nothing', node({ [NODE_ID_ANNOTATION]: '{"b":"2"}' }), undefined],
    ['no annotation: nothing', node(), undefined],
  ];
  for (const [name, n, want] of cases) assert.deepEqual(nodePatchWithoutDriver(n, 'a'), want, name);
});

test('newCSINode is owned by the Node and lists the migrated plugins', () => {
  assert.deepEqual(newCSINode('n1', 'uid-1'), {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'CSINode',
    metadata: {
      name: 'n1',
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'uid-1' }],
      annotations: { [MIGRATED_PLUGINS_ANNOTATION]: MIGRATED },
    },
    spec: { drivers: [] },
  });
});

test('ownsCSINode', () => {
  const owned = (refs: { kind: string; name: string; uid: string }[]): CSINode => ({
    metadata: { name: 'n1', ownerReferences: refs.map((r) => ({ apiVersion: 'v1', ...r })) },
    spec: { drivers: [] },
  });
  const cases: [string, CSINode, boolean][] = [
    ['this Node', owned([{ kind: 'Node', name: 'n1', uid: 'uid-1' }]), true],
    ['an earlier Node of the same name', owned([{ kind: 'Node', name: 'n1', uid: 'uid-0' }]), false],
    ['another kind', owned([{ kind: 'Pod', name: 'n1', uid: 'uid-1' }]), false],
    ['no owner', owned([]), false],
  ];
  for (const [name, c, want] of cases) assert.equal(ownsCSINode(c, 'n1', 'uid-1'), want, name);
});

test('withMigrationAnnotation', () => {
  const c = (a?: Record<string, string>): CSINode => ({ metadata: { name: 'n1', annotations: a }, spec: { drivers: [] } });
  assert.equal(withMigrationAnnotation(c({ [MIGRATED_PLUGINS_ANNOTATION]: MIGRATED })), undefined);
  // Same set, another order: upstream compares sets.
  assert.equal(withMigrationAnnotation(c({ [MIGRATED_PLUGINS_ANNOTATION]: MIGRATED.split(',').reverse().join(',') })), undefined);
  assert.deepEqual(withMigrationAnnotation(c({ other: 'x' }))?.metadata?.annotations, {
    other: 'x',
    [MIGRATED_PLUGINS_ANNOTATION]: MIGRATED,
  });
  assert.deepEqual(withMigrationAnnotation(c())?.metadata?.annotations, { [MIGRATED_PLUGINS_ANNOTATION]: MIGRATED });
});

test('withDriver', async (t) => {
  const base = (drivers: CSINode['spec']['drivers']): CSINode => ({
    metadata: { name: 'n1', annotations: { [MIGRATED_PLUGINS_ANNOTATION]: MIGRATED } },
    spec: { drivers },
  });
  const info: NodeInfo = { nodeId: 'id-1', maxVolumesPerNode: 10, topology: { zone: 'a', rack: 'r' } };
  const cases: { name: string; csiNode: CSINode; info?: NodeInfo; want: CSINode['spec']['drivers'] | undefined }[] = [
    {
      name: 'first driver: node ID, sorted topology keys, allocatable count',
      csiNode: base([]),
      want: [{ name: 'd', nodeID: 'id-1', topologyKeys: ['rack', 'zone'], allocatable: { count: 10 } }],
    },
    {
      name: 'already there, keys in another order: no update',
      csiNode: base([{ name: 'd', nodeID: 'id-1', topologyKeys: ['zone', 'rack'], allocatable: { count: 10 } }]),
      want: undefined,
    },
    {
      // The apiserver's encoding of a CSINode without drivers (a nil Go slice, no omitempty).
      name: 'first driver on a CSINode as the apiserver serves it empty (drivers: null)',
      csiNode: base(null as unknown as CSINode['spec']['drivers']),
      want: [{ name: 'd', nodeID: 'id-1', topologyKeys: ['rack', 'zone'], allocatable: { count: 10 } }],
    },
    {
      name: 'a changed node ID replaces the entry, which moves last',
      csiNode: base([
        { name: 'd', nodeID: 'old', topologyKeys: ['rack', 'zone'], allocatable: { count: 10 } },
        { name: 'other', nodeID: 'o' },
      ]),
      want: [
        { name: 'other', nodeID: 'o' },
        { name: 'd', nodeID: 'id-1', topologyKeys: ['rack', 'zone'], allocatable: { count: 10 } },
      ],
    },
    {
      name: 'no limit: no allocatable',
      csiNode: base([{ name: 'd', nodeID: 'id-1', topologyKeys: [], allocatable: { count: 10 } }]),
      info: { nodeId: 'id-1', maxVolumesPerNode: 0, topology: {} },
      want: [{ name: 'd', nodeID: 'id-1', topologyKeys: [] }],
    },
    {
      name: 'no limit and none recorded: no update',
      csiNode: base([{ name: 'd', nodeID: 'id-1', topologyKeys: [] }]),
      info: { nodeId: 'id-1', maxVolumesPerNode: 0, topology: {} },
      want: undefined,
    },
    {
      name: 'a limit beyond int32 is cut to it',
      csiNode: base([]),
      info: { nodeId: 'id-1', maxVolumesPerNode: 2 ** 40, topology: {} },
      want: [{ name: 'd', nodeID: 'id-1', topologyKeys: [], allocatable: { count: 2 ** 31 - 1 } }],
    },
    {
      name: 'a negative limit is left out',
      csiNode: base([]),
      info: { nodeId: 'id-1', maxVolumesPerNode: -1, topology: {} },
      want: [{ name: 'd', nodeID: 'id-1', topologyKeys: [] }],
    },
  ];
  for (const c of cases) await t.test(c.name, () => assert.deepEqual(withDriver(c.csiNode, 'd', c.info ?? info)?.spec.drivers, c.want));

  await t.test('an unchanged entry still brings the annotation when it is missing', () => {
    const c: CSINode = { metadata: { name: 'n1' }, spec: { drivers: [{ name: 'd', nodeID: 'id-1', topologyKeys: [] }] } };
    const got = withDriver(c, 'd', { nodeId: 'id-1', maxVolumesPerNode: 0, topology: {} });
    assert.equal(got?.metadata?.annotations?.[MIGRATED_PLUGINS_ANNOTATION], MIGRATED);
    assert.deepEqual(got?.spec.drivers, [{ name: 'd', nodeID: 'id-1', topologyKeys: [] }]);
  });
});

test('withoutDriver', () => {
  const c: CSINode = {
    metadata: { name: 'n1' },
    spec: {
      drivers: [
        { name: 'a', nodeID: '1' },
        { name: 'b', nodeID: '2' },
      ],
    },
  };
  assert.deepEqual(withoutDriver(c, 'a')?.spec.drivers, [{ name: 'b', nodeID: '2' }]);
  assert.equal(withoutDriver(c, 'zzz'), undefined);
  assert.equal(
    withoutDriver({ metadata: { name: 'n1' }, spec: { drivers: null as unknown as CSINode['spec']['drivers'] } }, 'a'),
    undefined,
  );
});
