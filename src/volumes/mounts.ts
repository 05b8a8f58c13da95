// Which host paths a container gets, and where: upstream's makeMounts (volumeMounts with
// subPath, readOnly and propagation, then the managed /etc/hosts) plus the termination
// message file kuberuntime adds. Pure, but for the subPath preparation it is handed.
import type { Container, HostAlias, Pod } from 'kubernetes-types/core/v1.js';
import type { Mount } from '../cri/generated/runtime/v1/Mount.ts';
import type { ImageSpec } from '../cri/generated/runtime/v1/ImageSpec.ts';
import { expand } from '../runtime/env.ts';
import { SubPathError } from './subpath.ts';

export type { Mount };

/** A volume as set up on the host. */
export interface VolumePath {
  path: string;
  /** The volume forces read-only mounts (configMap, secret, downwardAPI, projected as upstream). */
  readOnly: boolean;
  /** An image volume: the runtime mounts the image, there is no host path (upstream's image plugin). */
  image?: boolean;
  /**
   * The runtime relabels it for SELinux (upstream's makeMounts relabels a Managed volume whose
   * Attributes say SELinuxRelabel: so far a flexVolume whose driver's selinuxRelabel says so).
   */
  selinuxRelabel?: boolean;
}

export interface MountContext {
  volumes: ReadonlyMap<string, VolumePath>;
  /** Host path of the managed hosts file; undefined when the pod has no IP yet. */
  etcHosts?: string;
  /** Host path of this container instance's termination message file. */
  terminationLog?: string;
  /** The container's final environment, for subPathExpr. */
  env?: { name: string; value: string }[];
  /**
   * Makes volumePath/subPath exist and returns the host path to mount for the container's
   * volumeMount at index (of volume); throws (SubPathError) when it cannot or it escapes the volume.
   */
  prepareSubPath(volumePath: string, subPath: string, at: { volume: string; index: number }): string;
  /** The pulled images of the image volumes the container mounts, by volume name (src/images/image-volumes.ts). */
  imageVolumes?: ReadonlyMap<string, ImageSpec>;
}

export const ETC_HOSTS = '/etc/hosts';

function propagation(mode: string | undefined, privileged: boolean): Mount['propagation'] {
  switch (mode) {
    case undefined:
    case 'None':
      return 'PROPAGATION_PRIVATE';
    case 'HostToContainer':
      return 'PROPAGATION_HOST_TO_CONTAINER';
    case 'Bidirectional':
      if (!privileged) throw new Error('Bidirectional mount propagation is available only to privileged containers');
      return 'PROPAGATION_BIDIRECTIONAL';
  }
  throw new Error(`invalid MountPropagation mode: "${mode}"`);
}

/** Upstream's makeMounts words for a subPath that failed, which name neither path (the detail stays in the cause). */
export function subPathFailure(e: unknown, volume: string, container: string): Error {
  const what = e instanceof SubPathError && e.stage === 'create' ? 'create subPath directory' : 'prepare subPath';
  return new Error(`failed to ${what} for volumeMount "${volume}" of container "${container}"`, { cause: e });
}

/** The container's CRI mounts; throws with upstream's message when one cannot be made. */
export function containerMounts(_pod: Pod, c: Container, ctx: MountContext): Mount[] {
  const out: Mount[] = [];
  let mountEtcHosts = ctx.etcHosts !== undefined;
  for (const [index, m] of (c.volumeMounts ?? []).entries()) {
    if (m.mountPath === ETC_HOSTS) mountEtcHosts = false;
    const vol = ctx.volumes.get(m.name);
    if (!vol) throw new Error(`cannot find volume "${m.name}" to mount into container "${c.name}"`);
    let hostPath = vol.path;
    let subPath = m.subPath ?? '';
    if (m.subPathExpr) subPath = expandSubPath(m.subPathExpr, ctx.env ?? []);
    if (subPath) {
      if (subPath.startsWith('/')) throw new Error(`error SubPath \`${subPath}\` must not be an absolute path`);
      if (subPath.split('/').includes('..')) throw new Error(`unable to provision SubPath \`${subPath}\`: must not contain '..'`);
    }
    // An image volume has no host path: the runtime mounts the pulled image (its subPath within it), read-only.
    const image = vol.image ? ctx.imageVolumes?.get(m.name) : undefined;
    if (vol.image && !image) throw new Error(`cannot find volume "${m.name}" to mount into container "${c.name}"`);
    if (subPath && !image) {
      try {
        hostPath = ctx.prepareSubPath(vol.path, subPath, { volume: m.name, index });
      } catch (e) {
        throw subPathFailure(e, m.name, c.name);
      }
    }
    out.push({
      containerPath: m.mountPath,
      hostPath,
      ...(image ? { image, imageSubPath: subPath } : {}),
      readonly: !!m.readOnly || vol.readOnly,
      propagation: propagation(m.mountPropagation, !!c.securityContext?.privileged),
      ...(vol.selinuxRelabel && { selinuxRelabel: true }),
    });
  }
  if (mountEtcHosts) out.push({ containerPath: ETC_HOSTS, hostPath: ctx.etcHosts!, readonly: false, propagation: 'PROPAGATION_PRIVATE' });
  if (ctx.terminationLog && c.terminationMessagePath !== '') {
    out.push({
      containerPath: c.terminationMessagePath ?? '/dev/termination-log',
      hostPath: ctx.terminationLog,
      readonly: false,
      propagation: 'PROPAGATION_PRIVATE',
    });
  }
  return out;
}

/** Upstream's ExpandContainerVolumeMounts: every $(VAR) must have a non-empty value. */
export function expandSubPath(expr: string, env: { name: string; value: string }[]): string {
  const vars = new Map(env.map((e) => [e.name, e.value]));
  const missing = new Set<string>();
  const out = expand(expr, (k) => {
    const v = vars.get(k);
    if (!v) missing.add(k);
    return v ?? '';
  });
  if (missing.size) throw new Error(`missing value for ${[...missing].sort().join(', ')}`);
  return out;
}

function aliasLines(aliases: HostAlias[] | undefined): string {
  if (!aliases?.length) return '';
  return '\n# Entries added by HostAliases.\n' + aliases.map((a) => `${a.ip}\t${(a.hostnames ?? []).join('\t')}\n`).join('');
}

/** Upstream's managedHostsFileContent, for pods with their own network namespace. */
export function managedHostsFile(podIPs: string[], hostname: string, domain: string, aliases?: HostAlias[]): string {
  let s =
    '# Kubernetes-managed hosts file.\n' +
    '127.0.0.1\tlocalhost\n' +
    '::1\tlocalhost ip6-localhost ip6-loopback\n' +
    'fe00::0\tip6-localnet\n' +
    'fe00::0\tip6-mcastprefix\n' +
    'fe00::1\tip6-allnodes\n' +
    'fe00::2\tip6-allrouters\n';
  for (const ip of podIPs) s += domain ? `${ip}\t${hostname}.${domain}\t${hostname}\n` : `${ip}\t${hostname}\n`;
  return s + aliasLines(aliases);
}

/** Upstream's nodeHostsFileContent, for hostNetwork pods: the node's own file plus hostAliases. */
export function hostNetworkHostsFile(nodeHosts: string, aliases?: HostAlias[]): string {
  return '# Kubernetes-managed hosts file (host network).\n' + nodeHosts + aliasLines(aliases);
}
