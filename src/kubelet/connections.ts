// The kubelet's connections: the apiserver (a rate-limited client, and the heartbeats' own),
// the container runtime's two CRI services, and the event recorder. The start fails with one
// clear line when the runtime does not answer, rather than running against none.
import { existsSync } from 'node:fs';
import { status } from '@grpc/grpc-js';
import { apiClient, type ApiClient, type ContentType } from '../apiserver/client.ts';
import { sleep } from '../backoff/backoff.ts';
import { CriError } from '../cri/error.ts';
import { cgroupDriverInEffect, type CgroupDriver, driverUnusable, type RuntimeConfigAnswer } from '../resources/cgroup-driver.ts';
import { loadKubeconfig } from '../apiserver/kubeconfig.ts';
import { CA_REFRESH_MS } from '../apiserver/ca-reload.ts';
import { featureEnabled } from '../features/gates.ts';
import { rateLimited } from '../apiserver/rate-limited.ts';
import { TokenBucket } from '../backoff/token-bucket.ts';
import { ImageClient } from '../cri/image-client.ts';
import { RuntimeClient } from '../cri/runtime-client.ts';
import { eventRecorder, type Recorder } from '../events/recorder.ts';
import type { Logger } from '../log/log.ts';
import { logger } from '../log/log.ts';
import { metrics, observeRuntimeOperation } from '../metrics/metrics.ts';
import { caReloadMetrics, execPluginMetrics, rateLimiterMetrics, restClientMetrics, restClientTimer } from './observers.ts';
import { RuntimeView } from '../runtime/cri-runtime.ts';
import { RuntimeState } from '../runtime/runtime-state.ts';
import { KUBELET_VERSION, type KubeletOptions } from './options.ts';
import { newTracing, OTELGRPC_SCOPE, OTELHTTP_SCOPE, type Tracing } from '../tracing/tracing.ts';

export interface Connections {
  /** The cgroup driver in effect: the runtime's when it says (cgroupfs: kubelet-ts refuses to start on systemd so far). */
  cgroupDriver: CgroupDriver;
  /** The node status and the Lease: around kubeAPIQPS, as upstream's heartbeat client. */
  heartbeats: ApiClient;
  /** Everything else: within kubeAPIQPS/kubeAPIBurst. */
  api: ApiClient;
  cri: RuntimeClient;
  images: ImageClient;
  /** The runtime's pods as the PLEG, GC and the kubelet API read them. */
  view: RuntimeView;
  /** The runtime handlers as CRI Status lists them: the runtime probe keeps them, recursive read-only mounts read them. */
  runtimeState: RuntimeState;
  /** Events within eventRecordQPS/eventBurst. */
  events: Recorder & { stop(): void };
  /** KubeletConfiguration `tracing`: the tracers of each scope (src/tracing); none without it. */
  tracing: Tracing;
  stop(): Promise<void>;
}

export async function connect(o: KubeletOptions, log: Logger): Promise<Connections> {
  const { config, nodeName } = o;
  const tracing = newTracing(config.tracing, nodeName, {
    log: logger('tracing'),
    count: (result, n) => metrics.traceSpans.inc({ result }, n),
  });
  const kubeconfig = loadKubeconfig(o.kubeconfig);
  const apiserverThrottled = rateLimiterMetrics(new URL(kubeconfig.server).host);
  const heartbeats = apiClient(kubeconfig, {
    tracer: tracing.tracer(OTELHTTP_SCOPE),
    userAgent: `kubelet-ts/${KUBELET_VERSION} (linux) ${nodeName}`,
    observe: restClientMetrics,
    time: restClientTimer,
    execObserver: execPluginMetrics,
    // Checked by the config row: one of the two.
    contentType: config.contentType as ContentType,
    watchList: featureEnabled(config.featureGates, 'WatchListClient'),
    ...(featureEnabled(config.featureGates, 'ClientsAllowCARotation')
      ? { caRotation: { everyMs: CA_REFRESH_MS, observe: caReloadMetrics, log: logger('rest_client') } }
      : {}),
  });
  const runtime = {
    observer: observeRuntimeOperation,
    requestTimeoutMs: config.runtimeRequestTimeoutMs,
    tracer: tracing.tracer(OTELGRPC_SCOPE),
  };
  const cri = new RuntimeClient(o.runtimeEndpoint, runtime);
  const images = new ImageClient(config.imageServiceEndpoint || o.runtimeEndpoint, runtime);
  const version = await cri.version({});
  log.info('Container runtime initialized', {
    runtime: version.runtimeName,
    version: version.runtimeVersion,
    apiVersion: version.runtimeApiVersion,
  });
  const cgroupDriver = await cgroupDriverOf(config.cgroupDriver, cri, log);
  const events = eventRecorder(heartbeats, {
    host: nodeName,
    log: logger('events'),
    onDrop: () => metrics.eventsDropped.inc(),
    qps: config.eventRecordQPS,
    burst: config.eventBurst,
    throttled: apiserverThrottled,
  });
  return {
    cgroupDriver,
    heartbeats,
    // The heartbeat client has no limit (upstream's QPS -1), so no wait of its own to observe.
    api: rateLimited(heartbeats, new TokenBucket(config.kubeAPIQPS, config.kubeAPIBurst), apiserverThrottled),
    cri,
    images,
    view: new RuntimeView(cri),
    runtimeState: new RuntimeState(() => cri.status({})),
    events,
    tracing,
    async stop() {
      events.stop();
      cri.close();
      images.close();
      await tracing.shutdown();
    },
  };
}

/**
 * upstream's getCgroupDriverFromCRI: up to three tries 2 s apart, since the runtime may still be
 * starting; UNIMPLEMENTED (containerd 1.6) at once. The systemd driver without systemd stops the start.
 */
async function cgroupDriverOf(configured: CgroupDriver, cri: RuntimeClient, log: Logger): Promise<CgroupDriver> {
  let answer: RuntimeConfigAnswer = { error: 'not asked' };
  for (let i = 0; i < 3; i++) {
    try {
      const r = await cri.runtimeConfig({});
      answer = { linux: r.linux ? { cgroupDriver: String(r.linux.cgroupDriver) } : undefined };
      break;
    } catch (e) {
      answer = e instanceof CriError && e.code === status.UNIMPLEMENTED ? { unimplemented: true } : { error: e };
      if ('unimplemented' in answer) break;
      if (i < 2) await sleep(2000);
    }
  }
  const choice = cgroupDriverInEffect(configured, answer);
  if ('error' in choice) throw new Error(choice.error);
  if (choice.criLosingSupport) metrics.criLosingSupport.set({ version: choice.criLosingSupport }, 1);
  if (choice.log) log.info(choice.log, { cgroupDriver: choice.driver });
  const unusable = driverUnusable(choice.driver, existsSync('/run/systemd/system'));
  if (unusable) throw new Error(unusable);
  return choice.driver;
}
