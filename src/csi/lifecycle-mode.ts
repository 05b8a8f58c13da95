// Which lifecycle a CSI volume has, and whether its driver takes it (upstream's
// getVolumeLifecycleMode and csiMountMgr.supportsVolumeLifecycleMode, csi_plugin.go and
// csi_mounter.go): a pod's inline `csi` volume is Ephemeral, a PersistentVolume's is Persistent.
// The CSIDriver object's volumeLifecycleModes says which a driver serves; a driver without one
// serves only Persistent volumes.
import type { CSIDriver } from 'kubernetes-types/storage/v1.js';

export type LifecycleMode = 'Persistent' | 'Ephemeral';

/** Go's %q of a []string: ["a" "b"]. */
const goQuotedList = (xs: readonly string[]) => `[${xs.map((x) => JSON.stringify(x)).join(' ')}]`;

/**
 * Pure: upstream's supportsVolumeLifecycleMode, the reason the driver refuses a volume of this
 * mode (upstream's message), or undefined when it takes it. The CSIDriver's volumeLifecycleModes
 * defaults to [Persistent] (the apiserver's default).
 */
export function lifecycleModeProblem(driver: string, csiDriver: CSIDriver | undefined, mode: LifecycleMode): string | undefined {
  if (!csiDriver)
    return mode === 'Persistent' ? undefined : `volume mode "${mode}" not supported by driver ${driver} (no CSIDriver object)`;
  const modes = csiDriver.spec?.volumeLifecycleModes ?? ['Persistent'];
  if (modes.includes(mode)) return undefined;
  return `volume mode "${mode}" not supported by driver ${driver} (only supports ${goQuotedList(modes)})`;
}
