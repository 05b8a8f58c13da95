// upstream's newTracerProvider (cmd/kubelet/app/server.go): with `tracing` set, a provider whose
// spans say service.name "kubelet" and the node's host.name, batched to the collector; without
// it, nothing at all.
import type { Logger } from '../log/log.ts';
import { DEFAULT_ENDPOINT, type TracingConfig } from './config.ts';
import { type SpanResult, batchExporter, grpcSend } from './exporter.ts';
import { samplingFraction } from './sampler.ts';
import type { Scope } from './span.ts';
import { NO_TRACER, type Tracer, TracerProvider } from './tracer.ts';

export interface Tracing {
  tracer(scope: Scope): Tracer;
  /** Sends what is queued, then closes the channel. */
  shutdown(): Promise<void>;
}

export const NO_TRACING: Tracing = { tracer: () => NO_TRACER, shutdown: async () => {} };

// The scopes of upstream's tracers: the package each is made in.
export const KUBELET_SCOPE: Scope = { name: 'k8s.io/kubernetes/pkg/kubelet' };
export const IMAGES_SCOPE: Scope = { name: 'k8s.io/kubernetes/pkg/kubelet/images' };
export const KUBERUNTIME_SCOPE: Scope = { name: 'k8s.io/kubernetes/pkg/kubelet/kuberuntime' };
/** otelhttp's (the apiserver client's spans), at the version upstream's client-go wrapper uses. */
export const OTELHTTP_SCOPE: Scope = { name: 'go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp', version: '0.65.0' };
/** otelrestful's (the kubelet API's server spans). */
export const OTELRESTFUL_SCOPE: Scope = {
  name: 'go.opentelemetry.io/contrib/instrumentation/github.com/emicklei/go-restful/otelrestful',
  version: '0.65.0',
};
/** otelgrpc's, at the version upstream's cri-client uses. */
export const OTELGRPC_SCOPE: Scope = {
  name: 'go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc',
  version: '0.65.0',
};

export function newTracing(
  config: TracingConfig | undefined,
  hostName: string,
  o: { log: Logger; count: (result: SpanResult, n: number) => void },
): Tracing {
  if (!config) return NO_TRACING;
  const endpoint = config.endpoint ?? DEFAULT_ENDPOINT;
  const channel = grpcSend(endpoint);
  const exporter = batchExporter({
    resource: { 'service.name': 'kubelet', 'host.name': hostName },
    send: channel.send,
    log: o.log,
    count: o.count,
  });
  const provider = new TracerProvider(samplingFraction(config.samplingRatePerMillion), exporter);
  o.log.info('Tracing to an OTLP collector', { endpoint, samplingRatePerMillion: config.samplingRatePerMillion ?? 0 });
  return {
    tracer: (scope) => provider.tracer(scope),
    async shutdown() {
      await exporter.shutdown();
      channel.close();
    },
  };
}
