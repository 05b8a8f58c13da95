// /metrics/cadvisor: the container_* series cadvisor exports inside the upstream kubelet,
// under its names, help texts and labels (container, id, image, name, namespace, pod),
// for the root cgroup, the system containers, each pod's cgroup, its sandbox and its
// containers. Pure over a RawSample; usage series carry the sample time, as cadvisor's do.
// The metric sets are the kubelet's (server.go): cpu, memory, disk I/O and usage, network,
// process and OOM metrics, and pressure (PSI) where the host has it.
import type { CgroupSample, DiskStats, NetInterface, RawSample } from './sample.ts';
import type { Filesystem } from './filesystems.ts';
import type { CustomMetrics } from './app-metrics/collect.ts';

interface Entity {
  id: string;
  name: string;
  image: string;
  container: string;
  pod: string;
  namespace: string;
  startTimeMs: number;
  cgroup: CgroupSample;
  network?: NetInterface[];
  /** Filesystem usage by device: a container's writable layer. */
  fs?: { device: string; usageBytes: number }[];
  /** cAdvisor's filesystems of a raw cgroup: all of the node's for the root, a hint's for another. */
  filesystems?: Filesystem[];
  /** cAdvisor's application metrics of a container. */
  custom?: CustomMetrics;
}

type Labels = Record<string, string>;
interface Family {
  help: string;
  type: 'counter' | 'gauge';
  rows: string[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
// container_tasks_state's states (cadvisor's TaskStats).
const TASK_STATES = ['iowaiting', 'running', 'sleeping', 'stopped', 'uninterruptible'];
const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const labelText = (l: Labels) => {
  const keys = Object.keys(l).sort();
  return keys.length ? `{${keys.map((k) => `${k}="${esc(l[k]!)}"`).join(',')}}` : '';
};

/** cadvisor's device label (MachineInfoNamer): /dev/ and the kernel's name; "" for one it does not know. */
const deviceName = (s: RawSample, majorMinor: string | undefined): string => {
  const name = majorMinor && s.blockDevices?.[majorMinor];
  return name ? `/dev/${name}` : '';
};

function entities(s: RawSample): Entity[] {
  const blank = { name: '', image: '', container: '', pod: '', namespace: '' };
  const out: Entity[] = [{ ...blank, id: '/', startTimeMs: s.bootTimeMs, cgroup: s.root, network: s.network, filesystems: s.filesystems }];
  // A system container that is the root (pods without cgroupsPerQOS) is the root's series already.
  for (const sc of s.system)
    if (sc.cgroupPath !== '/')
      out.push({ ...blank, id: sc.cgroupPath, startTimeMs: sc.startTimeMs, cgroup: sc.cgroup, filesystems: sc.filesystems });
  const pods = new Map(s.pods.map((p) => [p.sandboxId, p]));
  for (const p of s.pods) {
    if (!p.cgroupPath) continue;
    const ref = { pod: p.name, namespace: p.namespace };
    if (p.cgroup)
      out.push({ ...blank, ...ref, id: p.cgroupPath, startTimeMs: p.createdAtMs, cgroup: p.cgroup, filesystems: p.filesystems });
    // The sandbox holds the pod's network namespace, so its interfaces are reported on it.
    if (p.sandboxCgroup && p.sandboxCgroupPath)
      out.push({
        ...blank,
        ...ref,
        id: p.sandboxCgroupPath,
        name: p.sandboxId,
        startTimeMs: p.createdAtMs,
        cgroup: p.sandboxCgroup,
        network: p.network,
      });
  }
  for (const c of s.containers) {
    const p = pods.get(c.sandboxId);
    if (!p) continue;
    // Without a readable cgroup, the runtime's figures stand in for the usage series.
    const cgroup: CgroupSample = c.cgroup ?? {
      cpu: c.cri?.cpuNs !== undefined ? { usageNs: c.cri.cpuNs } : undefined,
      memory:
        c.cri?.workingSetBytes !== undefined
          ? {
              usageBytes: c.cri.usageBytes ?? 0,
              workingSetBytes: c.cri.workingSetBytes,
              rssBytes: c.cri.rssBytes ?? 0,
              cacheBytes: 0,
              mappedFileBytes: 0,
              swapBytes: 0,
              activeFileBytes: 0,
              inactiveFileBytes: 0,
              kernelBytes: 0,
              pageFaults: c.cri.pageFaults ?? 0,
              majorPageFaults: c.cri.majorPageFaults ?? 0,
              localPageFaults: 0,
              localMajorPageFaults: 0,
            }
          : undefined,
      psi: { cpu: c.cri?.cpuPsi, memory: c.cri?.memoryPsi, io: c.cri?.io?.psi },
    };
    // cadvisor's containerd handler reports no filesystem usage (hasFilesystem false,
    // cadvisor#2785); the node e2e expects it of CRI-O's, whose figure is the writable layer's,
    // which the CRI gives here too.
    const layer = c.cri?.writableLayer?.usedBytes;
    out.push({
      id: c.cgroupPath ?? `/${c.id}`,
      name: c.id,
      image: c.image,
      container: c.name,
      pod: p.name,
      namespace: p.namespace,
      startTimeMs: c.createdAtMs,
      cgroup,
      fs: layer !== undefined ? [{ device: deviceName(s, c.writableLayerDevice), usageBytes: layer }] : undefined,
      custom: c.customMetrics,
    });
  }
  return out;
}

/** Pure: the exposition text. */
export function renderCadvisorMetrics(s: RawSample): string {
  const families = new Map<string, Family>();
  const ts = Math.round(s.timeMs);
  // A series collected twice (the root's blkio and its filesystem's diskstats on one device)
  // keeps the first, as the kubelet's handler does (Gather's duplicate error, ContinueOnError).
  const seen = new Set<string>();
  const add = (name: string, type: Family['type'], help: string, labels: Labels, value: number, timestamped = true) => {
    const series = `${name}${labelText(labels)}`;
    if (seen.has(series)) return;
    seen.add(series);
    let f = families.get(name);
    if (!f) families.set(name, (f = { help, type, rows: [] }));
    f.rows.push(`${series} ${value}${timestamped ? ` ${ts}` : ''}`);
  };

  // The kubelet adds cadvisor's PressureMetrics where PSI is (KubeletPSI, locked on since v1.36, and
  // IsPsiEnabled: the cgroup v2 root's cpu.pressure opens); on cgroup v1 the series are absent.
  const psiOn = s.root.psi?.cpu !== undefined;
  for (const e of entities(s)) {
    const l: Labels = { container: e.container, id: e.id, image: e.image, name: e.name, namespace: e.namespace, pod: e.pod };
    add(
      'container_start_time_seconds',
      'gauge',
      'Start time of the container since unix epoch in seconds.',
      l,
      Math.floor(e.startTimeMs / 1000),
      false,
    );
    add('container_last_seen', 'gauge', 'Last time a container was seen by the exporter', l, Math.floor(s.timeMs / 1000));
    // No health check is known of a CRI container: cadvisor's -1.
    add('container_health_state', 'gauge', "The result of the container's health check", l, -1);
    // CpuLoadMetrics: the kubelet's cadvisor runs without its load reader (netlink taskstats),
    // so the load averages and task counts are zeros, as upstream shows them.
    add('container_cpu_load_average_10s', 'gauge', 'Value of container cpu load average over the last 10 seconds.', l, 0);
    add('container_cpu_load_d_average_10s', 'gauge', 'Value of container cpu load.d average over the last 10 seconds.', l, 0);
    for (const state of TASK_STATES) add('container_tasks_state', 'gauge', 'Number of tasks in given state', { ...l, state }, 0);
    const cpu = e.cgroup.cpu;
    if (cpu) {
      if (cpu.periodUs !== undefined) add('container_spec_cpu_period', 'gauge', 'CPU period of the container.', l, cpu.periodUs, false);
      if (cpu.quotaUs !== undefined) add('container_spec_cpu_quota', 'gauge', 'CPU quota of the container.', l, cpu.quotaUs, false);
      if (cpu.shares !== undefined) add('container_spec_cpu_shares', 'gauge', 'CPU share of the container.', l, cpu.shares, false);
      // Per-CPU figures are off in the kubelet's cadvisor: one series, cpu="total".
      add(
        'container_cpu_usage_seconds_total',
        'counter',
        'Cumulative cpu time consumed in seconds.',
        { ...l, cpu: 'total' },
        cpu.usageNs / 1e9,
      );
      if (cpu.userNs !== undefined)
        add('container_cpu_user_seconds_total', 'counter', 'Cumulative user cpu time consumed in seconds.', l, cpu.userNs / 1e9);
      if (cpu.systemNs !== undefined)
        add('container_cpu_system_seconds_total', 'counter', 'Cumulative system cpu time consumed in seconds.', l, cpu.systemNs / 1e9);
      // What kube-prometheus-stack's CPUThrottlingHigh alert divides; only under a quota, as cadvisor's condition.
      if (cpu.cfs && cpu.quotaUs !== undefined) {
        add('container_cpu_cfs_periods_total', 'counter', 'Number of elapsed enforcement period intervals.', l, cpu.cfs.periods);
        add('container_cpu_cfs_throttled_periods_total', 'counter', 'Number of throttled period intervals.', l, cpu.cfs.throttledPeriods);
        add(
          'container_cpu_cfs_throttled_seconds_total',
          'counter',
          'Total time duration the container has been throttled.',
          l,
          cpu.cfs.throttledNs / 1e9,
        );
        add('container_cpu_cfs_burst_periods_total', 'counter', 'Number of periods when burst occurs.', l, cpu.cfs.bursts);
        add(
          'container_cpu_cfs_burst_seconds_total',
          'counter',
          'Total time duration the container has been bursted.',
          l,
          cpu.cfs.burstNs / 1e9,
        );
      }
    }
    if (psiOn) {
      // cadvisor's PressureMetrics: the "full" and "some" totals (microseconds) of each resource;
      // its PSI fields are values, so a cgroup without the file shows zeros.
      const p = e.cgroup.psi;
      for (const [resource, psi, what] of [
        ['cpu', p?.cpu, 'CPU'],
        ['memory', p?.memory, 'memory'],
        ['io', p?.io, 'IO'],
      ] as const) {
        add(
          `container_pressure_${resource}_stalled_seconds_total`,
          'counter',
          `Total time duration no tasks in the container could make progress due to ${what} congestion.`,
          l,
          (psi?.full.total ?? 0) / 1e6,
        );
        add(
          `container_pressure_${resource}_waiting_seconds_total`,
          'counter',
          `Total time duration tasks in the container have waited due to ${what} congestion.`,
          l,
          (psi?.some.total ?? 0) / 1e6,
        );
      }
    }
    const m = e.cgroup.memory;
    if (m) {
      // Unlimited is 0, as cadvisor reports it for cgroup v2's "max".
      add('container_spec_memory_limit_bytes', 'gauge', 'Memory limit for the container.', l, m.limitBytes ?? 0, false);
      add(
        'container_memory_usage_bytes',
        'gauge',
        'Current memory usage in bytes, including all memory regardless of when it was accessed',
        l,
        m.usageBytes,
      );
      add('container_memory_working_set_bytes', 'gauge', 'Current working set in bytes.', l, m.workingSetBytes);
      add('container_memory_rss', 'gauge', 'Size of RSS in bytes.', l, m.rssBytes);
      add('container_memory_cache', 'gauge', 'Number of bytes of page cache memory.', l, m.cacheBytes);
      add('container_memory_mapped_file', 'gauge', 'Size of memory mapped files in bytes.', l, m.mappedFileBytes);
      add('container_memory_swap', 'gauge', 'Container swap usage in bytes.', l, m.swapBytes);
      add('container_memory_kernel_usage', 'gauge', 'Size of kernel memory allocated in bytes.', l, m.kernelBytes);
      add('container_memory_total_active_file_bytes', 'gauge', 'Current total active file in bytes.', l, m.activeFileBytes);
      add('container_memory_total_inactive_file_bytes', 'gauge', 'Current total inactive file in bytes.', l, m.inactiveFileBytes);
      if (m.maxUsageBytes !== undefined)
        add('container_memory_max_usage_bytes', 'gauge', 'Maximum memory usage recorded in bytes', l, m.maxUsageBytes);
      // Unlimited is 0 (cadvisor's specMemoryValue).
      add('container_spec_memory_swap_limit_bytes', 'gauge', 'Memory swap limit for the container.', l, m.swapLimitBytes ?? 0, false);
      add(
        'container_spec_memory_reservation_limit_bytes',
        'gauge',
        'Memory reservation limit for the container.',
        l,
        m.reservationBytes ?? 0,
        false,
      );
      add('container_oom_events_total', 'counter', 'Count of out of memory events observed for the container', l, m.oomKills ?? 0);
      if (m.failcnt !== undefined) add('container_memory_failcnt', 'counter', 'Number of memory usage hits limits', l, m.failcnt);
      const failures: [string, string, number][] = [
        ['pgfault', 'container', m.localPageFaults],
        ['pgmajfault', 'container', m.localMajorPageFaults],
        ['pgfault', 'hierarchy', m.pageFaults],
        ['pgmajfault', 'hierarchy', m.majorPageFaults],
      ];
      for (const [type, scope, v] of failures)
        add(
          'container_memory_failures_total',
          'counter',
          'Cumulative count of memory allocation failures.',
          { ...l, failure_type: type, scope },
          v,
        );
    }
    const io = e.cgroup.blkio;
    const dev = (d: DiskStats) => deviceName(s, `${d.major}:${d.minor}`);
    for (const d of io?.serviceBytes ?? []) {
      const dl = { ...l, device: dev(d) };
      add('container_fs_reads_bytes_total', 'counter', 'Cumulative count of bytes read', dl, d.stats.Read ?? 0);
      add('container_fs_writes_bytes_total', 'counter', 'Cumulative count of bytes written', dl, d.stats.Write ?? 0);
      for (const [operation, v] of Object.entries(d.stats))
        add(
          'container_blkio_device_usage_total',
          'counter',
          'Blkio Device bytes usage',
          { ...dl, major: String(d.major), minor: String(d.minor), operation },
          v,
        );
    }
    for (const d of io?.serviced ?? []) {
      const dl = { ...l, device: dev(d) };
      add('container_fs_reads_total', 'counter', 'Cumulative count of reads completed', dl, d.stats.Read ?? 0);
      add('container_fs_writes_total', 'counter', 'Cumulative count of writes completed', dl, d.stats.Write ?? 0);
    }
    // cAdvisor's DiskUsageMetrics and the filesystems' part of its DiskIOMetrics. Its "seconds"
    // divide the kernel's milliseconds by time.Second, so they are ms / 1e9: kept, as the name
    // and value upstream's dashboards read.
    for (const f of e.filesystems ?? []) {
      const dl = { ...l, device: f.device };
      const d = f.disk;
      add('container_fs_inodes_free', 'gauge', 'Number of available Inodes', dl, f.inodesFree);
      add('container_fs_inodes_total', 'gauge', 'Number of Inodes', dl, f.inodes);
      add(
        'container_fs_limit_bytes',
        'gauge',
        'Number of bytes that can be consumed by the container on this filesystem.',
        dl,
        f.capacityBytes,
      );
      add(
        'container_fs_usage_bytes',
        'gauge',
        'Number of bytes that are consumed by the container on this filesystem.',
        dl,
        f.capacityBytes - f.freeBytes,
      );
      add('container_fs_reads_total', 'counter', 'Cumulative count of reads completed', dl, d.readsCompleted);
      add('container_fs_sector_reads_total', 'counter', 'Cumulative count of sector reads completed', dl, d.sectorsRead);
      add('container_fs_reads_merged_total', 'counter', 'Cumulative count of reads merged', dl, d.readsMerged);
      add('container_fs_read_seconds_total', 'counter', 'Cumulative count of seconds spent reading', dl, d.readTimeMs / 1e9);
      add('container_fs_writes_total', 'counter', 'Cumulative count of writes completed', dl, d.writesCompleted);
      add('container_fs_sector_writes_total', 'counter', 'Cumulative count of sector writes completed', dl, d.sectorsWritten);
      add('container_fs_writes_merged_total', 'counter', 'Cumulative count of writes merged', dl, d.writesMerged);
      add('container_fs_write_seconds_total', 'counter', 'Cumulative count of seconds spent writing', dl, d.writeTimeMs / 1e9);
      add('container_fs_io_current', 'gauge', 'Number of I/Os currently in progress', dl, d.ioInProgress);
      add('container_fs_io_time_seconds_total', 'counter', 'Cumulative count of seconds spent doing I/Os', dl, d.ioTimeMs / 1e9);
      add(
        'container_fs_io_time_weighted_seconds_total',
        'counter',
        'Cumulative weighted I/O time in seconds',
        dl,
        d.weightedIoTimeMs / 1e9,
      );
    }
    for (const f of e.fs ?? [])
      add(
        'container_fs_usage_bytes',
        'gauge',
        'Number of bytes that are consumed by the container on this filesystem.',
        { ...l, device: f.device },
        f.usageBytes,
      );
    const ps = e.cgroup.processes;
    if (ps) {
      add('container_processes', 'gauge', 'Number of processes running inside the container.', l, ps.processCount);
      add('container_file_descriptors', 'gauge', 'Number of open file descriptors for the container.', l, ps.fdCount);
      add('container_sockets', 'gauge', 'Number of open sockets for the container.', l, ps.socketCount);
      for (const u of ps.ulimits)
        add(
          'container_ulimits_soft',
          'gauge',
          'Soft ulimit values for the container root process. Unlimited if -1, except priority and nice',
          { ...l, ulimit: u.name },
          u.soft,
        );
    }
    const pids = e.cgroup.pids;
    if (pids) {
      add('container_threads', 'gauge', 'Number of threads running inside the container', l, pids.current);
      add(
        'container_threads_max',
        'gauge',
        'Maximum number of threads allowed inside the container, infinity if value is zero',
        l,
        pids.max,
      );
    }
    for (const i of e.network ?? []) {
      const il = { ...l, interface: i.name };
      add('container_network_receive_bytes_total', 'counter', 'Cumulative count of bytes received', il, i.rxBytes);
      add('container_network_receive_packets_total', 'counter', 'Cumulative count of packets received', il, i.rxPackets);
      add(
        'container_network_receive_packets_dropped_total',
        'counter',
        'Cumulative count of packets dropped while receiving',
        il,
        i.rxDropped,
      );
      add('container_network_receive_errors_total', 'counter', 'Cumulative count of errors encountered while receiving', il, i.rxErrors);
      add('container_network_transmit_bytes_total', 'counter', 'Cumulative count of bytes transmitted', il, i.txBytes);
      add('container_network_transmit_packets_total', 'counter', 'Cumulative count of packets transmitted', il, i.txPackets);
      add(
        'container_network_transmit_packets_dropped_total',
        'counter',
        'Cumulative count of packets dropped while transmitting',
        il,
        i.txDropped,
      );
      add(
        'container_network_transmit_errors_total',
        'counter',
        'Cumulative count of errors encountered while transmitting',
        il,
        i.txErrors,
      );
    }
    // cAdvisor's AppMetrics: a gauge a value, named as the application names it, its Prometheus
    // labels prefixed "app_" (sanitizeLabelName). A generic collector's "int" metric shows its
    // float value, 0, as cAdvisor's. A name Prometheus refuses is left out (cAdvisor's
    // MustNewConstMetric would panic on it).
    for (const [name, values] of Object.entries(e.custom?.values ?? {})) {
      if (!METRIC_NAME.test(name)) continue;
      for (const v of values) {
        const app: Labels = {};
        for (const [k, x] of Object.entries(v.labels ?? {})) app[`app_${k}`.replace(/[^a-zA-Z0-9_]/g, '_')] = x;
        add(name, 'gauge', 'Custom application metric.', { ...l, ...app }, v.floatValue, false);
      }
    }
  }
  // cadvisor's machine collector: its series labelled with the machine's identity, untimestamped.
  // Books and drawers are s390's; no NVM is read (cadvisor's needs libipmctl).
  const m = s.machine;
  const ml: Labels = { boot_id: m.bootID, machine_id: m.machineID, system_uuid: m.systemUUID };
  const machine = (name: string, help: string, value: number, extra: Labels = {}) =>
    add(name, 'gauge', help, { ...ml, ...extra }, value, false);
  machine('machine_cpu_physical_cores', 'Number of physical CPU cores.', m.physicalCores);
  machine('machine_cpu_cores', 'Number of logical CPU cores.', m.cpuCores);
  machine('machine_cpu_sockets', 'Number of CPU sockets.', m.sockets);
  machine('machine_cpu_books', 'Number of CPU books.', 0);
  machine('machine_cpu_drawers', 'Number of CPU drawers.', 0);
  machine('machine_memory_bytes', 'Amount of memory installed on the machine.', m.memoryBytes);
  machine('machine_swap_bytes', 'Amount of swap memory available on the machine.', m.swapBytes);
  for (const mode of ['app_direct_mode', 'memory_mode'])
    machine('machine_nvm_capacity', 'NVM capacity value labeled by NVM mode (memory mode or app direct mode).', 0, { mode });
  machine('machine_nvm_avg_power_budget_watts', 'NVM power budget.', 0);
  add('machine_scrape_error', 'gauge', '1 if there was an error while getting machine metrics, 0 otherwise.', {}, 0, false);
  // The containers' collector: an error is the runtime not answering (the pods' series are then missing).
  add(
    'container_scrape_error',
    'gauge',
    '1 if there was an error while getting container metrics, 0 otherwise',
    {},
    s.runtimeError ? 1 : 0,
    false,
  );
  // The kubelet's cadvisor is built without its version stamped, and there is no Docker.
  add(
    'cadvisor_version_info',
    'gauge',
    "A metric with a constant '1' value labeled by kernel version, OS version, docker version, cadvisor version & cadvisor revision.",
    { cadvisorRevision: '', cadvisorVersion: '', dockerVersion: '', kernelVersion: m.kernelVersion, osVersion: m.osVersion },
    1,
    false,
  );

  const out: string[] = [];
  for (const name of [...families.keys()].sort()) {
    const f = families.get(name)!;
    out.push(`# HELP ${name} ${f.help}`, `# TYPE ${name} ${f.type}`, ...f.rows.sort());
  }
  return out.join('\n') + '\n';
}
