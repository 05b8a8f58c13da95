// cadvisor's process stats of a cgroup (container/libcontainer/handler.go
// processStatsFromProcs): the cgroup's own processes (its cgroup.procs, not its children's),
// their open descriptors and sockets from /proc/<pid>/fd, and the ulimits of the container's
// process. Pure over a ProcessSource; the collector makes one sampler a sample.
import type { ProcessSample, Ulimit } from './sample.ts';

export interface ProcessSource {
  /** PIDs directly in the cgroup. */
  pids(path: string): number[];
  openFiles(pid: number): { fds: number; sockets: number } | undefined;
  ulimits(pid: number): Ulimit[] | undefined;
}

export type ProcessSampler = (path: string, isContainer: boolean) => ProcessSample;

/**
 * A sampler for one sample. It remembers each process's descriptors, so that a process two
 * of the sample's cgroups list (one cgroup configured as two system containers) has its
 * descriptors walked once; a process is in one cgroup of a hierarchy, so there are no others.
 */
export function processSampler(src: ProcessSource): ProcessSampler {
  const files = new Map<number, { fds: number; sockets: number } | undefined>();
  return (path, isContainer) => {
    const pids = src.pids(path);
    let fdCount = 0;
    let socketCount = 0;
    for (const pid of pids) {
      if (!files.has(pid)) files.set(pid, src.openFiles(pid));
      // A process that exited since cgroup.procs was read counts, without descriptors, as upstream.
      const f = files.get(pid);
      fdCount += f?.fds ?? 0;
      socketCount += f?.sockets ?? 0;
    }
    // cadvisor reads the ulimits of the container's task pid; pids are listed in ascending
    // order on v1 (and mostly on v2), so the first is the container's init. A cgroup that is
    // no container's (a pod's, a system container) has none, as cadvisor's raw handler (pid 0).
    const first = pids[0];
    const ulimits = isContainer && first !== undefined ? (src.ulimits(first) ?? []) : [];
    return { processCount: pids.length, fdCount, socketCount, ulimits };
  };
}
