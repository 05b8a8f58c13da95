// The volume manager: sets up a pod's volumes under ROOT/pods/UID/volumes/PLUGIN/NAME
// before its containers start, keeps configMap, secret, downwardAPI and projected
// contents current while the pod runs, hands each container its mounts, and tears the
// volumes down when the pod is removed. Which files a volume holds is decided in
// payload.ts; how they are written in atomic-writer.ts.
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import type { Container, Pod, Volume } from 'kubernetes-types/core/v1.js';
import type { Logger } from '../log/log.ts';
import { parseQuantity } from '../resources/quantity.ts';
import { podCgroupLimits } from '../resources/pod-cgroup.ts';
import { writeAtomically } from './atomic-writer.ts';
import { setUpHostPath } from './host-path.ts';
import { prepareSubPath } from './subpath.ts';
import { mountTmpfs, unmountAll, mountPointsUnder } from '../mount/mountinfo.ts';
import { type Mount, containerMounts, hostNetworkHostsFile, managedHostsFile } from './mounts.ts';
import { podHostNameAndDomain } from '../podutil/hostname.ts';
import { type Payload, DEFAULT_MODE, aggregate, configMapPayload, downwardAPIPayload, secretPayload } from './payload.ts';
import { NotFound, type VolumeSources } from './sources.ts';
import { TokenManager } from './tokens.ts';
import { setVolumeOwnershipUnlessMatching } from './ownership.ts';
import type { PersistentPath, PersistentVolumes } from './persistent.ts';
import { imageVolumeSource } from '../images/image-volumes.ts';
import type { ImageSpec } from '../cri/generated/runtime/v1/ImageSpec.ts';

/** Upstream's plugin directory names. */
const plugins = {
  emptyDir: 'kubernetes.io~empty-dir',
  configMap: 'kubernetes.io~configmap',
  secret: 'kubernetes.io~secret',
  downwardAPI: 'kubernetes.io~downward-api',
  projected: 'kubernetes.io~projected',
} as const;

type Kind = keyof typeof plugins | 'hostPath' | 'persistentVolumeClaim' | 'ephemeral' | 'image';

export function volumeKind(v: Volume): Kind | undefined {
  for (const k of [
    'emptyDir',
    'hostPath',
    'configMap',
    'secret',
    'downwardAPI',
    'projected',
    'persistentVolumeClaim',
    'ephemeral',
  ] as const)
    if (v[k]) return k;
  if (imageVolumeSource(v)) return 'image';
  return undefined;
}

/** The API-data volumes: rewritten while the pod runs, mounted read-only, memory-backed but for configMap (as upstream's wrappers). */
const dynamic = (k: Kind) => k === 'configMap' || k === 'secret' || k === 'downwardAPI' || k === 'projected';
const memoryBacked = (v: Volume, k: Kind) =>
  k === 'secret' || k === 'downwardAPI' || k === 'projected' || (k === 'emptyDir' && v.emptyDir?.medium === 'Memory');

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

export interface SetUpResult {
  /** Every volume is set up: the containers may start. */
  ready: boolean;
  /** Volumes that failed this time, with upstream's event message. */
  failed: { volume: string; message: string }[];
  /** When to try again, after a failure (growing back-off). */
  retryAfterMs?: number;
}

interface PodVolumes {
  paths: Map<string, PersistentPath>;
  refreshedAt: Map<string, number>;
  failures: number;
  /** Volumes whose refresh is still running, past the sync that began it. */
  refreshing: Set<string>;
  /** Failures of refreshes that ended after their sync returned. */
  late: SetUpResult['failed'];
}

const RETRY_INITIAL_MS = 1000;
/** How long a sync waits on the refresh of a volume that has its contents already. */
const REFRESH_WAIT_MS = 2000;
const RETRY_MAX_MS = 32_000;

export class VolumeManager {
  readonly #rootDir: string;
  readonly #sources: VolumeSources;
  readonly #log: Logger;
  readonly #allocatable: () => Record<string, string> | undefined;
  readonly #refreshMs: number;
  readonly #tokens: TokenManager;
  readonly #pods = new Map<string, PodVolumes>();
  readonly #hostsFile: string;
  readonly #mountTmpfs: (dir: string, sizeBytes?: number) => Promise<void>;
  readonly #persistent: Pick<PersistentVolumes, 'setUp' | 'release'> | undefined;

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
    persistent?: Pick<PersistentVolumes, 'setUp' | 'release'>;
  }) {
    this.#rootDir = d.rootDir;
    this.#sources = d.sources;
    this.#log = d.log;
    this.#allocatable = d.nodeAllocatable ?? (() => undefined);
    this.#refreshMs = d.refreshMs ?? 30_000;
    this.#hostsFile = d.hostsFile ?? '/etc/hosts';
    this.#tokens = new TokenManager(d.sources.requestToken);
    this.#mountTmpfs = d.mountTmpfs ?? mountTmpfs;
    this.#persistent = d.persistent;
  }

  #podDir(uid: string) {
    return join(this.#rootDir, 'pods', uid);
  }

  /**
   * Sets up the pod's volumes that are not yet, and refreshes the API-data ones that are
   * due. A volume that was set up once stays usable when its refresh fails, as upstream.
   */
  async setUp(pod: Pod, now = Date.now()): Promise<SetUpResult> {
    const uid = pod.metadata!.uid!;
    let state = this.#pods.get(uid);
    if (!state) this.#pods.set(uid, (state = { paths: new Map(), refreshedAt: new Map(), failures: 0, refreshing: new Set(), late: [] }));
    const failed: SetUpResult['failed'] = [];
    const volumes = pod.spec?.volumes ?? [];
    // A refresh that outlived an earlier sync reports its failure now.
    failed.push(...state.late.splice(0));
    // Side by side: a pod's start waits on the slowest volume, not on their sum.
    await Promise.all(
      volumes.map(async (v) => {
        const kind = volumeKind(v);
        const done = state.paths.has(v.name);
        if (done && (!kind || !dynamic(kind) || now - (state.refreshedAt.get(v.name) ?? 0) < this.#refreshMs)) return;
        if (state.refreshing.has(v.name)) return;
        let returned = false;
        const work = this.#setUpOrRefresh(pod, v, kind, state, now).then((message) => {
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
      return { ready, failed };
    }
    const retryAfterMs = Math.min(RETRY_MAX_MS, RETRY_INITIAL_MS * 2 ** state.failures);
    state.failures++;
    return { ready, failed, retryAfterMs };
  }

  /** Sets up or refreshes one volume; the failure's message, if it failed. */
  async #setUpOrRefresh(pod: Pod, v: Volume, kind: Kind | undefined, state: PodVolumes, now: number): Promise<string | undefined> {
    const uid = pod.metadata!.uid!;
    const done = state.paths.has(v.name);
    try {
      if (!kind) throw new Error('volume type is not supported by kubelet-ts');
      const path = await this.#setUpOne(pod, v, kind);
      if (!done)
        this.#log.info('MountVolume.SetUp succeeded', {
          pod: `${pod.metadata!.namespace}/${pod.metadata!.name}`,
          podUID: uid,
          volume: v.name,
        });
      state.paths.set(v.name, path);
      state.refreshedAt.set(v.name, now);
      return undefined;
    } catch (e) {
      this.#log.warn('MountVolume.SetUp failed', {
        pod: `${pod.metadata!.namespace}/${pod.metadata!.name}`,
        podUID: uid,
        volume: v.name,
        err: (e as Error).message,
      });
      // A failed refresh is tried again at the next sync, not after a full period.
      state.refreshedAt.delete(v.name);
      return `MountVolume.SetUp failed for volume "${v.name}" : ${(e as Error).message}`;
    }
  }

  async #setUpOne(pod: Pod, v: Volume, kind: Kind): Promise<PersistentPath> {
    // Nothing on the host: the image is pulled with the containers' and mounted by the runtime (src/images/image-volumes.ts).
    if (kind === 'image') return { path: '', readOnly: true, image: true };
    if (kind === 'persistentVolumeClaim' || kind === 'ephemeral') {
      if (!this.#persistent) throw new Error('volume type is not supported by kubelet-ts');
      return this.#persistent.setUp(pod, v);
    }
    if (kind === 'hostPath') {
      setUpHostPath(v.hostPath!);
      return { path: v.hostPath!.path, readOnly: false };
    }
    const dir = join(this.#podDir(pod.metadata!.uid!), 'volumes', plugins[kind], v.name);
    if (!existsSync(dir)) {
      mkdirSync(dir, { recursive: true });
      chmodSync(dir, 0o777); // emptyDir (and upstream's wrappers) are world-writable
    }
    if (memoryBacked(v, kind)) await this.#mountTmpfs(dir, tmpfsSize(pod, v.emptyDir?.sizeLimit, this.#allocatable()?.memory));
    const fsGroup = pod.spec?.securityContext?.fsGroup;
    const policy = pod.spec?.securityContext?.fsGroupChangePolicy;
    if (kind === 'emptyDir') {
      if (fsGroup !== undefined) setVolumeOwnershipUnlessMatching(dir, fsGroup, false, policy);
      return { path: dir, readOnly: false };
    }
    const payload = await this.#payload(pod, v, kind);
    if (writeAtomically(dir, payload)) {
      if (fsGroup !== undefined) setVolumeOwnershipUnlessMatching(dir, fsGroup, true, policy);
      this.#log.v(2, 'Volume contents written', { podUID: pod.metadata!.uid, volume: v.name, files: payload.size });
    }
    return { path: dir, readOnly: true };
  }

  async #payload(pod: Pod, v: Volume, kind: Kind): Promise<Payload> {
    const ns = pod.metadata!.namespace ?? 'default';
    const alloc = this.#allocatable() ?? {};
    switch (kind) {
      case 'configMap': {
        const s = v.configMap!,
          optional = !!s.optional;
        const cm = await this.#sources.configMap(ns, s.name!, pod.metadata!.uid).catch((e) => {
          if (optional && e instanceof NotFound) return {};
          throw e;
        });
        return configMapPayload(cm, s.items, s.defaultMode ?? DEFAULT_MODE, optional);
      }
      case 'secret': {
        const s = v.secret!,
          optional = !!s.optional;
        const secret = await this.#sources.secret(ns, s.secretName!, pod.metadata!.uid).catch((e) => {
          if (optional && e instanceof NotFound) return {};
          throw e;
        });
        return secretPayload(secret, s.items, s.defaultMode ?? DEFAULT_MODE, optional);
      }
      case 'downwardAPI':
        return downwardAPIPayload(pod, v.downwardAPI!.items, v.downwardAPI!.defaultMode ?? DEFAULT_MODE, alloc);
      case 'projected':
        return this.#projected(pod, v);
    }
    throw new Error(`no payload for ${kind}`);
  }

  /** Upstream's projected collectData: each source is tried, the errors aggregated. */
  async #projected(pod: Pod, v: Volume): Promise<Payload> {
    const ns = pod.metadata!.namespace ?? 'default';
    const mode = v.projected!.defaultMode ?? DEFAULT_MODE;
    const out: Payload = new Map();
    const errors: string[] = [];
    // Fetched side by side (token, CA, ...); merged in the order of the sources, as upstream.
    const parts = await Promise.all(
      (v.projected!.sources ?? []).map(async (src): Promise<Payload | Error> => {
        try {
          let part: Payload = new Map();
          if (src.secret) {
            const optional = !!src.secret.optional;
            const s = await this.#sources.secret(ns, src.secret.name!, pod.metadata!.uid).catch((e) => {
              if (optional && e instanceof NotFound) return {};
              throw e;
            });
            part = secretPayload(s, src.secret.items, mode, optional);
          } else if (src.configMap) {
            const optional = !!src.configMap.optional;
            const cm = await this.#sources.configMap(ns, src.configMap.name!, pod.metadata!.uid).catch((e) => {
              if (optional && e instanceof NotFound) return {};
              throw e;
            });
            part = configMapPayload(cm, src.configMap.items, mode, optional);
          } else if (src.downwardAPI) {
            part = downwardAPIPayload(pod, src.downwardAPI.items, mode, this.#allocatable() ?? {});
          } else if (src.serviceAccountToken) {
            const t = src.serviceAccountToken;
            const token = await this.#tokens.token({
              namespace: ns,
              serviceAccount: pod.spec?.serviceAccountName || 'default',
              audience: t.audience,
              expirationSeconds: t.expirationSeconds ?? 3600,
              podName: pod.metadata!.name!,
              podUID: pod.metadata!.uid!,
            });
            // Under fsGroup 0600, which the ownership change makes 0640 (upstream).
            part.set(t.path, { data: Buffer.from(token), mode: pod.spec?.securityContext?.fsGroup !== undefined ? 0o600 : mode });
          }
          return part;
        } catch (e) {
          return e as Error;
        }
      }),
    );
    for (const part of parts) {
      if (part instanceof Error) errors.push(part.message);
      else for (const [k, f] of part) out.set(k, f);
    }
    if (errors.length) throw new Error(aggregate(errors));
    return out;
  }

  /**
   * The container's mounts (upstream's makeMounts): its volumeMounts, the managed
   * /etc/hosts (written now: it needs the pod IP) and a fresh termination message file.
   * Throws with upstream's message when a mount cannot be made.
   */
  containerMounts(
    pod: Pod,
    c: Container,
    ctx: {
      podIPs: string[];
      clusterDomain: string;
      env?: { name: string; value: string }[];
      imageVolumes?: ReadonlyMap<string, ImageSpec>;
    },
  ): Mount[] {
    const uid = pod.metadata!.uid!;
    const podDir = this.#podDir(uid);
    let etcHosts: string | undefined;
    if (pod.spec?.hostNetwork || ctx.podIPs.length) {
      etcHosts = join(podDir, 'etc-hosts');
      const { hostname, domain } = podHostNameAndDomain(pod, ctx.clusterDomain);
      const content = pod.spec?.hostNetwork
        ? hostNetworkHostsFile(readFileSync(this.#hostsFile, 'utf8'), pod.spec.hostAliases)
        : managedHostsFile(ctx.podIPs, hostname, domain, pod.spec?.hostAliases);
      mkdirSync(podDir, { recursive: true });
      writeFileSync(etcHosts, content, { mode: 0o644 });
    }
    let terminationLog: string | undefined;
    if (c.terminationMessagePath !== '') {
      // A new file per container instance: the kubelet reads the message of the one that ended.
      terminationLog = join(podDir, 'containers', c.name, randomBytes(4).toString('hex'));
      mkdirSync(dirname(terminationLog), { recursive: true });
      closeSync(openSync(terminationLog, 'w'));
      chmodSync(terminationLog, 0o666);
    }
    return containerMounts(pod, c, {
      volumes: this.#pods.get(uid)?.paths ?? new Map(),
      etcHosts,
      terminationLog,
      env: ctx.env,
      imageVolumes: ctx.imageVolumes,
      prepareSubPath: (volumePath, subPath) => prepareSubPath(volumePath, subPath),
    });
  }

  /**
   * upstream's makeBlockVolumes: the container's volumeDevices, the raw block volumes handed to
   * it as devices (read-only ones with "r"). Upstream hands a symlink to the device under the
   * pod's volumeDevices directory; kubelet-ts hands the device path itself.
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

  /** The host directory of the pod's volume once set up (upstream's volumeutil.GetPath of its mounter), as fileKeyRef reads it. */
  hostPath(uid: string, volume: string): string | undefined {
    return this.#pods.get(uid)?.paths.get(volume)?.path;
  }

  /**
   * Unpublishes the pod's CSI volumes (persistent.ts), unmounts the others and removes its
   * volume directories; what cannot be released stays for housekeeping to try again.
   */
  async tearDown(uid: string): Promise<void> {
    this.#pods.delete(uid);
    this.#tokens.forget(uid);
    this.#sources.release?.(uid);
    const dir = join(this.#podDir(uid), 'volumes');
    try {
      await this.#persistent?.release(uid);
      if (!existsSync(dir)) return;
      const real = realpathSync(dir);
      await unmountAll(real);
      // Never rm -rf through something still mounted: housekeeping retries the unmount.
      if (mountPointsUnder(readFileSync('/proc/self/mountinfo', 'utf8'), real).length) {
        this.#log.warn('Volumes still mounted, not removed', { podUID: uid, dir: real });
        return;
      }
      rmSync(real, { recursive: true, force: true });
    } catch (e) {
      this.#log.error('Failed to tear down volumes', { podUID: uid, err: e });
    }
  }
}
