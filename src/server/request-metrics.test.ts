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

test('requestLabels on the read-only port: server_type readonly, only the buckets that server registers', () => {
  const rows: [string, string, string][] = [
    ['/pods', 'pods', 'false'],
    ['/metrics/cadvisor', 'metrics/cadvisor', 'false'],
    ['/exec/ns/pod/c', 'exec', 'true'], // a debugging-disabled handler still has its bucket
    ['/logs/syslog', 'logs', 'false'],
    ['/configz', 'other', 'false'], // not installed there
    ['/debug/pprof/', 'other', 'false'],
    ['/checkpoint/ns/pod/c', 'other', 'false'],
  ];
  for (const [url, path, longRunning] of rows) {
    assert.deepEqual(
      requestLabels('GET', url, 'readonly'),
      { method: 'GET', path, server_type: 'readonly', long_running: longRunning },
      url,
    );
  }
});
