// Volume reconstruction at start, as upstream's reconciler (volumemanager/reconciler/reconstruct.go):
// every volume directory a previous kubelet left under ROOT/pods/UID/{volumes,volumeDevices}/PLUGIN/NAME
// (getVolumesFromPodDir) is read back once; those that cannot be (no plugin of that name, a CSI
// volume without its vol_data.json) are force cleaned once housekeeping finds their pod gone
// (cleanOrphanVolumes). kubelet-ts keeps no actual state of world to rebuild: a pod still wanted
// sets its volumes up again at its first sync, and a pod gone is torn down from what is on disk
// (gc/collector.ts). What reconstruction decides is kept for upstream's four counters and its log lines.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { blockVolDataPath } from '../csi/paths.ts';
import type { Logger } from '../log/log.ts';
import { escapeQualifiedName, podsDir, podVolumeDevicesDir, podVolumesDir } from '../podutil/pod-dirs.ts';
import { driverExecutable } from './plugins/flexvolume/drivers.ts';
import { flexDriverOfPluginDir } from './plugins/flexvolume/flex-volumes.ts';
import type { VolumePlugin } from './plugins/plugin.ts';
import { CSI, FLEX_VOLUME, LOCAL_VOLUME, PERSISTENT_CLAIM, pluginDirName } from './plugins/names.ts';

/** A volume directory found on disk (upstream's podVolume). */
export interface VolumeOnDisk {
  podUID: string;
  /** The plugin's directory name, escaped (kubernetes.io~csi; VENDOR~DRIVER for a flexVolume). */
  pluginDir: string;
  specName: string;
  /** Under volumeDevices (a raw block volume's map) rather than volumes. */
  block: boolean;
}

/** What reconstruction asks of the node: which FlexVolume drivers it has, and what a plugin reads back from beside a volume. */
export interface ReconstructionHost {
  /** The directories of the plugins kubelet-ts has (upstream's FindPluginByName), escaped. */
  pluginDirs: ReadonlySet<string>;
  /** A FlexVolume driver (VENDOR/DRIVER) is installed in volumePluginDir: upstream's flex plugins are named for their drivers. */
  flexDriver(driverName: string): boolean;
  /** upstream's ConstructVolumeSpec (ConstructBlockVolumeSpec): the plugin reads the volume back (a CSI volume's vol_data.json). */
  constructed(v: VolumeOnDisk): boolean;
}

// upstream's FindMapperPluginByName: the block volume plugins kubelet-ts has.
const BLOCK_PLUGIN_DIRS = new Set([CSI, LOCAL_VOLUME].map(pluginDirName));
const CSI_DIR = pluginDirName(CSI);

/** Pure: why the volume cannot be reconstructed, in upstream's words, or undefined (upstream's reconstructVolume). */
export function reconstructionError(v: VolumeOnDisk, host: ReconstructionHost): string | undefined {
  const pluginName = v.pluginDir.replaceAll('~', '/');
  const driver = flexDriverOfPluginDir(v.pluginDir);
  const known = v.block ? BLOCK_PLUGIN_DIRS.has(v.pluginDir) : host.pluginDirs.has(v.pluginDir) || (!!driver && host.flexDriver(driver));
  if (!known) {
    return v.block
      ? `could not find block volume plugin "${pluginName}" (spec.Name: "${v.specName}") pod "${v.podUID}" (UID: "${v.podUID}")`
      : `no volume plugin matched name: ${pluginName}`;
  }
  if (!host.constructed(v)) return `${pluginName}: plugin.ConstructVolumeSpec failed loading volume data of "${v.specName}"`;
  return undefined;
}

const subdirs = (dir: string): string[] => {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory() || e.isSymbolicLink())
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
};

/** upstream's getVolumesFromPodDir: every volume directory under ROOT/pods. */
export function volumesOnDisk(rootDir: string): VolumeOnDisk[] {
  const found: VolumeOnDisk[] = [];
  for (const podUID of subdirs(podsDir(rootDir))) {
    for (const [dir, block] of [
      [podVolumesDir(rootDir, podUID), false],
      [podVolumeDevicesDir(rootDir, podUID), true],
    ] as const) {
      for (const pluginDir of subdirs(dir)) {
        // upstream's ReadDirNoStat: a block volume's entry is a symlink to the device.
        let names: string[];
        try {
          names = readdirSync(join(dir, pluginDir)).sort();
        } catch {
          continue;
        }
        for (const specName of names) found.push({ podUID, pluginDir, specName, block });
      }
    }
  }
  return found;
}

/**
 * The node's answers: a driver's executable in volumePluginDir; the plugins' reconstruct (those
 * that keep something beside a volume: CSI, flexVolume) listing the volume, and a raw block CSI
 * volume's vol_data.json.
 */
export function hostOnDisk(
  rootDir: string,
  volumePluginDir: string,
  plugins: readonly Pick<VolumePlugin<never>, 'name' | 'reconstruct'>[],
): ReconstructionHost {
  const read = new Map<string, Set<string>>();
  return {
    // A claim's volumes are under its PersistentVolume's plugin, a flexVolume's under its driver's name.
    pluginDirs: new Set(plugins.filter((p) => p.name !== PERSISTENT_CLAIM && p.name !== FLEX_VOLUME).map((p) => pluginDirName(p.name))),
    flexDriver: (name) => existsSync(driverExecutable(volumePluginDir, escapeQualifiedName(name))),
    constructed(v) {
      if (v.block) return v.pluginDir !== CSI_DIR || existsSync(blockVolDataPath(rootDir, v.specName));
      const readers = plugins.filter((p) => p.reconstruct && pluginDirName(p.name) === v.pluginDir);
      if (!readers.length) return true;
      // Each reader lists the pod's whole directory: once per pod and plugin, not once per volume.
      const key = `${v.podUID}/${v.pluginDir}`;
      let names = read.get(key);
      if (!names) read.set(key, (names = new Set(readers.flatMap((p) => p.reconstruct!(rootDir, v.podUID).map((r) => r.specName)))));
      return names.has(v.specName);
    },
  };
}

export interface ReconstructionObserver {
  reconstructed(total: number, failed: number): void;
  forceCleaned(ok: boolean): void;
}

/**
 * Reconstructs the volumes on disk once (at the volume manager's start) and returns what a pod's
 * cleanup reports back: podCleaned(uid, ok) counts the pod's volumes that failed reconstruction as
 * force cleaned, once (upstream's cleanOrphanVolumes runs once, after the sources are ready).
 */
export function reconstructVolumes(
  found: readonly VolumeOnDisk[],
  host: ReconstructionHost,
  log: Logger,
  observe?: ReconstructionObserver,
): { podCleaned(uid: string, ok: boolean): void } {
  const failed = new Map<string, VolumeOnDisk[]>();
  for (const v of found) {
    const err = reconstructionError(v, host);
    if (!err) continue;
    log.info('Could not construct volume information', { podName: v.podUID, volumeSpecName: v.specName, err });
    failed.set(v.podUID, [...(failed.get(v.podUID) ?? []), v]);
  }
  observe?.reconstructed(
    found.length,
    [...failed.values()].reduce((n, vs) => n + vs.length, 0),
  );
  log.v(2, 'Volume reconstruction finished', { volumes: found.length });
  return {
    podCleaned(uid, ok) {
      const vs = failed.get(uid);
      if (!vs) return;
      failed.delete(uid);
      for (const v of vs) {
        log.info('Cleaning up mounts for volume that could not be reconstructed', { podName: uid, volumeSpecName: v.specName, ok });
        observe?.forceCleaned(ok);
      }
    },
  };
}
