import { test } from 'node:test';
import assert from 'node:assert/strict';
import { requestLabels } from './request-metrics.ts';

test('requestLabels: root path buckets, two segments under /metrics, other for the unknown', () => {
  const rows: [string, string, string, string][] = [
    ['GET', '/pods', 'pods', 'false'],
    ['GET', '/stats/summary?only_cpu_and_memory=true', 'stats', 'false'],
    ['GET', '/metrics', 'metrics', 'false'],
    ['GET', '/metrics/resource', 'metrics/resource', 'false'],
    ['GET', '/metrics/probes/x', 'metrics/probes', 'false'],
    ['GET', '/metrics/nope', 'other', 'false'],
    ['POST', '/exec/ns/pod/c?command=ls', 'exec', 'true'],
    ['GET', '/attach/ns/pod/c', 'attach', 'true'],
    ['POST', '/portForward/ns/pod', 'portForward', 'false'],
    ['GET', '/containerLogs/ns/pod/c', 'containerLogs', 'false'],
    ['GET', '/', 'other', 'false'],
    ['GET', '/../../etc/passwd', 'other', 'false'],
  ];
  for (const [method, url, path, longRunning] of rows) {
    assert.deepEqual(requestLabels(method, url), { method, path, server_type: 'readwrite', long_running: longRunning }, url);
  }
  assert.equal(requestLabels('BREW', '/pods').method, 'other');
});
