// Which file holds a container's log: the newest instance's, or with `previous` the
// one before it, under /var/log/pods/NS_NAME_UID/CONTAINER/ATTEMPT.log. Pure.
import type { Pod } from 'kubernetes-types/core/v1.js';
import { podLogDir } from '../runtime/pod-config.ts';
import type { PodRuntimeStatus } from '../runtime/types.ts';

export function containerLogFile(pod: Pod, rt: PodRuntimeStatus | undefined, container: string, previous: boolean, podLogsDir: string):
  { path: string; containerID: string } | undefined {
  const instances = (rt?.containers ?? []).filter((c) => c.name === container);
  const inst = instances[previous ? 1 : 0];
  return inst && { path: `${podLogDir(pod, podLogsDir)}/${container}/${inst.attempt}.log`, containerID: inst.id };
}
