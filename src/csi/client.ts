// The kubelet's client of one CSI driver (upstream's csiDriverClient over newGrpcConn): a gRPC
// channel to the driver's unix socket and its Identity and Node calls, each with a deadline, each
// failure a CsiError that keeps the gRPC code, by which isFinalError tells a volume operation that
// surely failed from one that may still be under way.
import { Client, credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import type { MethodDefinition } from '@grpc/proto-loader';
import { toCsiError } from './errors.ts';
import type { GetPluginCapabilitiesResponse__Output } from './generated/csi/v1/GetPluginCapabilitiesResponse.ts';
import type { GetPluginInfoResponse__Output } from './generated/csi/v1/GetPluginInfoResponse.ts';
import type { NodeExpandVolumeRequest } from './generated/csi/v1/NodeExpandVolumeRequest.ts';
import type { NodeExpandVolumeResponse__Output } from './generated/csi/v1/NodeExpandVolumeResponse.ts';
import type { NodeGetVolumeStatsRequest } from './generated/csi/v1/NodeGetVolumeStatsRequest.ts';
import type { NodeGetVolumeStatsResponse__Output } from './generated/csi/v1/NodeGetVolumeStatsResponse.ts';
import type { NodePublishVolumeRequest } from './generated/csi/v1/NodePublishVolumeRequest.ts';
import type { _csi_v1_NodeServiceCapability_RPC_Type__Output } from './generated/csi/v1/NodeServiceCapability.ts';
import type { NodeStageVolumeRequest } from './generated/csi/v1/NodeStageVolumeRequest.ts';
import type { NodeUnpublishVolumeRequest } from './generated/csi/v1/NodeUnpublishVolumeRequest.ts';
import type { NodeUnstageVolumeRequest } from './generated/csi/v1/NodeUnstageVolumeRequest.ts';
import type { ProbeResponse__Output } from './generated/csi/v1/ProbeResponse.ts';
import { csiServices } from './proto.ts';

/** upstream's csiTimeout: the deadline of the volume operations, and of NodeGetInfo at registration. */
export const CSI_TIMEOUT_MS = 120_000;
/** The deadline of the calls a driver answers without touching storage: identity, capabilities, node info. */
const QUERY_TIMEOUT_MS = 15_000;

export type NodeCapability = _csi_v1_NodeServiceCapability_RPC_Type__Output;

/** upstream's NodeGetInfo results. */
export interface NodeInfo {
  nodeId: string;
  /** 0: the driver sets no limit. */
  maxVolumesPerNode: number;
  /** accessible_topology's segments: labels for the Node. */
  topology: Record<string, string>;
}

export interface CsiClient {
  readonly driver: string;
  readonly endpoint: string;
  getPluginInfo(timeoutMs?: number): Promise<GetPluginInfoResponse__Output>;
  getPluginCapabilities(timeoutMs?: number): Promise<GetPluginCapabilitiesResponse__Output>;
  probe(timeoutMs?: number): Promise<ProbeResponse__Output>;
  nodeGetInfo(timeoutMs?: number): Promise<NodeInfo>;
  /** The node service's RPC capabilities (upstream asks them before each operation: nodeSupportsCapability). */
  nodeGetCapabilities(timeoutMs?: number): Promise<Set<NodeCapability>>;
  nodeStageVolume(req: NodeStageVolumeRequest, timeoutMs?: number): Promise<void>;
  nodeUnstageVolume(req: NodeUnstageVolumeRequest, timeoutMs?: number): Promise<void>;
  nodePublishVolume(req: NodePublishVolumeRequest, timeoutMs?: number): Promise<void>;
  nodeUnpublishVolume(req: NodeUnpublishVolumeRequest, timeoutMs?: number): Promise<void>;
  nodeGetVolumeStats(req: NodeGetVolumeStatsRequest, timeoutMs?: number): Promise<NodeGetVolumeStatsResponse__Output>;
  nodeExpandVolume(req: NodeExpandVolumeRequest, timeoutMs?: number): Promise<NodeExpandVolumeResponse__Output>;
  close(): void;
}

/**
 * A client of the driver at endpoint, a unix socket path as the registrar reports it. The channel
 * connects on the first call, and again after the driver restarts: its reconnect backoff is capped
 * at 3 s where grpc-js would wait up to 2 min (upstream dials anew for every call).
 */
export function csiClient(driver: string, endpoint: string): CsiClient {
  const target = endpoint.startsWith('unix:') ? endpoint : `unix://${endpoint}`;
  const client = new Client(target, credentials.createInsecure(), {
    'grpc.default_authority': 'localhost',
    'grpc.initial_reconnect_backoff_ms': 100,
    'grpc.max_reconnect_backoff_ms': 3000,
  });
  const { identity, node } = csiServices();

  const call = <I, O>(method: MethodDefinition<I, never, unknown, O>, req: I, timeoutMs: number): Promise<O> =>
    new Promise((resolve, reject) => {
      client.makeUnaryRequest(
        method.path,
        method.requestSerialize,
        method.responseDeserialize,
        req,
        new Metadata(),
        { deadline: Date.now() + timeoutMs },
        (err: ServiceError | null, res?: O) =>
          err ? reject(toCsiError(driver, method.path.slice(method.path.lastIndexOf('/') + 1), err)) : resolve(res!),
      );
    });

  return {
    driver,
    endpoint,
    getPluginInfo: (t = QUERY_TIMEOUT_MS) => call(identity.GetPluginInfo, {}, t),
    getPluginCapabilities: (t = QUERY_TIMEOUT_MS) => call(identity.GetPluginCapabilities, {}, t),
    probe: (t = QUERY_TIMEOUT_MS) => call(identity.Probe, {}, t),
    async nodeGetInfo(t = QUERY_TIMEOUT_MS) {
      const r = await call(node.NodeGetInfo, {}, t);
      return { nodeId: r.nodeId, maxVolumesPerNode: Number(r.maxVolumesPerNode), topology: r.accessibleTopology?.segments ?? {} };
    },
    async nodeGetCapabilities(t = QUERY_TIMEOUT_MS) {
      const r = await call(node.NodeGetCapabilities, {}, t);
      return new Set(r.capabilities.flatMap((c) => (c.rpc ? [c.rpc.type] : [])));
    },
    nodeStageVolume: async (req, t = CSI_TIMEOUT_MS) => void (await call(node.NodeStageVolume, req, t)),
    nodeUnstageVolume: async (req, t = CSI_TIMEOUT_MS) => void (await call(node.NodeUnstageVolume, req, t)),
    nodePublishVolume: async (req, t = CSI_TIMEOUT_MS) => void (await call(node.NodePublishVolume, req, t)),
    nodeUnpublishVolume: async (req, t = CSI_TIMEOUT_MS) => void (await call(node.NodeUnpublishVolume, req, t)),
    nodeGetVolumeStats: (req, t = CSI_TIMEOUT_MS) => call(node.NodeGetVolumeStats, req, t),
    nodeExpandVolume: (req, t = CSI_TIMEOUT_MS) => call(node.NodeExpandVolume, req, t),
    close: () => client.close(),
  };
}
