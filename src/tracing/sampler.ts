// component-base's tracing.NewProvider sampler: ParentBased(TraceIDRatioBased(rate / 1e6)), and
// NeverSample at a rate of 0 or none. A span with a parent follows the parent's decision; a
// root is sampled by its trace ID, as the Go SDK's traceIDRatioSampler decides.

/** samplingRatePerMillion as the SDK's fraction (nil or 0: never). */
export const samplingFraction = (ratePerMillion: number | undefined): number => (ratePerMillion ? ratePerMillion / 1_000_000 : 0);

const MAX_63 = 1n << 63n;

/**
 * trace/sampling.go TraceIDRatioBased: fraction >= 1 always, <= 0 never; otherwise the trace
 * ID's last 8 bytes (big-endian) shifted right once, below fraction * 2^63.
 */
export function rootSampled(traceId: Uint8Array, fraction: number): boolean {
  if (fraction >= 1) return true;
  if (fraction <= 0) return false;
  const bound = BigInt(Math.floor(fraction * Number(MAX_63)));
  const x = Buffer.from(traceId.buffer, traceId.byteOffset + 8, 8).readBigUInt64BE() >> 1n;
  return x < bound;
}
