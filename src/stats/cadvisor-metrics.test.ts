import { test } from 'node:test';
import assert from 'node:assert/strict';
import { later, T } from './testing.ts';
import { renderCadvisorMetrics } from './cadvisor-metrics.ts';
import { NO_IO } from './filesystems.ts';

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
  ];
  const lines = new Set(text.split('\n'));
  for (const w of want) assert.ok(lines.has(w), `missing: ${w}`);
});

test("cadvisor's disk I/O, filesystem, process, OOM and memory spec series of a container", () => {
  const vda = { ...app, device: '/dev/vda' };
  const want = [
    `container_blkio_device_usage_total${L({ ...vda, major: '254', minor: '0', operation: 'Read' })} 12288 ${T}`,
    `container_blkio_device_usage_total${L({ ...vda, major: '254', minor: '0', operation: 'Total' })} 16384 ${T}`,
    `container_blkio_device_usage_total${L({ ...vda, major: '254', minor: '0', operation: 'Discard' })} 0 ${T}`,
    // A device /proc/diskstats does not name: cadvisor's empty device label.
    `container_blkio_device_usage_total${L({ ...app, device: '', major: '8', minor: '16', operation: 'Read' })} 512 ${T}`,
    `container_fs_reads_bytes_total${L(vda)} 12288 ${T}`,
    `container_fs_writes_bytes_total${L(vda)} 4096 ${T}`,
    `container_fs_writes_bytes_total${L({ ...app, device: '' })} 0 ${T}`,
    `container_fs_reads_total${L(vda)} 3 ${T}`,
    `container_fs_writes_total${L(vda)} 1 ${T}`,
    `container_fs_usage_bytes${L(vda)} 8192 ${T}`,
    `container_processes${L(app)} 2 ${T}`,
    `container_file_descriptors${L(app)} 7 ${T}`,
    `container_sockets${L(app)} 1 ${T}`,
    `container_threads${L(app)} 3 ${T}`,
    `container_threads_max${L(app)} 0 ${T}`,
    `container_ulimits_soft${L({ ...app, ulimit: 'max_open_files' })} 1048576 ${T}`,
    `container_oom_events_total${L(app)} 1 ${T}`,
    `container_spec_memory_reservation_limit_bytes${L(app)} 512`,
    `container_spec_memory_swap_limit_bytes${L(app)} 0`,
    // Unlimited (and unknown) limits are 0, as cadvisor's specMemoryValue.
    `container_spec_memory_reservation_limit_bytes${L({ id: '/' })} 0`,
    `container_spec_memory_swap_limit_bytes${L({ id: '/' })} 0`,
    `container_oom_events_total${L({ id: '/' })} 0 ${T}`,
  ];
  const lines = new Set(text.split('\n'));
  for (const w of want) assert.ok(lines.has(w), `missing: ${w}`);
  assert.equal(text.match(/^container_blkio_device_usage_total\{/gm)?.length, 9, 'one series an operation a device');
  assert.match(text, /^# HELP container_blkio_device_usage_total Blkio Device bytes usage$/m);
  assert.match(text, /^# TYPE container_fs_reads_total counter$/m);
  assert.match(text, /^# HELP container_threads_max Maximum number of threads allowed inside the container, infinity if value is zero$/m);
  assert.match(text, /^# TYPE container_ulimits_soft gauge$/m);
});

test('the swap limit as cadvisor reads it: memsw on v1, swap.max on v2', () => {
  const [c1, ...rest] = later.containers;
  const memory = { ...c1!.cgroup!.memory!, swapLimitBytes: 83886080 };
  const t = renderCadvisorMetrics({ ...later, containers: [{ ...c1!, cgroup: { ...c1!.cgroup, memory } }, ...rest] });
  assert.ok(t.split('\n').includes(`container_spec_memory_swap_limit_bytes${L(app)} 83886080`));
});

test("CFS throttling and bursting as cadvisor's container_cpu_cfs_* counters (what CPUThrottlingHigh divides), under a quota only", () => {
  const [c1, ...rest] = later.containers;
  const cfs = { periods: 40, throttledPeriods: 7, throttledNs: 350_000_000, bursts: 3, burstNs: 20_000_000 };
  const render = (quotaUs?: number) =>
    renderCadvisorMetrics({
      ...later,
      containers: [{ ...c1!, cgroup: { ...c1!.cgroup, cpu: { ...c1!.cgroup!.cpu!, quotaUs, cfs } } }, ...rest],
    }).split('\n');
  const lines = render(50_000);
  for (const want of [
    `container_cpu_cfs_periods_total${L(app)} 40`,
    `container_cpu_cfs_throttled_periods_total${L(app)} 7`,
    `container_cpu_cfs_throttled_seconds_total${L(app)} 0.35`,
    `container_cpu_cfs_burst_periods_total${L(app)} 3`,
    `container_cpu_cfs_burst_seconds_total${L(app)} 0.02`,
  ])
    assert.ok(
      lines.some((l) => l.startsWith(`${want} `)),
      want,
    );
  assert.ok(!render(undefined).some((l) => l.startsWith('container_cpu_cfs_')), 'no quota (the root, an unlimited container): none');
});

test("cadvisor's series whose values the kubelet's cadvisor never reads: no health check, no load reader", () => {
  const lines = new Set(text.split('\n'));
  for (const l of [L({ id: '/' }), L(app)]) {
    for (const want of [
      `container_health_state${l} -1 ${T}`,
      `container_cpu_load_average_10s${l} 0 ${T}`,
      `container_cpu_load_d_average_10s${l} 0 ${T}`,
      ...['iowaiting', 'running', 'sleeping', 'stopped', 'uninterruptible'].map(
        (state) => `container_tasks_state${l.slice(0, -1)},state="${state}"} 0 ${T}`,
      ),
    ])
      assert.ok(lines.has(want), `missing: ${want}`);
  }
});

test('the memory figures cadvisor adds: kernel usage and the file LRUs', () => {
  const lines = new Set(text.split('\n'));
  for (const want of [
    `container_memory_kernel_usage${L(app)} 40 ${T}`,
    `container_memory_total_active_file_bytes${L(app)} 150 ${T}`,
    `container_memory_total_inactive_file_bytes${L(app)} 100 ${T}`,
  ])
    assert.ok(lines.has(want), `missing: ${want}`);
});

test("cadvisor's machine collector: its series labelled with the machine's identity, the scrape errors and the version", () => {
  const ml = '{boot_id="boot",machine_id="mid",system_uuid="uuid"}';
  const lines = new Set(text.split('\n'));
  for (const want of [
    `machine_cpu_cores${ml} 2`,
    `machine_cpu_physical_cores${ml} 2`,
    `machine_cpu_sockets${ml} 1`,
    `machine_cpu_books${ml} 0`,
    `machine_cpu_drawers${ml} 0`,
    `machine_memory_bytes${ml} 10000`,
    `machine_swap_bytes${ml} 2000`,
    'machine_nvm_capacity{boot_id="boot",machine_id="mid",mode="app_direct_mode",system_uuid="uuid"} 0',
    'machine_nvm_capacity{boot_id="boot",machine_id="mid",mode="memory_mode",system_uuid="uuid"} 0',
    `machine_nvm_avg_power_budget_watts${ml} 0`,
    'machine_scrape_error 0',
    'container_scrape_error 0',
    'cadvisor_version_info{cadvisorRevision="",cadvisorVersion="",dockerVersion="",kernelVersion="6.1.0",osVersion="Debian GNU/Linux 12 (bookworm)"} 1',
  ])
    assert.ok(lines.has(want), `missing: ${want}`);
  const failed = renderCadvisorMetrics({ ...later, runtimeError: 'connection refused' });
  assert.match(failed, /^container_scrape_error 1$/m, 'the runtime not answering');
});

test('cgroups without process, pids or I/O figures have none of those series', () => {
  const side = /^container_(processes|threads|fs_|blkio|ulimits)\S*\{[^}]*id="\/c2"/m;
  assert.doesNotMatch(text, side, 'the CRI-only container');
  assert.doesNotMatch(text, /^container_(processes|threads|blkio_device)\S*\{[^}]*id="\/"/m, 'the root');
});

test('pods in the root (cgroupsPerQOS false): the "pods" system container adds no second series for "/"', () => {
  const pods = later.system.find((x) => x.name === 'pods')!;
  const t = renderCadvisorMetrics({ ...later, system: [{ ...pods, cgroupPath: '/', cgroup: later.root }] });
  const series = t.split('\n').filter((l) => l.startsWith(`container_cpu_usage_seconds_total${L({ cpu: 'total', id: '/' })}`));
  assert.equal(series.length, 1);
});

test('a container known only from CRI stats still has its usage series', () => {
  const side = { container: 'side', id: '/c2', image: 'busybox:1.36', name: 'c2', namespace: 'ns', pod: 'web' };
  assert.match(
    text,
    new RegExp(`^container_memory_working_set_bytes\\{${L(side).slice(1, -1).replace(/[/.]/g, '\\$&')}\\} 100 ${T}$`, 'm'),
  );
});

test("cAdvisor's filesystems: the root's every one, a hinted cgroup's its own; a series the root's blkio has kept once", () => {
  const io = { ...NO_IO, readsCompleted: 9, readTimeMs: 2500, ioInProgress: 1, weightedIoTimeMs: 4000 };
  const vda = {
    device: '/dev/vda',
    mountpoint: '/',
    capacityBytes: 1000,
    freeBytes: 400,
    availableBytes: 300,
    inodes: 50,
    inodesFree: 20,
    disk: io,
  };
  const shm = { ...vda, device: '/dev/shm', mountpoint: '/dev/shm', disk: NO_IO };
  const t = renderCadvisorMetrics({
    ...later,
    root: { ...later.root, blkio: { serviceBytes: [], serviced: [{ major: 254, minor: 0, stats: { Read: 7, Write: 2 } }] } },
    filesystems: [vda, shm],
    system: later.system.map((sc) => ({ ...sc, filesystems: [shm] })),
  });
  const root = (device: string) => L({ id: '/', device });
  const pods = L({ id: '/kubepods', device: '/dev/shm' });
  const want = [
    `container_fs_limit_bytes${root('/dev/vda')} 1000 ${T}`,
    `container_fs_usage_bytes${root('/dev/vda')} 600 ${T}`,
    `container_fs_inodes_total${root('/dev/vda')} 50 ${T}`,
    `container_fs_inodes_free${root('/dev/vda')} 20 ${T}`,
    // The root cgroup's blkio said 7 for the device first; the diskstats' 9 is the duplicate.
    `container_fs_reads_total${root('/dev/vda')} 7 ${T}`,
    // cAdvisor's ms / time.Second.
    `container_fs_read_seconds_total${root('/dev/vda')} 0.0000025 ${T}`,
    `container_fs_io_time_weighted_seconds_total${root('/dev/vda')} 0.000004 ${T}`,
    `container_fs_io_current${root('/dev/vda')} 1 ${T}`,
    `container_fs_limit_bytes${root('/dev/shm')} 1000 ${T}`,
    `container_fs_reads_total${root('/dev/shm')} 0 ${T}`,
    `container_fs_limit_bytes${pods} 1000 ${T}`,
    `container_fs_sector_writes_total${pods} 0 ${T}`,
  ];
  const lines = new Set(t.split('\n'));
  for (const w of want) assert.ok(lines.has(w), `missing: ${w}`);
  assert.equal(t.match(/^container_fs_reads_total\{[^}]*id="\/",/gm)?.length, 2, 'one series a device');
  assert.equal(t.match(/^container_fs_limit_bytes\{/gm)?.length, 3);
  assert.match(t, /^# HELP container_fs_limit_bytes Number of bytes that can be consumed by the container on this filesystem\.$/m);
  assert.match(t, /^# TYPE container_fs_io_time_weighted_seconds_total counter$/m);
  // Without them, the root has none (the fixture's sample).
  assert.doesNotMatch(text, /^container_fs_limit_bytes/m);
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
    assert.match(line, /^[a-z_][a-z0-9_]*(\{[^}]*\})? [\d.e+-]+( \d{13})?$/, line);
  }
});

test("PSI: cadvisor's container_pressure_* on cgroup v2 (totals in µs as seconds; zeros for a cgroup without the files), none on v1", () => {
  assert.doesNotMatch(text, /container_pressure_/, 'cgroup v1 (no root cpu.pressure): absent, as upstream');
  const psi = (someUs: number, fullUs: number) => ({
    some: { total: someUs, avg10: 1, avg60: 1, avg300: 1 },
    full: { total: fullUs, avg10: 0, avg60: 0, avg300: 0 },
  });
  const [c1, ...rest] = later.containers;
  const v2 = renderCadvisorMetrics({
    ...later,
    root: { ...later.root, psi: { cpu: psi(1_000_000, 0), memory: psi(0, 0), io: psi(0, 0) } },
    containers: [
      { ...c1!, cgroup: { ...c1!.cgroup, psi: { cpu: psi(2_500_000, 500_000), memory: psi(300_000, 100_000), io: psi(7, 3) } } },
      ...rest,
    ],
  });
  const lines = v2.split('\n');
  const cases: [string, string][] = [
    [`container_pressure_cpu_waiting_seconds_total${L(app)}`, '2.5'],
    [`container_pressure_cpu_stalled_seconds_total${L(app)}`, '0.5'],
    [`container_pressure_memory_waiting_seconds_total${L(app)}`, '0.3'],
    [`container_pressure_memory_stalled_seconds_total${L(app)}`, '0.1'],
    [`container_pressure_io_waiting_seconds_total${L(app)}`, '0.000007'],
    [`container_pressure_io_stalled_seconds_total${L(app)}`, '0.000003'],
    [`container_pressure_cpu_waiting_seconds_total${L({ id: '/' })}`, '1'],
    // A cgroup read without pressure files: cadvisor's zero values.
    [`container_pressure_io_waiting_seconds_total${L({ id: '/kubepods' })}`, '0'],
  ];
  for (const [series, value] of cases) assert.ok(lines.includes(`${series} ${value} ${T}`), `${series} ${value}`);
  const help: [string, string][] = [
    ['cpu_stalled', 'Total time duration no tasks in the container could make progress due to CPU congestion.'],
    ['cpu_waiting', 'Total time duration tasks in the container have waited due to CPU congestion.'],
    ['memory_stalled', 'Total time duration no tasks in the container could make progress due to memory congestion.'],
    ['memory_waiting', 'Total time duration tasks in the container have waited due to memory congestion.'],
    ['io_stalled', 'Total time duration no tasks in the container could make progress due to IO congestion.'],
    ['io_waiting', 'Total time duration tasks in the container have waited due to IO congestion.'],
  ];
  for (const [name, h] of help) {
    assert.ok(lines.includes(`# HELP container_pressure_${name}_seconds_total ${h}`), name);
    assert.ok(lines.includes(`# TYPE container_pressure_${name}_seconds_total counter`), name);
  }
});

test("cAdvisor's application metrics: a gauge a value, the container's labels and the page's prefixed app_; an int metric shows 0", () => {
  const t = renderCadvisorMetrics({
    ...later,
    containers: later.containers.map((c) =>
      c.id === 'c1'
        ? {
            ...c,
            customMetrics: {
              specs: [],
              values: {
                http_requests_total: [{ floatValue: 10, labels: { code: '200', 'odd-name': 'x' }, timestampMs: T }],
                active: [{ floatValue: 0, intValue: 7, timestampMs: T }],
                'not a name': [{ floatValue: 1, timestampMs: T }],
              },
            },
          }
        : c,
    ),
  });
  const lines = t.split('\n');
  for (const w of [
    '# HELP http_requests_total Custom application metric.',
    '# TYPE http_requests_total gauge',
    `http_requests_total${L({ ...app, app_code: '200', app_odd_name: 'x' })} 10`,
    `active${L(app)} 0`,
  ])
    assert.ok(lines.includes(w), `missing: ${w}`);
  assert.ok(!t.includes('not a name'));
});
