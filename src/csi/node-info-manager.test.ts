// The node info manager against an in-memory apiserver that keeps a Node and a CSINode.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node } from 'kubernetes-types/core/v1.js';
import type { CSINode } from 'kubernetes-types/storage/v1.js';
import { ApiError, type ApiClient, type PatchType } from '../apiserver/client.ts';
import { MIGRATED_PLUGINS_ANNOTATION, NODE_ID_ANNOTATION } from './node-info.ts';
import { nodeInfoManager } from './node-info-manager.ts';

const NODE = '/api/v1/nodes/n1';
const CSINODE = '/apis/storage.k8s.io/v1/csinodes/n1';

function fakeApiserver(objects: Record<string, object>) {
  const calls: string[] = [];
  const stored = (path: string) => {
    const o = objects[path];
    if (!o) throw new ApiError(404, 'NotFound', `GET ${path}: 404`);
    return structuredClone(o);
  };
  const api: Pick<ApiClient, 'get' | 'create' | 'replace' | 'patch' | 'delete'> = {
    get: async <T>(path: string) => stored(path) as T,
    create: async <T>(path: string, body: unknown) => {
      const name = (body as CSINode).metadata!.name!;
      calls.push(`create ${path}/${name}`);
      objects[`${path}/${name}`] = structuredClone(body as object);
      return structuredClone(body) as T;
    },
    replace: async <T>(path: string, body: unknown) => {
      calls.push(`replace ${path}`);
      objects[path] = structuredClone(body as object);
      return body as T;
    },
    patch: async <T>(path: string, body: unknown, type: PatchType) => {
      calls.push(`patch ${path} ${type}`);
      const target = path.replace(/\/status$/, '');
      const node = stored(target) as Node;
      const meta = (body as { metadata: Record<'annotations' | 'labels', Record<string, string | null>> }).metadata;
      for (const field of ['annotations', 'labels'] as const)
        for (const [k, v] of Object.entries(meta[field] ?? {})) {
          const m = (node.metadata![field] ??= {});
          if (v === null) delete m[k];
          else m[k] = v;
        }
      objects[target] = node;
      return node as T;
    },
    delete: async <T>(path: string) => {
      calls.push(`delete ${path}`);
      delete objects[path];
      return undefined as T;
    },
  };
  return { api, calls, objects };
}

const node = (): Node => ({ metadata: { name: 'n1', uid: 'uid-1', labels: { 'kubernetes.io/hostname': 'n1' } } });

test('initialize creates the CSINode, owned by the Node, with no drivers', async () => {
  const f = fakeApiserver({ [NODE]: node() });
  await nodeInfoManager(f.api, 'n1').initialize();
  const c = f.objects[CSINODE] as CSINode;
  assert.deepEqual(c.metadata?.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'uid-1' }]);
  assert.ok(c.metadata?.annotations?.[MIGRATED_PLUGINS_ANNOTATION]);
  assert.deepEqual(c.spec.drivers, []);
  // Initialized again (a restart): nothing to write.
  f.calls.length = 0;
  await nodeInfoManager(f.api, 'n1').initialize();
  assert.deepEqual(f.calls, []);
});

test('a CSINode left by an earlier Node of the same name is replaced', async () => {
  const f = fakeApiserver({
    [NODE]: node(),
    [CSINODE]: {
      metadata: { name: 'n1', ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'uid-0' }] },
      spec: { drivers: [{ name: 'stale', nodeID: 'x' }] },
    },
  });
  await nodeInfoManager(f.api, 'n1').initialize();
  assert.deepEqual(f.calls, [`delete ${CSINODE}`, 'create /apis/storage.k8s.io/v1/csinodes/n1']);
  assert.equal((f.objects[CSINODE] as CSINode).metadata?.ownerReferences?.[0]?.uid, 'uid-1');
  assert.deepEqual((f.objects[CSINODE] as CSINode).spec.drivers, []);
});

test('install then uninstall a driver', async () => {
  const f = fakeApiserver({ [NODE]: node() });
  const m = nodeInfoManager(f.api, 'n1');
  await m.initialize();
  await m.installDriver('hostpath.csi.k8s.io', { nodeId: 'n1', maxVolumesPerNode: 5, topology: { 'topology.hostpath.csi/node': 'n1' } });
  let n = f.objects[NODE] as Node;
  assert.equal(n.metadata?.annotations?.[NODE_ID_ANNOTATION], '{"hostpath.csi.k8s.io":"n1"}');
  assert.equal(n.metadata?.labels?.['topology.hostpath.csi/node'], 'n1');
  assert.deepEqual((f.objects[CSINODE] as CSINode).spec.drivers, [
    { name: 'hostpath.csi.k8s.io', nodeID: 'n1', topologyKeys: ['topology.hostpath.csi/node'], allocatable: { count: 5 } },
  ]);
  assert.ok(f.calls.includes(`patch ${NODE}/status strategic`));

  await m.uninstallDriver('hostpath.csi.k8s.io');
  n = f.objects[NODE] as Node;
  assert.equal(n.metadata?.annotations?.[NODE_ID_ANNOTATION], undefined);
  assert.equal(n.metadata?.labels?.['topology.hostpath.csi/node'], 'n1', 'topology labels stay, as upstream');
  assert.deepEqual((f.objects[CSINODE] as CSINode).spec.drivers, []);
});

test('install creates the CSINode when there is none yet', async () => {
  const f = fakeApiserver({ [NODE]: node() });
  await nodeInfoManager(f.api, 'n1').installDriver('d', { nodeId: 'id', maxVolumesPerNode: 0, topology: {} });
  assert.deepEqual((f.objects[CSINODE] as CSINode).spec.drivers, [{ name: 'd', nodeID: 'id', topologyKeys: [] }]);
});

test('install refuses an empty node ID, and gives up on a topology collision after its tries', async () => {
  const f = fakeApiserver({ [NODE]: { metadata: { name: 'n1', uid: 'uid-1', labels: { zone: 'a' } } } });
  const m = nodeInfoManager(f.api, 'n1');
  await assert.rejects(m.installDriver('d', { nodeId: '', maxVolumesPerNode: 0, topology: {} }), /driverNodeID must not be empty/);
  await assert.rejects(
    m.installDriver('d', { nodeId: 'id', maxVolumesPerNode: 0, topology: { zone: 'b' } }),
    /error updating Node: .*collision/,
  );
  assert.equal(f.objects[CSINODE], undefined, 'the CSINode is not touched when the Node update fails');
});

test('updateDriver: the CSINode entry follows NodeGetInfo (allocatable.count); the Node is left alone', async () => {
  const f = fakeApiserver({ [NODE]: node() });
  const m = nodeInfoManager(f.api, 'n1');
  await m.installDriver('d', { nodeId: 'id', maxVolumesPerNode: 5, topology: {} });
  f.calls.length = 0;
  await m.updateDriver('d', { nodeId: 'id', maxVolumesPerNode: 3, topology: {} });
  assert.deepEqual(f.calls, [`replace ${CSINODE}`]);
  assert.deepEqual((f.objects[CSINODE] as CSINode).spec.drivers, [
    { name: 'd', nodeID: 'id', topologyKeys: [], allocatable: { count: 3 } },
  ]);
  await m.updateDriver('d', { nodeId: 'id', maxVolumesPerNode: 3, topology: {} });
  assert.deepEqual(f.calls, [`replace ${CSINODE}`], 'unchanged: not written');
});
