// What the volume manager's metrics say of its state: upstream's pkg/kubelet/volumemanager/metrics
// (volume_manager_total_volumes) and the plugin naming of pkg/volume/util/metrics.go. Pure: the
// volume manager hands over plain data at scrape time, src/metrics renders it.
import type { PersistentVolume, Volume } from 'kubernetes-types/core/v1.js';
import { byCodeUnits } from '../podutil/podutil.ts';
import { FLEX_VOLUME } from './plugins/names.ts';

/**
 * upstream's GetFullQualifiedPluginNameForVolume: a CSI volume (inline, or a PV of the CSI plugin)
 * is named with its driver, `kubernetes.io/csi:hostpath.csi.k8s.io`; any other by its plugin alone,
 * a flexVolume's plugin being its driver (upstream's flex plugins are named VENDOR/DRIVER).
 */
export function qualifiedPluginName(plugin: string, spec: { volume?: Volume; pv?: PersistentVolume }): string {
  const flex = spec.pv ? spec.pv.spec?.flexVolume?.driver : spec.volume?.flexVolume?.driver;
  if (plugin === FLEX_VOLUME && flex) return flex;
  const driver = spec.volume?.csi?.driver ?? spec.pv?.spec?.csi?.driver;
  return driver === undefined ? plugin : `${plugin}:${driver}`;
}

/** One pod as the volume manager holds it: the qualified plugin of each of its volumes. */
export interface PodVolumeState {
  /** Each volume the pod wants whose plugin is known (upstream's desired state of world: one entry per pod and volume). */
  desired: string[];
  /** Each volume set up for the pod (upstream's actual state of world's mounted volumes). */
  mounted: string[];
}

export type WorldState = 'actual_state_of_world' | 'desired_state_of_world';

export interface VolumeCount {
  plugin_name: string;
  state: WorldState;
  count: number;
}

/**
 * Pure: upstream's totalVolumesCollector.getVolumeCount: volumes counted per plugin in each state,
 * a volume once per pod that has it; a plugin with none in a state has no series there.
 * Sorted (state, then plugin) so that the series come in a stable order.
 */
export function totalVolumes(pods: readonly PodVolumeState[]): VolumeCount[] {
  const counts = new Map<string, VolumeCount>();
  const add = (state: WorldState, plugin: string) => {
    const key = `${state}\0${plugin}`;
    const c = counts.get(key);
    if (c) c.count++;
    else counts.set(key, { plugin_name: plugin || 'N/A', state, count: 1 });
  };
  for (const p of pods) {
    for (const plugin of p.mounted) add('actual_state_of_world', plugin);
    for (const plugin of p.desired) add('desired_state_of_world', plugin);
  }
  return [...counts.values()].sort((a, b) => byCodeUnits(a.state, b.state) || byCodeUnits(a.plugin_name, b.plugin_name));
}

/**
 * The kubelet's volume operations as upstream's operation_generator names them (its
 * OperationCompleteHook's operationName), those kubelet-ts performs: a set-up (MountVolume, with
 * the CSI stage and an offline expansion in it), a raw block volume's (MapVolume), a pod's volume
 * released (UnmountVolume, UnmapVolume), a CSI volume unstaged (UnmountDevice, UnmapDevice) and a
 * mounted claim expanded online (ExpandInUseVolume).
 */
export type VolumeOperation =
  | 'volume_mount'
  | 'map_volume'
  | 'volume_unmount'
  | 'unmap_volume'
  | 'unmount_device'
  | 'unmap_device'
  | 'volume_fs_resize';

/**
 * One operation done: upstream's OperationCompleteHook (storage_operation_duration_seconds; status
 * success or fail-unknown, migrated false: kubelet-ts has no in-tree plugin to migrate) and, for a
 * mount that succeeded, RecordOperationLatencyMetric's overall_volume_mount (volume_operation_total_seconds)
 * in sinceRequested: seconds since the volume was first wanted for the pod.
 */
export interface VolumeOperationDone {
  plugin: string;
  operation: VolumeOperation;
  seconds: number;
  ok: boolean;
  sinceRequested?: number;
}
export type VolumeOperationObserver = (o: VolumeOperationDone) => void;

/** Runs fn as the operation, and reports it to observe when there is one, failed or not. */
export async function timedOperation<T>(
  observe: VolumeOperationObserver | undefined,
  plugin: string,
  operation: VolumeOperation,
  fn: () => Promise<T>,
): Promise<T> {
  if (!observe) return fn();
  const started = performance.now();
  let ok = false;
  try {
    const r = await fn();
    ok = true;
    return r;
  } finally {
    observe({ plugin, operation, seconds: (performance.now() - started) / 1000, ok });
  }
}

/** Pure: a set-up of a volume the pod hands to containers as a device is upstream's MapVolume, any other its MountVolume. */
export function setUpOperation(
  pod: { spec?: { containers?: { volumeDevices?: { name: string }[] }[]; initContainers?: { volumeDevices?: { name: string }[] }[] } },
  volume: string,
): VolumeOperation {
  const all = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  return all.some((c) => c.volumeDevices?.some((d) => d.name === volume)) ? 'map_volume' : 'volume_mount';
}
