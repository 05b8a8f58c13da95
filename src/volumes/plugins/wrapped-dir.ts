// The directory of a volume kept under the pod's (emptyDir, and the API-data plugins, which
// upstream builds on a wrapped emptyDir): ROOT/pods/UID/volumes/PLUGIN/NAME, world-writable,
// a tmpfs when memory-backed.
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import type { Pod, Volume } from 'kubernetes-types/core/v1.js';
import { podVolumeDir } from '../../podutil/pod-dirs.ts';
import { parseQuantity } from '../../resources/quantity.ts';
import { podCgroupLimits } from '../../resources/pod-cgroup.ts';
import { pluginDirName } from './names.ts';
import type { PodVolumeHost } from './pod-host.ts';

/**
 * Upstream's calculateEmptyDirMemorySize: node allocatable memory, or the pod cgroup's memory
 * limit (ResourceConfigForPod: pod-level, or every container's), or the volume's sizeLimit:
 * whichever is smallest.
 */
export function tmpfsSize(pod: Pod, sizeLimit: string | undefined, allocatableMemory: string | undefined): number | undefined {
  let size = allocatableMemory === undefined ? Infinity : (parseQuantity(allocatableMemory) ?? Infinity);
  const podLimit = podCgroupLimits(pod).memoryLimitBytes;
  if (podLimit !== undefined && podLimit > 0 && podLimit <= size) size = podLimit;
  const vol = sizeLimit === undefined ? undefined : parseQuantity(sizeLimit);
  if (vol !== undefined && vol > 0 && vol <= size) size = vol;
  return Number.isFinite(size) ? Math.floor(size) : undefined;
}

/** upstream's emptyDir SetUpAt (and the wrappers over it): the volume's directory, made once; mounted as tmpfs when memoryBacked. */
export async function wrappedVolumeDir(
  host: PodVolumeHost,
  pod: Pod,
  v: Volume,
  pluginName: string,
  memoryBacked: boolean,
): Promise<string> {
  const dir = podVolumeDir(host.rootDir, pod.metadata!.uid!, pluginDirName(pluginName), v.name);
  if (!existsSync(dir)) {
    mkdirSync(dir, { recursive: true });
    chmodSync(dir, 0o777); // emptyDir (and upstream's wrappers) are world-writable
  }
  if (memoryBacked) await host.mountTmpfs(dir, tmpfsSize(pod, v.emptyDir?.sizeLimit, host.allocatable()?.memory));
  return dir;
}
