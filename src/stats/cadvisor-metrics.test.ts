import { test } from 'node:test';
import assert from 'node:assert/strict';
import { later, T } from './fixtures.test.ts';
import { renderCadvisorMetrics } from './cadvisor-metrics.ts';

const text = renderCadvisorMetrics(later);
const L = (o: Record<string, string>) =>
  `{${Object.entries({ container: '', id: '', image: '', name: '', namespace: '', pod: '', ...o })
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => `${k}="${v}"`)
    .join(',')}}`;
const app = { container: 'app', id: '/kubepods/besteffort/podu1/c1', image: 'busybox:1.36', name: 'c1', namespace: 'ns', pod: 'web' };

test('cadvisor series with the kubelet labels, for the root, system containers, pods, sandboxes and containers', () => {
  const want = [
    `container_cpu_usage_seconds_total${L({ cpu: 'total', id: '/' })} 110 ${T}`,
    `container_cpu_usage_seconds_total${L({ cpu: 'total', id: '/kubepods' })} 15 ${T}`,
    `container_cpu_usage_seconds_total${L({ cpu: 'total', id: '/kubepods/besteffort/podu1', namespace: 'ns', pod: 'web' })} 7 ${T}`,
    `container_cpu_usage_seconds_total${L({ cpu: 'total', id: '/kubepods/besteffort/podu1/s1', name: 's1', namespace: 'ns', pod: 'web' })} 0.001 ${T}`,
    `container_cpu_usage_seconds_total${L({ ...app, cpu: 'total' })} 6 ${T}`,
    `container_memory_working_set_bytes${L(app)} 300 ${T}`,
    `container_memory_usage_bytes${L(app)} 400 ${T}`,
    `container_memory_rss${L(app)} 100 ${T}`,
    `container_memory_cache${L(app)} 200 ${T}`,
    `container_memory_failures_total${L({ ...app, failure_type: 'pgfault', scope: 'hierarchy' })} 50 ${T}`,
    `container_spec_memory_limit_bytes${L(app)} 1000`,
    `container_spec_memory_limit_bytes${L({ id: '/' })} 0`,
    `container_spec_cpu_shares${L(app)} 2`,
    `container_start_time_seconds${L(app)} ${Date.parse('2026-11-22T11:00:01Z') / 1000}`,
    `container_last_seen${L(app)} ${T / 1000} ${T}`,
    `container_network_receive_bytes_total${L({ id: '/', interface: 'eth0' })} 10 ${T}`,
    `container_network_transmit_bytes_total${L({ id: '/kubepods/besteffort/podu1/s1', name: 's1', namespace: 'ns', pod: 'web', interface: 'eth0' })} 8 ${T}`,
    `machine_cpu_cores 2 ${T}`,
    `machine_memory_bytes 10000 ${T}`,
  ];
  const lines = new Set(text.split('\n'));
  for (const w of want) assert.ok(lines.has(w), `missing: ${w}`);
});

test('a container known only from CRI stats still has its usage series', () => {
  const side = { container: 'side', id: '/c2', image: 'busybox:1.36', name: 'c2', namespace: 'ns', pod: 'web' };
  assert.match(
    text,
    new RegExp(`^container_memory_working_set_bytes\\{${L(side).slice(1, -1).replace(/[/.]/g, '\\$&')}\\} 100 ${T}$`, 'm'),
  );
});

test('families appear once, sorted, each with HELP and TYPE', () => {
  const names = [...text.matchAll(/^# TYPE (\S+) (counter|gauge)$/gm)].map((m) => m[1]!);
  assert.deepEqual(names, [...new Set(names)].sort());
  assert.match(text, /^# HELP container_memory_working_set_bytes Current working set in bytes\.$/m);
  assert.match(text, /^# TYPE container_cpu_usage_seconds_total counter$/m);
  for (const line of text
    .trim()
    .split('\n')
    .filter((l) => !l.startsWith('#'))) {
    assert.match(line, /^[a-z_]+(\{[^}]*\})? [\d.e+-]+( \d{13})?$/, line);
  }
});
