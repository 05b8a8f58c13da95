import { test } from 'node:test';
import assert from 'node:assert/strict';
import { processSampler, type ProcessSource } from './processes.ts';

// Cgroups by path, each process's descriptors; pid 9 exited after cgroup.procs was read.
function source(): ProcessSource & { walked: number[] } {
  const procs: Record<string, number[]> = { '/pod/c1': [7, 8, 9], '/pod': [], '/kubelet': [3], '/gone': [] };
  const files: Record<number, { fds: number; sockets: number }> = {
    3: { fds: 40, sockets: 6 },
    7: { fds: 4, sockets: 1 },
    8: { fds: 3, sockets: 0 },
  };
  const src = {
    walked: [] as number[],
    pids: (path: string) => procs[path] ?? [],
    openFiles(pid: number) {
      src.walked.push(pid);
      return files[pid];
    },
    ulimits: (pid: number) => (pid === 9 ? undefined : [{ name: 'max_open_files', soft: 1000 + pid, hard: 2000 }]),
  };
  return src;
}

test("processSampler: cadvisor's processStatsFromProcs over a cgroup's own processes", () => {
  const src = source();
  const sample = processSampler(src);
  const cases: [name: string, path: string, isContainer: boolean, want: ReturnType<typeof sample>][] = [
    [
      "a container: its processes, their descriptors and sockets, the first one's ulimits; an exited one counts without descriptors",
      '/pod/c1',
      true,
      { processCount: 3, fdCount: 7, socketCount: 1, ulimits: [{ name: 'max_open_files', soft: 1007, hard: 2000 }] },
    ],
    [
      "a pod's cgroup holds no processes of its own (they are its containers')",
      '/pod',
      false,
      { processCount: 0, fdCount: 0, socketCount: 0, ulimits: [] },
    ],
    [
      'a system container: no ulimits (not a container, pid 0 upstream)',
      '/kubelet',
      false,
      { processCount: 1, fdCount: 40, socketCount: 6, ulimits: [] },
    ],
    ['the same cgroup again', '/kubelet', false, { processCount: 1, fdCount: 40, socketCount: 6, ulimits: [] }],
    ['a cgroup gone', '/gone', true, { processCount: 0, fdCount: 0, socketCount: 0, ulimits: [] }],
  ];
  for (const [name, path, isContainer, want] of cases) assert.deepEqual(sample(path, isContainer), want, name);
  assert.deepEqual(src.walked, [7, 8, 9, 3], "each process's descriptors walked once a sample");
  processSampler(src)('/kubelet', false);
  assert.deepEqual(src.walked, [7, 8, 9, 3, 3], 'a new sample walks again');
});
