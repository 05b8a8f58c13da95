// KubeletConfiguration's `tracing` (component-base's TracingConfiguration): absent, no tracing;
// present, spans go to `endpoint` (otlptracegrpc's default localhost:4317), roots sampled at
// samplingRatePerMillion (none or 0: never, but a sampled parent's children still are).

export interface TracingConfig {
  endpoint?: string;
  samplingRatePerMillion?: number;
}

/** otlptracegrpc's endpoint when the configuration names none. */
export const DEFAULT_ENDPOINT = 'localhost:4317';

/** tracing/api/v1 ValidateTracingConfiguration, in its words. */
export function tracingError(t: TracingConfig | undefined): string | undefined {
  if (!t) return undefined;
  const rate = t.samplingRatePerMillion;
  if (rate !== undefined && rate < 0) return `tracing.samplingRatePerMillion: Invalid value: ${rate}: sampling rate must be positive`;
  if (rate !== undefined && rate > 1_000_000)
    return `tracing.samplingRatePerMillion: Invalid value: ${rate}: sampling rate per million must be less than or equal to one million`;
  if (t.endpoint !== undefined) {
    // validateEndpoint: a bare host:port is a dns: target; the scheme must be gRPC's.
    const endpoint = t.endpoint.includes('//') ? t.endpoint : `dns://${t.endpoint}`;
    let scheme: string;
    try {
      scheme = new URL(endpoint).protocol.replace(/:$/, '');
    } catch (e) {
      return `tracing.endpoint: Invalid value: ${JSON.stringify(endpoint)}: ${(e as Error).message}`;
    }
    if (!['dns', 'unix', 'unix-abstract'].includes(scheme))
      return `tracing.endpoint: Invalid value: ${JSON.stringify(endpoint)}: unsupported scheme: ${scheme}.  Options are none, dns, unix, or unix-abstract.  See https://github.com/grpc/grpc/blob/master/doc/naming.md`;
  }
  return undefined;
}
