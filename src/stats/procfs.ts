// Pure parsers of the /proc files the stats read: network counters, task counts, uptime,
// ulimits and block device names.

import type { NetInterface, Ulimit } from './sample.ts';

// cadvisor leaves these out of a container's (and the node's) interfaces: loopback and
// the host ends of container links, which would count pod traffic twice.
const IGNORED = ['lo', 'veth', 'docker', 'nerdctl'];

/** Pure: /proc/<pid>/net/dev, interfaces in file order, cadvisor's ignored ones dropped. */
export function parseNetDev(text: string): NetInterface[] {
  const out: NetInterface[] = [];
  for (const line of text.split('\n').slice(2)) {
    const m = /^\s*([^:\s]+):\s*(.*)$/.exec(line);
    if (!m) continue;
    const name = m[1]!;
    if (IGNORED.some((p) => name.startsWith(p))) continue;
    const f = m[2]!.trim().split(/\s+/).map(Number);
    if (f.length < 16 || f.some((n) => !Number.isFinite(n))) continue;
    out.push({
      name,
      rxBytes: f[0]!,
      rxPackets: f[1]!,
      rxErrors: f[2]!,
      rxDropped: f[3]!,
      txBytes: f[8]!,
      txPackets: f[9]!,
      txErrors: f[10]!,
      txDropped: f[11]!,
    });
  }
  return out;
}

/** Pure: the number of tasks from /proc/loadavg ("0.32 0.48 0.68 2/154 5404" -> 154). */
export function parseLoadavgTasks(text: string): number | undefined {
  const m = /^\S+ \S+ \S+ \d+\/(\d+) /.exec(text);
  return m ? Number(m[1]) : undefined;
}

/** Pure: seconds since boot from /proc/uptime. */
export function parseUptimeSeconds(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s/.exec(text);
  return m ? Number(m[1]) : undefined;
}

/**
 * Pure: upstream's rlimit maxpid, the smaller of kernel.pid_max and kernel.threads-max
 * (both cap the tasks a node can run).
 */
export function maxPid(pidMax: string | undefined, threadsMax: string | undefined): number | undefined {
  const limits = [pidMax, threadsMax]
    .map((t) => (t && /^\d+$/.test(t.trim()) ? Number(t.trim()) : undefined))
    .filter((n) => n !== undefined);
  return limits.length ? Math.min(...limits) : undefined;
}

const MAX_OPEN_FILES = 'Max open files';

/**
 * Pure: cadvisor's ulimits from /proc/<pid>/limits (processLimitsFile): only "Max open
 * files", as max_open_files; "unlimited" is -1; a line that does not parse is left out.
 */
export function parseLimits(text: string): Ulimit[] {
  const out: Ulimit[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(MAX_OPEN_FILES)) continue;
    const f = line.slice(MAX_OPEN_FILES.length).trim().split(/\s+/);
    const limit = (v: string) => (/^-?\d+$/.test(v) ? Number(v) : v.toLowerCase() === 'unlimited' ? -1 : undefined);
    const [soft, hard] = [limit(f[0] ?? ''), limit(f[1] ?? '')];
    if (f.length === 3 && soft !== undefined && hard !== undefined) out.push({ name: 'max_open_files', soft, hard });
  }
  return out;
}

/** Pure: block device names by major:minor from /proc/diskstats ("254 0 vda ..." -> "254:0": "vda"). */
export function parseDiskstatsNames(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const [major, minor, name] = line.trim().split(/\s+/);
    if (name && /^\d+$/.test(major!) && /^\d+$/.test(minor!)) out[`${major}:${minor}`] = name;
  }
  return out;
}

/** Pure: a stat(2) st_dev as "major:minor" (glibc's gnu_dev_major/minor split). */
export function devNumbers(dev: bigint): string {
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn);
  const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn);
  return `${major}:${minor}`;
}
