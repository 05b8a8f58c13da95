// Test helpers: pods with memory and hugepages requests, and synthetic NUMA machines.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import type { NUMAMemory } from './static-policy.ts';

export const Gi = 1024 ** 3;

/** A container whose requests equal its limits (Guaranteed when cpu is given too). */
export function ctr(
  name: string,
  r: Record<string, string>,
  o: { init?: boolean; sidecar?: boolean; burstable?: boolean } = {},
): Container & { init?: boolean } {
  const limits = { cpu: '1', ...r };
  return {
    name,
    image: 'i',
    ...(o.sidecar ? { restartPolicy: 'Always' } : {}),
    resources: { requests: limits, limits: o.burstable ? { ...limits, memory: '100Gi' } : limits },
    ...(o.init || o.sidecar ? { init: true } : {}),
  };
}

export function pod(uid: string, ...cs: (Container & { init?: boolean })[]): Pod {
  const strip = ({ init: _i, ...c }: Container & { init?: boolean }) => c;
  return {
    metadata: { name: uid, namespace: 'default', uid },
    spec: { initContainers: cs.filter((c) => c.init).map(strip), containers: cs.filter((c) => !c.init).map(strip) },
  };
}

/** n NUMA nodes of memGi each, with optional 2Mi hugepages (pages per node). */
export const machine = (n: number, memGi: number, hugepages2Mi = 0): NUMAMemory[] =>
  Array.from({ length: n }, (_, id) => ({
    id,
    memoryBytes: memGi * Gi,
    hugepages: hugepages2Mi ? [{ pageSizeKiB: 2048, numPages: hugepages2Mi }] : [],
  }));
