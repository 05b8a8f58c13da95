// The apiserver side of upstream's nodeinfomanager: reads the Node and the CSINode, applies what
// node-info.ts decides and writes them back. Each step is tried as upstream's updateBackoff does
// (4 times, 10 ms apart growing fivefold), and the operations run one at a time as upstream's lock
// makes them, so that two drivers registering together do not race on the CSINode.
import type { Node } from 'kubernetes-types/core/v1.js';
import type { CSINode } from 'kubernetes-types/storage/v1.js';
import { type ApiClient, isNotFound } from '../apiserver/client.ts';
import { apiPath } from '../apiserver/paths.ts';
import { jittered, sleep } from '../backoff/backoff.ts';
import type { NodeInfo } from './client.ts';
import {
  type NodeMetadataPatch,
  newCSINode,
  nodePatchForDriver,
  nodePatchWithoutDriver,
  ownsCSINode,
  withDriver,
  withMigrationAnnotation,
  withoutDriver,
} from './node-info.ts';

export interface NodeInfoManager {
  /** upstream's InitializeCSINodeWithAnnotation: the node's CSINode exists, owned by this Node, with the migration annotation. */
  initialize(): Promise<void>;
  /** upstream's InstallCSIDriver: the driver's node ID and topology on the Node, its entry on the CSINode. */
  installDriver(driver: string, info: NodeInfo): Promise<void>;
  /**
   * upstream's UpdateCSIDriver: the driver's CSINode entry as NodeGetInfo now says (the periodic
   * allocatable refresh, node-updater.ts); the Node is left alone.
   */
  updateDriver(driver: string, info: NodeInfo): Promise<void>;
  /** upstream's UninstallCSIDriver: its CSINode entry and node ID go; its topology labels stay. */
  uninstallDriver(driver: string): Promise<void>;
}

const TRIES = 4;

export function nodeInfoManager(
  api: Pick<ApiClient, 'get' | 'create' | 'replace' | 'patch' | 'delete'>,
  nodeName: string,
): NodeInfoManager {
  const nodePath = apiPath({ resource: 'nodes', name: nodeName });
  const csiNodes = apiPath({ group: 'storage.k8s.io', resource: 'csinodes' });
  const csiNodePath = apiPath({ group: 'storage.k8s.io', resource: 'csinodes', name: nodeName });
  let nodeUID = '';
  let last: Promise<unknown> = Promise.resolve();
  const oneAtATime = (op: () => Promise<void>): Promise<void> => {
    const run = last.then(op, op);
    last = run.catch(() => {});
    return run;
  };

  async function retried(what: string, attempt: () => Promise<void>): Promise<void> {
    const errors: string[] = [];
    for (let i = 0; i < TRIES; i++) {
      if (i > 0) await sleep(jittered(10 * 5 ** (i - 1), 0.1));
      try {
        return await attempt();
      } catch (e) {
        errors.push((e as Error).message);
      }
    }
    throw new Error(`error updating ${what}: ${errors.join('; ')}`);
  }

  const getNode = async () => {
    const node = await api.get<Node>(nodePath);
    nodeUID = node.metadata?.uid ?? '';
    return node;
  };
  const getCSINode = () => api.get<CSINode>(csiNodePath).catch((e) => (isNotFound(e) ? undefined : Promise.reject(e)));

  // upstream's tryUpdateNode: the metadata is patched through nodes/NAME/status, as PatchNodeStatus does.
  const updateNode = (patchOf: (node: Node) => NodeMetadataPatch | undefined) =>
    retried('Node', async () => {
      const patch = patchOf(await getNode());
      if (patch) await api.patch(`${nodePath}/status`, patch, 'strategic');
    });

  /** The node's CSINode, created when missing; one left by an earlier Node of this name is deleted (upstream's ensureNodeOwnsCSINode). */
  async function ownCSINode(): Promise<CSINode> {
    const found = await getCSINode();
    if (!found) return api.create<CSINode>(csiNodes, newCSINode(nodeName, nodeUID));
    if (!ownsCSINode(found, nodeName, nodeUID)) {
      await api.delete(csiNodePath);
      throw new Error(`CSINode "${nodeName}" was owned by a different node (new node UID ${nodeUID}), deleted it`);
    }
    return found;
  }

  return {
    initialize: () =>
      oneAtATime(() =>
        retried('CSINode annotation', async () => {
          await getNode();
          const updated = withMigrationAnnotation(await ownCSINode());
          if (updated) await api.replace(csiNodePath, updated);
        }),
      ),
    installDriver: (driver, info) =>
      oneAtATime(async () => {
        if (!info.nodeId) throw new Error('error adding CSI driver node info: driverNodeID must not be empty');
        await updateNode((node) => nodePatchForDriver(node, driver, info));
        await retried('CSINode', async () => {
          const updated = withDriver(await ownCSINode(), driver, info);
          if (updated) await api.replace(csiNodePath, updated);
        });
      }),
    updateDriver: (driver, info) =>
      oneAtATime(() =>
        retried('CSINode', async () => {
          // The Node's UID first: ownCSINode checks the CSINode's owner against it.
          await getNode();
          const updated = withDriver(await ownCSINode(), driver, info);
          if (updated) await api.replace(csiNodePath, updated);
        }),
      ),
    uninstallDriver: (driver) =>
      oneAtATime(async () => {
        await retried('CSINode', async () => {
          const found = await getCSINode();
          const updated = found && withoutDriver(found, driver);
          if (updated) await api.replace(csiNodePath, updated);
        });
        await updateNode((node) => nodePatchWithoutDriver(node, driver));
      }),
  };
}
