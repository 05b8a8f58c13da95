// A container's log as log shippers find it: the /var/log/containers symlink (upstream's
// legacyLogSymlink, made in startContainer and removed with the pod's logs in
// removeContainerLog / the pod's cleanup). A failure only logs.
import { rmSync } from 'node:fs';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { createLogSymlink, legacyLogSymlink, removeLogSymlink } from '../container-logs/symlink.ts';
import type { PodRuntimeStatus } from '../container/types.ts';
import { podLogDir } from './pod-config.ts';
import { logRef } from '../podutil/podutil.ts';
import type { SyncContext } from './sync-context.ts';

/** The symlink to a started container's log file. */
export function linkLog(ctx: SyncContext, pod: Pod, name: string, containerId: string, logFile: string) {
  const link = legacyLogSymlink(pod.metadata!.name!, pod.metadata!.namespace!, name, containerId);
  try {
    createLogSymlink(logFile, link);
  } catch (e) {
    ctx.log.error('Failed to create legacy symbolic link', { ...logRef(pod), container: name, path: link, err: e });
  }
}

function unlinkLog(ctx: SyncContext, pod: Pod, name: string, containerId: string) {
  try {
    removeLogSymlink(legacyLogSymlink(pod.metadata!.name!, pod.metadata!.namespace!, name, containerId));
  } catch (e) {
    ctx.log.error('Failed to remove container log symlink', { ...logRef(pod), container: name, containerID: containerId, err: e });
  }
}

/** A removed pod's containers' symlinks and its log directory. */
export function removePodLogs(ctx: SyncContext, pod: Pod, status: PodRuntimeStatus) {
  for (const c of status.containers) unlinkLog(ctx, pod, c.name, c.id);
  rmSync(podLogDir(pod, ctx.node.podLogsDir), { recursive: true, force: true });
}
