// Which sandboxes and containers the stats report on, with upstream's rules
// (removeTerminatedPods, removeTerminatedContainers in pkg/kubelet/stats): exited
// containers use nothing, and a pod that was recreated is reported once.
import type { ContainerInfo, SandboxInfo } from './runtime-source.ts';

/** Pure: per pod, its ready sandboxes; a pod with none ready keeps only its newest. */
export function liveSandboxes(sandboxes: SandboxInfo[]): SandboxInfo[] {
  const byPod = new Map<string, SandboxInfo[]>();
  for (const s of [...sandboxes].sort((a, b) => a.createdAtMs - b.createdAtMs)) {
    const k = `${s.namespace}/${s.name}/${s.uid}`;
    byPod.set(k, [...(byPod.get(k) ?? []), s]);
  }
  return [...byPod.values()].flatMap((all) => {
    const ready = all.filter((s) => s.ready);
    return ready.length ? ready : [all[all.length - 1]!];
  });
}

/** Pure: the running containers. */
export function liveContainers(containers: ContainerInfo[]): ContainerInfo[] {
  return containers.filter((c) => c.running);
}
