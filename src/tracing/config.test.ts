import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tracingError } from './config.ts';

test('ValidateTracingConfiguration: the rate within 0..1e6, an endpoint of a gRPC scheme', () => {
  const cases: [string, Parameters<typeof tracingError>[0], RegExp | undefined][] = [
    ['absent', undefined, undefined],
    ['empty: the defaults', {}, undefined],
    ['host:port', { endpoint: 'localhost:4317', samplingRatePerMillion: 1_000_000 }, undefined],
    ['a unix socket', { endpoint: 'unix:///run/otel.sock' }, undefined],
    ['negative rate', { samplingRatePerMillion: -1 }, /samplingRatePerMillion: Invalid value: -1: sampling rate must be positive/],
    ['rate over a million', { samplingRatePerMillion: 1_000_001 }, /less than or equal to one million/],
    [
      'http is not gRPC',
      { endpoint: 'http://collector:4317' },
      /tracing.endpoint: Invalid value: "http:\/\/collector:4317": unsupported scheme: http/,
    ],
  ];
  for (const [name, cfg, want] of cases) {
    const got = tracingError(cfg);
    if (want) assert.match(got ?? '', want, name);
    else assert.equal(got, undefined, name);
  }
});
