// The machine's CPU by who spent it, from /proc: what a burst costs each part of the local stack
// (the runtime, its shims, the control plane, the kubelet, the kernel's workers), where the
// kubelets' own figures see only themselves. A process's time includes its reaped children's
// (cutime, cstime): runc is counted under its shim, CNI plugins under containerd.
import { readdirSync, readFileSync } from 'node:fs';

/** Which part of the stack a process is, by its command line (argv joined by spaces) and comm. */
export function processGroup(cmdline: string, comm: string): string {
  if (!cmdline) return 'kernel threads';
  const argv0 = cmdline.split(' ')[0]!;
  const is = (name: string) => argv0 === name || argv0.endsWith(`/${name}`);
  if (cmdline.includes('dist/cli/main.js')) return 'kubelet-ts';
  if (is('kubelet')) return 'upstream kubelet';
  for (const name of ['kube-apiserver', 'etcd', 'kube-scheduler', 'kube-controller-manager', 'containerd']) if (is(name)) return name;
  if (argv0.includes('containerd-shim')) return 'shims (and their runc)';
  if (comm === 'pause') return "pods' pause (runc init's work)";
  if (cmdline.includes('test/bench/')) return 'the bench';
  return `other: ${comm}`;
}

/** CPU seconds by group over every process now in /proc (user + system, with reaped children). */
export function cpuByGroup(proc = '/proc'): Map<string, number> {
  const out = new Map<string, number>();
  for (const pid of readdirSync(proc)) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`${proc}/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = fields.slice(11, 15).reduce((a, b) => a + Number(b), 0);
      const cmdline = readFileSync(`${proc}/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
      const g = processGroup(cmdline, stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')));
      out.set(g, (out.get(g) ?? 0) + ticks / 100);
    } catch {
      // gone while read
    }
  }
  return out;
}

/**
 * Pure: each group's seconds between two readings, the largest first, with its share of the
 * machine's busy seconds; groups under minSeconds folded into "the rest".
 */
export function groupShares(
  before: Map<string, number>,
  after: Map<string, number>,
  busySeconds: number,
  minSeconds = 0.2,
): [string, number, number][] {
  const rows: [string, number, number][] = [];
  let rest = 0;
  for (const [g, v] of after) {
    const d = v - (before.get(g) ?? 0);
    if (d >= minSeconds) rows.push([g, d, d / busySeconds]);
    else if (d > 0) rest += d;
  }
  rows.sort((a, b) => b[1] - a[1]);
  if (rest > 0) rows.push(['the rest', rest, rest / busySeconds]);
  return rows;
}
