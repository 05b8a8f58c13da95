// What the stats read from the container runtime, behind a narrow interface: sandboxes,
// containers, per-container CRI stats and the image filesystem. criStatsSource adapts
// the runtime view's list and the CRI clients; tests pass plain data.
import type { PsiStats__Output } from '../cri/generated/runtime/v1/PsiStats.ts';
import type { ImageClient } from '../cri/image-client.ts';
import type { RuntimeClient } from '../cri/runtime-client.ts';
import { labels } from '../container/types.ts';
import type { RuntimeList } from '../runtime/cri-runtime.ts';
import type { CriContainerStats, Psi, PsiData } from './sample.ts';

export interface SandboxInfo {
  id: string;
  uid: string;
  name: string;
  namespace: string;
  ready: boolean;
  createdAtMs: number;
}

export interface ContainerInfo {
  id: string;
  sandboxId: string;
  podUid: string;
  podName: string;
  podNamespace: string;
  name: string;
  image: string;
  /** The image's ID (the CRI's image_ref). */
  imageRef: string;
  /** The container's CRI labels. */
  labels: Record<string, string>;
  running: boolean;
  createdAtMs: number;
}

export interface ImageFsInfo {
  timeMs: number;
  usedBytes: number;
  inodesUsed?: number;
  mountpoint: string;
}

export interface RuntimeStatsSource {
  sandboxes(): Promise<SandboxInfo[]>;
  containers(): Promise<ContainerInfo[]>;
  /** By container ID. */
  containerStats(): Promise<Map<string, CriContainerStats>>;
  imageFilesystems(): Promise<ImageFsInfo[]>;
  /** An image's config labels; none when the runtime does not tell. */
  imageLabels(imageRef: string): Promise<Record<string, string>>;
}

/**
 * Pure: the image's config labels in ImageStatus's verbose info, as containerd's CRI writes it
 * (info["info"]: its ChainID and the OCI image spec); none in another runtime's.
 */
export function imageConfigLabels(info: Record<string, string> | undefined): Record<string, string> {
  try {
    const labels = JSON.parse(info?.info ?? '{}')?.imageSpec?.config?.Labels;
    return labels && typeof labels === 'object' ? labels : {};
  } catch {
    return {};
  }
}

const nsToMs = (ns: string | undefined) => (ns && ns !== '0' ? Number(BigInt(ns) / 1_000_000n) : 0);
const u64 = (v: { value: string } | null | undefined) => (v ? Number(v.value) : undefined);

/** Pure: the CRI's PSI, as the kubelet's makePSIStats takes it (a missing line is zeros). */
export function criPsi(p: PsiStats__Output | null | undefined): Psi | undefined {
  if (!p) return undefined;
  const line = (d: PsiStats__Output['Full']): PsiData => ({
    total: Number(d?.Total ?? 0),
    avg10: Number(d?.Avg10 ?? 0),
    avg60: Number(d?.Avg60 ?? 0),
    avg300: Number(d?.Avg300 ?? 0),
  });
  return { some: line(p.Some), full: line(p.Full) };
}

/**
 * How old the runtime's list the stats read may be: the PLEG's (RuntimeView.listed) lists every
 * 10 s and at once after the kubelet changes a pod, so a sample (the eviction manager's every 10 s,
 * the summary API's) makes no ListPodSandbox and ListContainers of its own.
 */
export const STATS_LIST_AGE_MS = 10_000;

export function criStatsSource(
  listed: (maxAgeMs: number) => Promise<RuntimeList>,
  cri: Pick<RuntimeClient, 'listContainerStats'>,
  images: Pick<ImageClient, 'imageFsInfo' | 'imageStatus'>,
): RuntimeStatsSource {
  return {
    async sandboxes() {
      const { sandboxes: items } = await listed(STATS_LIST_AGE_MS);
      return items.map((s) => ({
        id: s.id,
        uid: s.metadata?.uid ?? s.labels[labels.podUID] ?? '',
        name: s.metadata?.name ?? s.labels[labels.podName] ?? '',
        namespace: s.metadata?.namespace ?? s.labels[labels.podNamespace] ?? '',
        ready: s.state === 'SANDBOX_READY',
        createdAtMs: nsToMs(s.createdAt),
      }));
    },
    async containers() {
      const { containers } = await listed(STATS_LIST_AGE_MS);
      return containers.map((c) => ({
        id: c.id,
        sandboxId: c.podSandboxId,
        podUid: c.labels[labels.podUID] ?? '',
        podName: c.labels[labels.podName] ?? '',
        podNamespace: c.labels[labels.podNamespace] ?? '',
        name: c.metadata?.name ?? c.labels[labels.containerName] ?? '',
        image: c.image?.image ?? '',
        imageRef: c.imageRef,
        labels: c.labels,
        running: c.state === 'CONTAINER_RUNNING',
        createdAtMs: nsToMs(c.createdAt),
      }));
    },
    async containerStats() {
      const { stats } = await cri.listContainerStats({});
      const out = new Map<string, CriContainerStats>();
      for (const s of stats) {
        if (!s.attributes?.id) continue;
        const w = s.writableLayer;
        out.set(s.attributes.id, {
          timeMs: nsToMs(s.cpu?.timestamp ?? s.memory?.timestamp) || Date.now(),
          cpuNs: u64(s.cpu?.usageCoreNanoSeconds),
          workingSetBytes: u64(s.memory?.workingSetBytes),
          usageBytes: u64(s.memory?.usageBytes),
          rssBytes: u64(s.memory?.rssBytes),
          pageFaults: u64(s.memory?.pageFaults),
          majorPageFaults: u64(s.memory?.majorPageFaults),
          availableBytes: u64(s.memory?.availableBytes),
          cpuPsi: criPsi(s.cpu?.psi),
          memoryPsi: criPsi(s.memory?.psi),
          io: s.io ? { timeMs: nsToMs(s.io.timestamp), psi: criPsi(s.io.psi) } : undefined,
          swap: s.swap
            ? { timeMs: nsToMs(s.swap.timestamp), usageBytes: u64(s.swap.swapUsageBytes), availableBytes: u64(s.swap.swapAvailableBytes) }
            : undefined,
          writableLayer: w
            ? { timeMs: nsToMs(w.timestamp), usedBytes: u64(w.usedBytes), inodesUsed: u64(w.inodesUsed), mountpoint: w.fsId?.mountpoint }
            : undefined,
        });
      }
      return out;
    },
    async imageFilesystems() {
      const { imageFilesystems } = await images.imageFsInfo({});
      return imageFilesystems.map((f) => ({
        timeMs: nsToMs(f.timestamp),
        usedBytes: u64(f.usedBytes) ?? 0,
        inodesUsed: u64(f.inodesUsed),
        mountpoint: f.fsId?.mountpoint ?? '',
      }));
    },
    async imageLabels(imageRef) {
      const { info } = await images.imageStatus({ image: { image: imageRef }, verbose: true });
      return imageConfigLabels(info);
    },
  };
}
