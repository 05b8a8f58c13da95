// A fake CSI driver for the tests (testing.ts: the build leaves it out, the unit test glob does not
// run it): Identity and Node served by grpc-js on a unix socket, recording every request,
// answering as told.
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { csiServices } from './proto.ts';

/**
 * The node capabilities csi-driver-host-path v1.18.0 answers with its deploy manifests
 * (pkg/hostpath/nodeserver.go: volume expansion on, node expansion not disabled); pass as
 * answers.NodeGetCapabilities to play the real driver.
 */
export const HOSTPATH_NODE_CAPABILITIES = {
  capabilities: ['STAGE_UNSTAGE_VOLUME', 'VOLUME_CONDITION', 'GET_VOLUME_STATS', 'SINGLE_NODE_MULTI_WRITER', 'EXPAND_VOLUME'].map(
    (type) => ({
      rpc: { type },
    }),
  ),
};

type Unary = (call: { request: unknown }, cb: (e: { code: number; details: string } | null, r?: object) => void) => void;

/** A CSI driver that records each request and answers as told (an error, or nothing at all). */
export async function fakeDriver(socket: string, answers: Record<string, object | { code: number; details: string } | 'hang'> = {}) {
  const calls: { method: string; request: unknown }[] = [];
  const answer =
    (method: string, ok: object): Unary =>
    (call, cb) => {
      calls.push({ method, request: call.request });
      const a = answers[method] ?? ok;
      if (a === 'hang') return;
      if ('code' in a && 'details' in a) cb(a as { code: number; details: string });
      else cb(null, a);
    };
  const server = new Server();
  const { identity, node } = csiServices();
  server.addService(identity, {
    GetPluginInfo: answer('GetPluginInfo', { name: 'hostpath.csi.k8s.io', vendorVersion: 'v1.17.0' }),
    GetPluginCapabilities: answer('GetPluginCapabilities', { capabilities: [{ service: { type: 'CONTROLLER_SERVICE' } }] }),
    Probe: answer('Probe', { ready: { value: true } }),
  });
  server.addService(node, {
    NodeGetInfo: answer('NodeGetInfo', {
      nodeId: 'kts-w1',
      maxVolumesPerNode: 100,
      accessibleTopology: { segments: { 'topology.hostpath.csi/node': 'kts-w1' } },
    }),
    NodeGetCapabilities: answer('NodeGetCapabilities', {
      capabilities: [{ rpc: { type: 'STAGE_UNSTAGE_VOLUME' } }, { rpc: { type: 'VOLUME_MOUNT_GROUP' } }],
    }),
    NodeStageVolume: answer('NodeStageVolume', {}),
    NodeUnstageVolume: answer('NodeUnstageVolume', {}),
    NodePublishVolume: answer('NodePublishVolume', {}),
    NodeUnpublishVolume: answer('NodeUnpublishVolume', {}),
    NodeGetVolumeStats: answer('NodeGetVolumeStats', { usage: [{ unit: 'BYTES', total: 1024, used: 24, available: 1000 }] }),
    NodeExpandVolume: answer('NodeExpandVolume', { capacityBytes: 2048 }),
  });
  await new Promise<void>((res, rej) =>
    server.bindAsync(`unix://${socket}`, ServerCredentials.createInsecure(), (e) => (e ? rej(e) : res())),
  );
  return { calls, stop: () => server.forceShutdown() };
}
