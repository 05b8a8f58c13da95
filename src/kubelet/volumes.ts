// Volumes and the plugins that register on ROOT/plugins_registry (upstream's volume manager and
// plugin manager): the pods' volumes (src/volumes), claims and their PersistentVolumes
// (hostPath, local, CSI, flexVolume), CSI drivers whose node ID and topology go on the Node and its
// CSINode, the FlexVolume drivers of volumePluginDir, and the DRA drivers' registration handed
// over by the container manager.
import type { ApiClient } from '../apiserver/client.ts';
import { CsiDrivers, CsiRegistrationHandler } from '../csi/drivers.ts';
import { nodeInfoManager } from '../csi/node-info-manager.ts';
import { CsiNodeUpdater } from '../csi/node-updater.ts';
import { CSI_TIMEOUT_MS } from '../csi/client.ts';
import { reflector } from '../apiserver/reflector.ts';
import { apiPath } from '../apiserver/paths.ts';
import type { CSIDriver } from 'kubernetes-types/storage/v1.js';
import { CsiVolumes } from '../csi/volumes.ts';
import { apiSecretGetter } from '../images/pull-secrets.ts';
import type { Recorder } from '../events/recorder.ts';
import { logger, type Logger } from '../log/log.ts';
import { pluginManagerMetrics, reconstructionMetrics, volumeOperationMetrics } from './observers.ts';
import type { CurrentNode } from '../node/current-node.ts';
import { CSI_PLUGIN, DRA_PLUGIN } from '../plugin-manager/handler.ts';
import type { PluginHandler } from '../plugin-manager/handler.ts';
import { PluginManager } from '../plugin-manager/manager.ts';
import { PersistentVolumes } from '../volumes/persistent.ts';
import { FlexDrivers } from '../volumes/plugins/flexvolume/drivers.ts';
import { FlexVolumes } from '../volumes/plugins/flexvolume/flex-volumes.ts';
import { apiClaimSources, apiVolumeSources, type ChangeDetection } from '../volumes/sources.ts';
import { objectTTLMs } from '../apiserver/ttl-objects.ts';
import { TokenManager } from '../volumes/tokens.ts';
import { hostOnDisk, reconstructVolumes, volumesOnDisk } from '../volumes/reconstruct.ts';
import { persistentVolumePlugins, podVolumePlugins } from '../volumes/plugins/registry.ts';
import { VolumeManager } from '../volumes/volume-manager.ts';
import { totalVolumes } from '../volumes/volume-metrics.ts';
import { registerVolumeManagerTotals } from '../metrics/metrics.ts';
import type { HostSystem } from './host-system.ts';
import type { KubeletOptions } from './options.ts';

export type Volumes = ReturnType<typeof volumesAndPlugins>;

export function volumesAndPlugins(
  o: KubeletOptions,
  d: {
    api: ApiClient;
    node: CurrentNode;
    /** The DRA drivers' registration (src/dra), built with the container manager. */
    draPlugins: PluginHandler;
    /** A new set of volumes in use goes out with the node status at once. */
    inUseChanged: () => void;
    /** Node expansion's events on pods and claims. */
    events?: Recorder;
    /** How volumes are mounted (the host's, or a hollow node's that mounts nothing). */
    mounts: Pick<HostSystem, 'mountTmpfs' | 'bindMount'>;
    log: Logger;
  },
) {
  const { rootDir, nodeName } = o;
  const csiDrivers = new CsiDrivers();
  const csiNodeInfo = nodeInfoManager(d.api, nodeName);
  const plugins = new PluginManager({ rootDir, log: logger('plugin_manager'), observe: pluginManagerMetrics });
  // MutableCSINodeAllocatableCount (GA, locked on): CSIDrivers with nodeAllocatableUpdatePeriodSeconds.
  const csiNodeUpdater = new CsiNodeUpdater({
    registered: () => csiDrivers.names(),
    nodeGetInfo: (name) => csiDrivers.client(name).nodeGetInfo(CSI_TIMEOUT_MS),
    updateDriver: (name, info) => csiNodeInfo.updateDriver(name, info),
    log: logger('csi'),
  });
  let csiDriverWatch: { stop(): void } | undefined;
  plugins.addHandler(
    CSI_PLUGIN,
    new CsiRegistrationHandler({ drivers: csiDrivers, nodeInfo: csiNodeInfo, log: logger('csi'), changed: () => csiNodeUpdater.sync() }),
  );
  plugins.addHandler(DRA_PLUGIN, d.draPlugins);
  // A re-registered Node has a new UID: so must its CSINode's owner.
  d.node.onNewUID(() => void csiNodeInfo.initialize().catch((e) => d.log.error('Failed to initialize the CSINode', { err: e })));

  const strategy = o.config.configMapAndSecretChangeDetectionStrategy as ChangeDetection['strategy'];
  const sources = apiVolumeSources(d.api, logger('volumes'), { strategy, ttlMs: () => objectTTLMs(d.node.get()) });
  const claimSources = apiClaimSources(d.api);
  // One token manager, as upstream's kubelet has: projected volumes' tokens and CSIDriver tokenRequests'.
  const tokens = new TokenManager(sources.requestToken);
  const csi = new CsiVolumes({
    rootDir,
    nodeName,
    drivers: csiDrivers,
    secret: apiSecretGetter(d.api),
    log: logger('csi'),
    observe: volumeOperationMetrics,
    serviceAccountToken: (r) =>
      tokens.tokenStatus({
        namespace: r.namespace,
        serviceAccount: r.serviceAccount,
        audience: r.audience,
        expirationSeconds: r.expirationSeconds,
        podName: r.podName,
        podUID: r.podUID,
      }),
  });
  // FlexVolume drivers (volumePluginDir/VENDOR~DRIVER/DRIVER), inline and as PersistentVolumes.
  const flexDrivers = new FlexDrivers({ dir: o.config.volumePluginDir, log: logger('flexvolume') });
  const flex = new FlexVolumes({
    rootDir,
    drivers: flexDrivers,
    secret: apiSecretGetter(d.api),
    mounts: { bindMount: d.mounts.bindMount },
    volumesAttached: () => d.node.get()?.status?.volumesAttached ?? [],
    nodeName,
    controllerAttachDetach: o.config.enableControllerAttachDetach,
    inUseChanged: d.inUseChanged,
    log: logger('flexvolume'),
  });
  // The volumes a previous kubelet left, read back once at start (upstream's reconstructVolumes).
  const reconstruction = reconstructVolumes(
    volumesOnDisk(rootDir),
    hostOnDisk(rootDir, o.config.volumePluginDir, [...podVolumePlugins, ...persistentVolumePlugins]),
    logger('volumes'),
    reconstructionMetrics,
  );
  // Claims and their PersistentVolumes: hostPath, local, CSI, flexVolume (src/volumes/persistent.ts).
  const persistent = new PersistentVolumes({
    rootDir,
    nodeName,
    observe: volumeOperationMetrics,
    sources: claimSources,
    csi,
    volumesAttached: () => (d.node.get()?.status?.volumesAttached ?? []).map((v) => v.name),
    controllerAttachDetach: o.config.enableControllerAttachDetach,
    attachRequired: (driver) => csiNodeUpdater.csiDriver(driver)?.spec?.attachRequired !== false,
    inUseChanged: d.inUseChanged,
    bindMount: d.mounts.bindMount,
    resourceExhausted: (driver, va) => csiNodeUpdater.resourceExhausted(driver, va),
    flex,
    log: logger('volumes'),
    events: d.events,
  });
  const volumes = new VolumeManager({
    rootDir,
    sources,
    log: logger('volumes'),
    nodeAllocatable: () => d.node.allocatable(),
    persistent,
    tokens,
    mountTmpfs: d.mounts.mountTmpfs,
    observe: volumeOperationMetrics,
    // A pod's inline csi volumes (CSI ephemeral volumes).
    csi: {
      csiDriver: (name) => claimSources.csiDriver(name),
      publishInline: (pod, v, driver, remount) => csi.publishInline(pod, v, driver, remount),
      unpublish: (uid, specName) => csi.unpublish(uid, specName),
    },
    flex,
  });
  registerVolumeManagerTotals(() => totalVolumes(volumes.volumeState()));
  return {
    volumes,
    persistent,
    csiDrivers,
    /** The Node's volumesInUse: attachable claims' (CSI) and attachable flexVolumes'. */
    volumesInUse: () => [...new Set([...persistent.volumesInUse(), ...flex.volumesInUse()])].sort(),
    markReportedInUse(names: string[]) {
      persistent.markReportedInUse(names);
      flex.markReportedInUse(names);
    },
    /** What housekeeping releases of a pod that is gone before its mounts go: claims (CSI unpublish, unstage), flexVolumes (the driver's unmount). */
    releaseOrphan: async (uid: string) => {
      let failed: unknown;
      await flex.tearDown(uid).catch((e: unknown) => (failed = e));
      await persistent.release(uid);
      if (failed) throw failed;
    },
    /** A pod that is gone with nothing mounted: a flexVolume driver may still hold a plain directory, which its unmount releases. */
    releaseUnmounted: (uid: string) => flex.tearDown(uid),
    /** Housekeeping's first try at cleaning up a pod that is gone: its volumes that failed reconstruction are force cleaned. */
    volumesCleaned: reconstruction.podCleaned,
    /** Starts watching ROOT/plugins_registry once the node status runs (a driver's registration updates the Node). */
    startPlugins: () => {
      // upstream's InitPlugins probes the FlexVolume drivers (each driver's init) at start.
      flexDrivers.start().catch((e) => d.log.error('Failed to probe the FlexVolume drivers', { err: e }));
      // upstream's csiNodeUpdater runs on the CSIDriver informer (a node may list and watch CSIDrivers).
      csiDriverWatch ??= reflector<CSIDriver>(
        d.api,
        apiPath({ group: 'storage.k8s.io', resource: 'csidrivers' }),
        'CSIDrivers',
        {
          list: (items) => csiNodeUpdater.listed(items),
          // (attachRequired may have changed: volumesInUse with it.)
          event: (type, obj) => {
            csiNodeUpdater.event(type, obj);
            d.inUseChanged();
          },
        },
        logger('csi'),
      );
      return plugins.start();
    },
    stop() {
      csiDriverWatch?.stop();
      csiNodeUpdater.stop();
      sources.stop();
      plugins.stop();
    },
  };
}
