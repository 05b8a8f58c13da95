// The volume manager: sets up a pod's volumes under ROOT/pods/UID/volumes/PLUGIN/NAME
// before its containers start, keeps configMap, secret, downwardAPI and projected
// contents current while the pod runs, hands each container its mounts, and tears the
// volumes down when the pod is removed. Each volume type is a plugin (plugins/registry.ts),
// which this finds by the volume's spec; the files an API-data volume holds are decided in
// payload.ts, and written in atomic-writer.ts.
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import type { Container, Pod, Volume } from 'kubernetes-types/core/v1.js';
import type { Logger } from '../log/log.ts';
import { usedVolumes } from './claims.ts';
import { bindSubPath, cleanSubPaths, prepareSubPath, type SubPathBind, subPathTarget } from './subpath.ts';
import { runCommand } from '../mount/command.ts';
import { mountTmpfs, unmountAll, mountPointsUnder } from '../mount/mountinfo.ts';
import { type Mount, containerMounts, hostNetworkHostsFile, managedHostsFile, subPathFailure } from './mounts.ts';
import { podHostNameAndDomain } from '../podutil/hostname.ts';
import { podContainerDir, podDir, podEtcHostsPath, podSubPathsDir, podVolumesDir } from '../podutil/pod-dirs.ts';
import type { VolumeSources } from './sources.ts';
import { TokenManager } from './tokens.ts';
import type { PersistentPath, PersistentVolumes } from './persistent.ts';
import type { ImageSpec } from '../cri/generated/runtime/v1/ImageSpec.ts';
import { type VolumePlugin, VolumeOperationError, findPlugin } from './plugins/plugin.ts';
import type { FlexVolumeOps } from './plugins/flexvolume/flex-volumes.ts';
import type { InlineCsi, PodVolumeHost } from './plugins/pod-host.ts';
import { podVolumePlugins } from './plugins/registry.ts';
import { AttachLimitExceededError } from '../csi/node-updater.ts';
import { CSI, PERSISTENT_CLAIM } from './plugins/names.ts';
import {
  type PodVolumeState,
  qualifiedPluginName,
  setUpOperation,
  type VolumeOperation,
  type VolumeOperationObserver,
} from './volume-metrics.ts';

/** Re-exported for its tests' sake: the tmpfs size of a memory-backed volume (plugins/wrapped-dir.ts). */
export { tmpfsSize } from './plugins/wrapped-dir.ts';

export interface SetUpResult {
  /** Every volume is set up: the containers may start. */
  ready: boolean;
  /** Volumes that failed this time, with upstream's event message (and reason, when not FailedMount). */
  failed: { volume: string; message: string; reason?: string }[];
  /** When to try again, after a failure (growing back-off). */
  retryAfterMs?: number;
  /** The pod is to be rejected (phase Failed) for this reason: its volumes cannot be attached on this node. */
  rejection?: { reason: string; message: string };
}

/** upstream's podAttachAndMountTimeout: how long WaitForAttachAndMount waits before it gives up. */
export const ATTACH_AND_MOUNT_TIMEOUT_MS = 2 * 60_000 + 3000;
export const VOLUME_ATTACHMENT_LIMIT_EXCEEDED = 'VolumeAttachmentLimitExceeded';

/** Go's fmt of a []string: [a b]. */
const goList = (names: string[]) => `[${names.join(' ')}]`;

/**
 * Pure: upstream's WaitForAttachAndMount giving up on a pod with MutableCSINodeAllocatableCount:
 * once the volumes waited ATTACH_AND_MOUNT_TIMEOUT_MS, a volume that waits on an attachment failed
 * with ResourceExhausted (VerifyExhaustedResource) rejects the pod with VolumeAttachLimitExceededError's
 * message. unmounted: the pod's volumes not set up; unattached: those waiting on an attachment.
 * Upstream lists the volumes it could not process (a claim not bound, ...) apart; here they are
 * among the unmounted, and that list is empty.
 */
export function attachLimitRejection(v: {
  waitingSince: number | undefined;
  now: number;
  unmounted: string[];
  unattached: string[];
  exhausted: boolean;
}): { reason: string; message: string } | undefined {
  if (!v.exhausted || v.waitingSince === undefined || v.now - v.waitingSince < ATTACH_AND_MOUNT_TIMEOUT_MS) return undefined;
  return {
    reason: VOLUME_ATTACHMENT_LIMIT_EXCEEDED,
    message:
      'Node has reached its volume attachment limit, rejecting pod. ' +
      `unmounted volumes=${goList([...v.unmounted].sort())}, unattached volumes=${goList([...v.unattached].sort())}, ` +
      'failed to process volumes=[]: context deadline exceeded',
  };
}

interface PodVolumes {
  paths: Map<string, PersistentPath>;
  refreshedAt: Map<string, number>;
  failures: number;
  /** Volumes whose refresh is still running, past the sync that began it. */
  refreshing: Set<string>;
  /** Failures of refreshes that ended after their sync returned. */
  late: SetUpResult['failed'];
  /** When each volume's size was last checked for node expansion, and the checks under way. */
  resizedAt: Map<string, number>;
  resizing: Set<string>;
  /** Since when the pod's volumes are not all set up (upstream's WaitForAttachAndMount's wait). */
  waitingSince?: number;
  /** Volumes whose set-up waits on an attachment that failed with ResourceExhausted (AttachLimitExceededError). */
  attachLimited: Set<string>;
  /** The pod's volumes, as its last sync had them (the desired state of world). */
  volumes: readonly Volume[];
  /** When each volume was first wanted (Date.now ms; upstream's MountRequestTime, for overall_volume_mount). */
  requestedAt: Map<string, number>;
}

/** A failed set-up is tried again after 0.5 s, doubling: upstream's nestedpendingoperations initialDurationBeforeRetry. */
const RETRY_INITIAL_MS = 500;
/** How long a sync waits on the refresh of a volume that has its contents already. */
const REFRESH_WAIT_MS = 2000;
const RETRY_MAX_MS = 32_000;
/**
 * How often, at most, a mounted CSI claim's size is checked for online expansion (two GETs each):
 * at the pod's syncs, as upstream's ReprocessPod from WaitForAttachAndMount.
 */
const RESIZE_CHECK_MS = 10_000;

/**
 * Pure: whether a sync sets the volume up: when it is not yet, or when it is to be set up again
 * (upstream's remount at each syncPod, MarkRemountRequired of a RequiresRemount plugin: the
 * API-data volumes, and a CSI volume whose CSIDriver says requiresRepublish) and a refresh period
 * has passed since it last was (upstream: every pod sync, about once a minute, and on its events).
 */
export function setUpDue(v: {
  done: boolean;
  /** The plugin's requiresRemount (configMap, secret, downwardAPI, projected). */
  pluginRemount: boolean;
  /** The volume's own, as its set-up found it (PersistentPath.requiresRemount). */
  volumeRemount: boolean;
  refreshedAt: number | undefined;
  now: number;
  refreshMs: number;
}): boolean {
  if (!v.done) return true;
  if (!v.pluginRemount && !v.volumeRemount) return false;
  return v.now - (v.refreshedAt ?? 0) >= v.refreshMs;
}

export class VolumeManager {
  readonly #rootDir: string;
  readonly #sources: VolumeSources;
  readonly #log: Logger;
  readonly #refreshMs: number;
  readonly #tokens: TokenManager;
  readonly #pods = new Map<string, PodVolumes>();
  readonly #hostsFile: string;
  /** What the plugins are handed (plugins/pod-host.ts). */
  readonly #host: PodVolumeHost;
  readonly #observe?: VolumeOperationObserver;
  readonly #bindSubPath: (b: SubPathBind) => Promise<void>;

  constructor(d: {
    rootDir: string;
    sources: VolumeSources;
    log: Logger;
    /** The node's allocatable resources (defaults of resourceFieldRef limits and tmpfs sizes). */
    nodeAllocatable?: () => Record<string, string> | undefined;
    /** How often API-data volumes are rewritten from their sources (upstream: about a minute). */
    refreshMs?: number;
    /** The node's hosts file, which hostNetwork pods see. */
    hostsFile?: string;
    /** The tmpfs mount (tests replace it). */
    mountTmpfs?: (dir: string, sizeBytes?: number) => Promise<void>;
    /** persistentVolumeClaim and ephemeral volumes (persistent.ts); undefined: refused as unsupported. */
    persistent?: Pick<PersistentVolumes, 'setUp' | 'release'> & Partial<Pick<PersistentVolumes, 'resize' | 'pluginName'>>;
    /** A pod's inline `csi` volumes (plugins/csi-inline.ts); undefined: refused. */
    csi?: InlineCsi;
    /** A pod's `flexVolume` volumes (plugins/flexvolume); undefined: refused. */
    flex?: FlexVolumeOps;
    /** The kubelet's token manager, shared with CSI's tokenRequests; one of its own by default. */
    tokens?: TokenManager;
    /** Set-ups and the teardowns of other than CSI volumes (src/csi times its own), for storage_operation_duration_seconds. */
    observe?: VolumeOperationObserver;
    /** A subPath's bind mount (subpath.ts bindSubPath; tests replace it). */
    bindSubPath?: (b: SubPathBind) => Promise<void>;
  }) {
    this.#bindSubPath = d.bindSubPath ?? ((b) => bindSubPath(b, runCommand));
    this.#observe = d.observe;
    this.#rootDir = d.rootDir;
    this.#sources = d.sources;
    this.#log = d.log;
    this.#refreshMs = d.refreshMs ?? 30_000;
    this.#hostsFile = d.hostsFile ?? '/etc/hosts';
    this.#tokens = d.tokens ?? new TokenManager(d.sources.requestToken);
    this.#host = {
      rootDir: d.rootDir,
      sources: d.sources,
      tokens: this.#tokens,
      log: d.log,
      allocatable: d.nodeAllocatable ?? (() => undefined),
      mountTmpfs: d.mountTmpfs ?? mountTmpfs,
      persistent: d.persistent,
      csi: d.csi,
      flex: d.flex,
    };
  }

  /**
   * Sets up the pod's volumes that are not yet, and refreshes the API-data ones that are
   * due. A volume that was set up once stays usable when its refresh fails, as upstream.
   */
  async setUp(pod: Pod, now = Date.now()): Promise<SetUpResult> {
    const uid = pod.metadata!.uid!;
    let state = this.#pods.get(uid);
    if (!state)
      this.#pods.set(
        uid,
        (state = {
          paths: new Map(),
          refreshedAt: new Map(),
          failures: 0,
          refreshing: new Set(),
          late: [],
          resizedAt: new Map(),
          resizing: new Set(),
          attachLimited: new Set(),
          volumes: [],
          requestedAt: new Map(),
        }),
      );
    // Only the volumes a container mounts or maps (upstream's desiredStateOfWorldPopulator skips
    // the others: "Skipping unused volume"); the pod waits for those only (getExpectedVolumes).
    const volumes = usedVolumes(pod);
    state.volumes = volumes;
    for (const v of state.volumes) if (!state.requestedAt.has(v.name)) state.requestedAt.set(v.name, Date.now());
    const failed: SetUpResult['failed'] = [];
    // A refresh that outlived an earlier sync reports its failure now.
    failed.push(...state.late.splice(0));
    // Side by side: a pod's start waits on the slowest volume, not on their sum.
    await Promise.all(
      volumes.map(async (v) => {
        const plugin = findPlugin(podVolumePlugins, { volume: v, readOnly: false });
        const done = state.paths.has(v.name);
        if (done && plugin?.resize) this.#checkResize(pod, v, plugin, state, now);
        // Only the API-data volumes (RequiresRemount) and requiresRepublish CSI ones are set up again.
        const due = setUpDue({
          done,
          pluginRemount: !!plugin?.requiresRemount,
          volumeRemount: !!state.paths.get(v.name)?.requiresRemount,
          refreshedAt: state.refreshedAt.get(v.name),
          now,
          refreshMs: this.#refreshMs,
        });
        if (!due) return;
        if (state.refreshing.has(v.name)) return;
        let returned = false;
        const work = this.#setUpOrRefresh(pod, v, plugin, state, now).then((message) => {
          state.refreshing.delete(v.name);
          if (message) (returned ? state.late : failed).push({ volume: v.name, message });
        });
        if (!done) return work;
        // A refresh keeps the sync waiting a moment at most: the volume has its contents, and an
        // apiserver out of reach would hold every sync for its request timeout (upstream's
        // reconciler refreshes apart from syncPod).
        state.refreshing.add(v.name);
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([work, new Promise((r) => (timer = setTimeout(r, REFRESH_WAIT_MS)))]);
        clearTimeout(timer);
        returned = true;
      }),
    );
    const order = new Map(volumes.map((v, i) => [v.name, i]));
    failed.sort((a, b) => order.get(a.volume)! - order.get(b.volume)!);
    const ready = volumes.every((v) => state.paths.has(v.name));
    if (ready) {
      state.failures = 0;
      state.waitingSince = undefined;
      return { ready, failed };
    }
    state.waitingSince ??= now;
    const retryAfterMs = Math.min(RETRY_MAX_MS, RETRY_INITIAL_MS * 2 ** state.failures);
    state.failures++;
    const rejection = attachLimitRejection({
      waitingSince: state.waitingSince,
      now,
      unmounted: volumes.filter((v) => !state.paths.has(v.name)).map((v) => v.name),
      unattached: [...state.attachLimited],
      exhausted: state.attachLimited.size > 0,
    });
    return { ready, failed, retryAfterMs, ...(rejection && { rejection }) };
  }

  /**
   * Online expansion, in the background of the syncs (upstream's reconciler expands apart from
   * syncPod): a failure comes with the next sync as a VolumeResizeFailed event, with upstream's
   * message of doOnlineExpansion.
   */
  #checkResize(pod: Pod, v: Volume, plugin: VolumePlugin<PodVolumeHost>, state: PodVolumes, now: number): void {
    if (state.resizing.has(v.name) || now - (state.resizedAt.get(v.name) ?? 0) < RESIZE_CHECK_MS) return;
    state.resizing.add(v.name);
    state.resizedAt.set(v.name, now);
    plugin.resize!(this.#host, pod, { volume: v, readOnly: false })
      .catch((e: Error) => {
        const message = `NodeExpandVolume.NodeExpandVolume failed for volume "${v.name}" : ${e.message}`;
        this.#log.warn('NodeExpandVolume failed', {
          pod: `${pod.metadata!.namespace}/${pod.metadata!.name}`,
          volume: v.name,
          err: e.message,
        });
        state.late.push({ volume: v.name, message, reason: 'VolumeResizeFailed' });
      })
      .finally(() => state.resizing.delete(v.name));
  }

  /** Sets up or refreshes one volume; the failure's message, if it failed. */
  async #setUpOrRefresh(
    pod: Pod,
    v: Volume,
    plugin: VolumePlugin<PodVolumeHost> | undefined,
    state: PodVolumes,
    now: number,
  ): Promise<string | undefined> {
    const uid = pod.metadata!.uid!;
    const done = state.paths.has(v.name);
    const started = performance.now();
    try {
      if (!plugin) throw new Error('volume type is not supported by kubelet-ts');
      const path: PersistentPath = await plugin.setUp(this.#host, pod, { volume: v, readOnly: false, remount: done });
      this.#observeSetUp(pod, v, state, started, true);
      if (!done)
        this.#log.info('MountVolume.SetUp succeeded', {
          pod: `${pod.metadata!.namespace}/${pod.metadata!.name}`,
          podUID: uid,
          volume: v.name,
        });
      state.paths.set(v.name, path);
      state.refreshedAt.set(v.name, now);
      state.attachLimited.delete(v.name);
      return undefined;
    } catch (e) {
      // An attachment that failed with ResourceExhausted (src/csi/node-updater.ts) may reject the pod.
      if (e instanceof AttachLimitExceededError) state.attachLimited.add(v.name);
      else state.attachLimited.delete(v.name);
      this.#observeSetUp(pod, v, state, started, false);
      this.#log.warn('MountVolume.SetUp failed', {
        pod: `${pod.metadata!.namespace}/${pod.metadata!.name}`,
        podUID: uid,
        volume: v.name,
        err: (e as Error).message,
      });
      // A failed refresh is tried again at the next sync, not after a full period.
      state.refreshedAt.delete(v.name);
      const operation = e instanceof VolumeOperationError ? e.operation : 'MountVolume.SetUp';
      return `${operation} failed for volume "${v.name}" : ${(e as Error).message}`;
    }
  }

  /**
   * upstream's MountVolume (MapVolume) operation's metrics: its duration and status, and on success
   * the time since the volume was first wanted (overall_volume_mount, remounts included as upstream).
   * A volume whose plugin is not known (an unresolved claim, an unsupported type) is not observed:
   * upstream never starts an operation for one.
   */
  #observeSetUp(pod: Pod, v: Volume, state: PodVolumes, started: number, ok: boolean): void {
    if (!this.#observe) return;
    const plugin = this.#pluginName(pod.metadata!.uid!, v);
    if (plugin === undefined) return;
    const requestedAt = state.requestedAt.get(v.name);
    this.#observe({
      plugin,
      operation: setUpOperation(pod, v.name),
      seconds: (performance.now() - started) / 1000,
      ok,
      ...(ok && requestedAt !== undefined && { sinceRequested: (Date.now() - requestedAt) / 1000 }),
    });
  }

  /**
   * The container's mounts (upstream's makeMounts): its volumeMounts, the managed
   * /etc/hosts (written now: it needs the pod IP) and a fresh termination message file.
   * A subPath is bind-mounted at a path of the pod's (subpath.ts), which the container gets.
   * Throws with upstream's message when a mount cannot be made.
   */
  async containerMounts(
    pod: Pod,
    c: Container,
    ctx: {
      podIPs: string[];
      clusterDomain: string;
      hostnameOverride?: boolean;
      env?: { name: string; value: string }[];
      imageVolumes?: ReadonlyMap<string, ImageSpec>;
    },
  ): Promise<Mount[]> {
    const uid = pod.metadata!.uid!;
    let etcHosts: string | undefined;
    if (pod.spec?.hostNetwork || ctx.podIPs.length) {
      etcHosts = podEtcHostsPath(this.#rootDir, uid);
      const { hostname, domain } = podHostNameAndDomain(pod, ctx.clusterDomain, ctx.hostnameOverride);
      const content = pod.spec?.hostNetwork
        ? hostNetworkHostsFile(readFileSync(this.#hostsFile, 'utf8'), pod.spec.hostAliases)
        : managedHostsFile(ctx.podIPs, hostname, domain, pod.spec?.hostAliases);
      mkdirSync(podDir(this.#rootDir, uid), { recursive: true });
      writeFileSync(etcHosts, content, { mode: 0o644 });
    }
    let terminationLog: string | undefined;
    if (c.terminationMessagePath !== '') {
      // A new file per container instance: the kubelet reads the message of the one that ended.
      terminationLog = join(podContainerDir(this.#rootDir, uid, c.name), randomBytes(4).toString('hex'));
      mkdirSync(dirname(terminationLog), { recursive: true });
      closeSync(openSync(terminationLog, 'w'));
      chmodSync(terminationLog, 0o666);
    }
    const binds: (SubPathBind & { volume: string })[] = [];
    const mounts = containerMounts(pod, c, {
      volumes: this.#pods.get(uid)?.paths ?? new Map(),
      etcHosts,
      terminationLog,
      env: ctx.env,
      imageVolumes: ctx.imageVolumes,
      prepareSubPath: (volumePath, subPath, at) => {
        const target = subPathTarget(podSubPathsDir(this.#rootDir, uid), at.volume, c.name, at.index);
        binds.push({ base: realpathSync(volumePath), path: prepareSubPath(volumePath, subPath), target, volume: at.volume });
        return target;
      },
    });
    for (const b of binds) {
      try {
        await this.#bindSubPath(b);
      } catch (e) {
        throw subPathFailure(e, b.volume, c.name);
      }
    }
    return mounts;
  }

  /**
   * upstream's makeBlockVolumes: the container's volumeDevices, the raw block volumes handed to
   * it as devices (read-only ones with "r"). A CSI one is the symlink in the pod's volumeDevices
   * directory, as upstream (the runtime resolves it); a local one the device path itself.
   */
  containerDevices(pod: Pod, c: Container): { containerPath: string; hostPath: string; permissions: string }[] {
    const paths = this.#pods.get(pod.metadata!.uid!)?.paths;
    return (c.volumeDevices ?? []).map((d) => {
      if (!d.devicePath.startsWith('/')) throw new Error(`error DevicePath \`${d.devicePath}\` must be an absolute path`);
      const v = paths?.get(d.name);
      if (!v?.block) throw new Error(`cannot find volume "${d.name}" to pass into container "${c.name}"`);
      return { containerPath: d.devicePath, hostPath: v.path, permissions: v.readOnly ? 'r' : 'mrw' };
    });
  }

  /**
   * Each pod's volumes by their plugin's qualified name, wanted and set up, for upstream's
   * volume_manager_total_volumes (read at scrape). A claim counts once its PV is resolved, an
   * unsupported volume not at all: upstream's populator adds neither to the desired state of world.
   */
  volumeState(): PodVolumeState[] {
    return [...this.#pods].map(([uid, s]) => {
      const byName = new Map(s.volumes.map((v) => [v.name, v]));
      const named = (name: string) => {
        const v = byName.get(name);
        return v && this.#pluginName(uid, v);
      };
      return {
        desired: s.volumes.flatMap((v) => this.#pluginName(uid, v) ?? []),
        mounted: [...s.paths.keys()].map((name) => named(name) ?? ''),
      };
    });
  }

  #pluginName(uid: string, v: Volume): string | undefined {
    const plugin = findPlugin(podVolumePlugins, { volume: v, readOnly: false });
    if (!plugin) return undefined;
    if (plugin.name === PERSISTENT_CLAIM) return this.#host.persistent?.pluginName?.(uid, v.name);
    return qualifiedPluginName(plugin.name, { volume: v });
  }

  /**
   * The pod's inline volumes whose plugin measures them by statfs (a flexVolume whose driver
   * supportsMetrics), for the Summary; a claim's are PersistentVolumes.claimMounts'.
   */
  statfsVolumes(uid: string): { name: string; path: string }[] {
    const s = this.#pods.get(uid);
    if (!s) return [];
    return s.volumes.flatMap((v) => {
      const p = s.paths.get(v.name);
      return p?.statfsMetrics && !v.persistentVolumeClaim && !v.ephemeral ? [{ name: v.name, path: p.path }] : [];
    });
  }

  /** The host directory of the pod's volume once set up (upstream's volumeutil.GetPath of its mounter), as fileKeyRef reads it. */
  hostPath(uid: string, volume: string): string | undefined {
    return this.#pods.get(uid)?.paths.get(volume)?.path;
  }

  /**
   * Unpublishes the pod's CSI volumes (persistent.ts), unmounts the others and removes its
   * volume directories; what cannot be released stays for housekeeping to try again.
   */
  async tearDown(uid: string): Promise<void> {
    const state = this.#pods.get(uid);
    // The pod's set-up volumes other than CSI ones (src/csi times their unpublish), named before the claims are released.
    const unmounted = state ? this.#unmountedVolumes(uid, state) : [];
    this.#pods.delete(uid);
    this.#tokens.forget(uid);
    this.#sources.release?.(uid);
    const dir = podVolumesDir(this.#rootDir, uid);
    const started = performance.now();
    let ok = false;
    try {
      // The subPath binds first: they hold the volumes below them (upstream's CleanSubPaths before TearDown).
      await cleanSubPaths(podSubPathsDir(this.#rootDir, uid));
      // What a plugin holds beyond the directory (CSI publications, through the claims), first.
      for (const plugin of podVolumePlugins) await plugin.tearDown?.(this.#host, uid);
      if (!existsSync(dir)) {
        ok = true;
        return;
      }
      const real = realpathSync(dir);
      const { allGone } = await unmountAll(real);
      // Never rm -rf through something still mounted: housekeeping retries the unmount. Unless
      // every umount went through, mountinfo is read again to be sure.
      if (!allGone && mountPointsUnder(readFileSync('/proc/self/mountinfo', 'utf8'), real).length) {
        this.#log.warn('Volumes still mounted, not removed', { podUID: uid, dir: real });
        return;
      }
      rmSync(real, { recursive: true, force: true });
      ok = true;
    } catch (e) {
      this.#log.error('Failed to tear down volumes', { podUID: uid, err: e });
    } finally {
      // upstream's UnmountVolume per volume; here one pass serves them all, and each is counted with its time.
      const seconds = (performance.now() - started) / 1000;
      for (const u of unmounted) this.#observe?.({ ...u, seconds, ok });
    }
  }

  #unmountedVolumes(uid: string, state: PodVolumes): { plugin: string; operation: VolumeOperation }[] {
    return state.volumes.flatMap((v) => {
      const path = state.paths.get(v.name);
      const plugin = path && this.#pluginName(uid, v);
      if (!plugin || plugin.startsWith(`${CSI}:`)) return [];
      return [{ plugin, operation: path.block ? ('unmap_volume' as const) : ('volume_unmount' as const) }];
    });
  }
}
