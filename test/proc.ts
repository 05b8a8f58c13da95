// A process as /proc tells it, for the benchmarks and the chaos run.
import { readFileSync } from 'node:fs';

/** CPU seconds (user + system) and resident memory of a process; throws when it is gone. */
export function usage(pid: number): { cpuSeconds: number; rssMB: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const rssKB = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
  return { cpuSeconds: (Number(stat[11]) + Number(stat[12])) / 100, rssMB: rssKB / 1024 };
}

/** Whether the process exists and is not a zombie. */
export function alive(pid: number): boolean {
  try {
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.startsWith('Z');
  } catch {
    return false;
  }
}

/** The machine, as figures from another cannot be compared with its own: CPU model and count (/proc/cpuinfo). */
export function machineName(): string {
  const info = readFileSync('/proc/cpuinfo', 'utf8');
  const model = /^model name\s*:\s*(.+)$/m.exec(info)?.[1]?.trim() ?? 'unknown CPU';
  return `${model}, ${info.match(/^processor\s*:/gm)?.length ?? 0} CPUs`;
}

/** The machine's busy CPU time (all but idle and iowait) in seconds, summed over its cores: /proc/stat's first line. */
export function machineBusySeconds(): number {
  const [, user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]!
    .trim()
    .split(/\s+/)
    .map(Number);
  return (user! + nice! + system! + irq! + softirq! + steal!) / 100;
}
