// Which file holds a container's log, under /var/log/pods/NS_NAME_UID/CONTAINER/ATTEMPT.log.
// Pure. As upstream, `previous` means the instance the status shows as lastState: the one
// before the newest, or the newest itself when it exited and waits to run again (a crash
// loop shows it as lastState while the container is waiting).
import type { Pod } from 'kubernetes-types/core/v1.js';
import { podLogDir } from '../runtime/pod-config.ts';
import { shouldRestart } from '../runtime/actions.ts';
import type { PodRuntimeStatus } from '../container/types.ts';
import { isSidecar } from '../podutil/podutil.ts';

export function containerLogFile(
  pod: Pod,
  rt: PodRuntimeStatus | undefined,
  container: string,
  previous: boolean,
  podLogsDir: string,
): { path: string; containerID: string } | undefined {
  const instances = (rt?.containers ?? []).filter((c) => c.name === container);
  const [newest] = instances;
  const init = pod.spec?.initContainers?.find((c) => c.name === container);
  const restarts =
    newest?.phase === 'exited' &&
    (init ? isSidecar(init) || (newest.exitCode !== 0 && shouldRestart(pod, newest)) : shouldRestart(pod, newest));
  const inst = previous && !restarts ? instances[1] : newest;
  return inst && { path: `${podLogDir(pod, podLogsDir)}/${container}/${inst.attempt}.log`, containerID: inst.id };
}
