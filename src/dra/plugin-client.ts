// The kubelet's client of one registered plugin of a DRA driver (upstream's DRAPlugin in
// plugin/dra_plugin.go): one gRPC channel to its endpoint, made at registration, connected at
// once and again whenever it drops, so that whether the driver is usable is known before a pod
// needs it (upstream's monitoredPlugin.HandleConn).
import { Client, connectivityState, credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import type { Claim } from './generated/k8s/io/kubelet/pkg/apis/dra/v1/Claim.ts';
import type { NodePrepareResourcesResponse__Output } from './generated/k8s/io/kubelet/pkg/apis/dra/v1/NodePrepareResourcesResponse.ts';
import type { NodeUnprepareResourcesResponse__Output } from './generated/k8s/io/kubelet/pkg/apis/dra/v1/NodeUnprepareResourcesResponse.ts';
import { type DraService, draService } from './proto.ts';

/** upstream's defaultClientCallTimeout: half the kubelet's retry period. */
export const DEFAULT_CALL_TIMEOUT_MS = 45_000;

export interface DraPlugin {
  readonly driver: string;
  readonly endpoint: string;
  readonly service: DraService;
  /** The channel is up (upstream's monitoredPlugin.connected). */
  readonly connected: boolean;
  nodePrepareResources(claims: Claim[]): Promise<NodePrepareResourcesResponse__Output>;
  nodeUnprepareResources(claims: Claim[]): Promise<NodeUnprepareResourcesResponse__Output>;
  close(): void;
}

/**
 * upstream's DRAPluginManager.add for one plugin: the channel to endpoint (a socket path) for the
 * chosen service, which both versions answer with v1's messages (v1beta1 lacks only shareId).
 * onConnection: each change of connected.
 */
export function draPlugin(
  driver: string,
  endpoint: string,
  service: DraService,
  callTimeoutMs: number,
  onConnection: (connected: boolean) => void,
): DraPlugin {
  // A restarted driver is found within 3 s, not grpc-js's 2 min backoff: its ResourceSlices wait on it.
  const client = new Client(`unix:${endpoint}`, credentials.createInsecure(), {
    'grpc.default_authority': 'localhost',
    'grpc.initial_reconnect_backoff_ms': 100,
    'grpc.max_reconnect_backoff_ms': 3000,
  });
  const channel = client.getChannel();
  const methods = draService(service);
  let connected = false;
  let closed = false;

  // Asking the state with tryToConnect leaves IDLE at once, as upstream's conn.Connect() on ConnEnd.
  const watch = () => {
    if (closed) return;
    const state = channel.getConnectivityState(true);
    const now = state === connectivityState.READY;
    if (now !== connected) {
      connected = now;
      onConnection(now);
    }
    channel.watchConnectivityState(state, Infinity, watch);
  };
  watch();

  const call = <O>(method: 'NodePrepareResources' | 'NodeUnprepareResources', claims: Claim[]) => {
    const m = methods[method];
    return new Promise<O>((resolve, reject) =>
      client.makeUnaryRequest(
        m.path,
        m.requestSerialize,
        m.responseDeserialize,
        { claims },
        new Metadata(),
        { deadline: Date.now() + callTimeoutMs },
        (err: ServiceError | null, res?: unknown) => (err ? reject(err) : resolve(res as O)),
      ),
    );
  };

  return {
    driver,
    endpoint,
    service,
    get connected() {
      return connected;
    },
    nodePrepareResources: (claims) => call('NodePrepareResources', claims),
    nodeUnprepareResources: (claims) => call('NodeUnprepareResources', claims),
    close() {
      closed = true;
      client.close();
    },
  };
}
