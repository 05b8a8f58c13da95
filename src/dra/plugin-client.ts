// The kubelet's client of one registered plugin of a DRA driver (upstream's DRAPlugin in
// plugin/dra_plugin.go): one gRPC channel to its endpoint, made at registration, connected at
// once and again whenever it drops, so that whether the driver is usable is known before a pod
// needs it (upstream's monitoredPlugin.HandleConn).
import { Client, connectivityState, credentials, Metadata, type ServiceError, status } from '@grpc/grpc-js';
import type { Claim } from './generated/k8s/io/kubelet/pkg/apis/dra/v1/Claim.ts';
import type { NodePrepareResourcesResponse__Output } from './generated/k8s/io/kubelet/pkg/apis/dra/v1/NodePrepareResourcesResponse.ts';
import type { NodeUnprepareResourcesResponse__Output } from './generated/k8s/io/kubelet/pkg/apis/dra/v1/NodeUnprepareResourcesResponse.ts';
import type { NodeWatchResourcesResponse__Output } from './generated/v1alpha1/NodeWatchResourcesResponse.ts';
import { type DraService, draHealthService, draService } from './proto.ts';
import type { ReportedHealth } from './health.ts';
import { backoff, sleep } from '../backoff/backoff.ts';
import type { Logger } from '../log/log.ts';

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

/** upstream's retry period of the health stream (wait.UntilWithContext every 5 s), here growing while a plugin has none. */
const HEALTH_RETRY_MS = [5_000, 60_000] as const;

/** What the plugin's health stream reports to (upstream's HandleWatchResourcesStream). */
export interface HealthHandler {
  /** A NodeWatchResources message: the health of some of the driver's devices. */
  update(driver: string, devices: ReportedHealth[]): void;
  /** The stream ended: what it said is forgotten (upstream's clearDriver). */
  ended(driver: string): void;
  log: Logger;
}

/** One gRPC call to a driver: its full method name, status code and duration (dra_grpc_operations_duration_seconds). */
export type DraCallObserver = (driver: string, method: string, code: number, seconds: number) => void;

/**
 * upstream's DRAPluginManager.add for one plugin: the channel to endpoint (a socket path) for the
 * chosen service, which both versions answer with v1's messages (v1beta1 lacks only shareId).
 * onConnection: each change of connected. With a health handler, the plugin's NodeWatchResources
 * stream is kept open on the same channel while the plugin is registered (feature
 * ResourceHealthStatus); a plugin without that service answers UNIMPLEMENTED, and is asked again
 * less and less often.
 */
export function draPlugin(
  driver: string,
  endpoint: string,
  service: DraService,
  o: { callTimeoutMs: number; onConnection: (connected: boolean) => void; health?: HealthHandler; observe?: DraCallObserver },
): DraPlugin {
  const { callTimeoutMs, onConnection, health } = o;
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
    const t0 = performance.now();
    return new Promise<O>((resolve, reject) =>
      client.makeUnaryRequest(
        m.path,
        m.requestSerialize,
        m.responseDeserialize,
        { claims },
        new Metadata(),
        { deadline: Date.now() + callTimeoutMs },
        (err: ServiceError | null, res?: unknown) => {
          // upstream's newMetricsInterceptor: every unary call by its full method and grpc-go's code name.
          o.observe?.(driver, m.path, err ? err.code : status.OK, (performance.now() - t0) / 1000);
          if (err) reject(err);
          else resolve(res as O);
        },
      ),
    );
  };

  const stopHealth = new AbortController();
  const retry = backoff(...HEALTH_RETRY_MS);
  const watchHealth = () =>
    new Promise<string>((resolve) => {
      const m = draHealthService().NodeWatchResources;
      const call = client.makeServerStreamRequest(m.path, m.requestSerialize, m.responseDeserialize, {}, new Metadata());
      const onAbort = () => call.cancel();
      stopHealth.signal.addEventListener('abort', onAbort, { once: true });
      call.on('data', (r: NodeWatchResourcesResponse__Output) => {
        retry.reset();
        health!.update(driver, r.devices);
      });
      const done = (why: string) => {
        stopHealth.signal.removeEventListener('abort', onAbort);
        resolve(why);
      };
      call.on('error', (e: ServiceError) => done(e.details || e.message));
      call.on('end', () => done('ended'));
    });
  if (health)
    void (async () => {
      while (!stopHealth.signal.aborted) {
        const why = await watchHealth();
        health.ended(driver);
        if (stopHealth.signal.aborted) return;
        const wait = retry.next();
        health.log.v(3, 'WatchResources health stream ended, will retry', { driverName: driver, endpoint, reason: why, retryInMs: wait });
        await sleep(wait, stopHealth.signal);
      }
    })();

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
      stopHealth.abort();
      client.close();
    },
  };
}
