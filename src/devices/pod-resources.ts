// The PodResources API on <root-dir>/pod-resources/kubelet.sock (upstream's
// pkg/kubelet/apis/podresources server_v1): each running pod's containers with their devices
// and exclusive CPUs (the CPU manager's static policy) and memory blocks (the memory manager's
// Static policy; empty with None).
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Server, ServerCredentials, status, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { AllocatableResourcesResponse } from './generated/v1/AllocatableResourcesResponse.ts';
import type { ContainerDevices } from './generated/v1/ContainerDevices.ts';
import type { GetPodResourcesRequest__Output } from './generated/v1/GetPodResourcesRequest.ts';
import type { GetPodResourcesResponse } from './generated/v1/GetPodResourcesResponse.ts';
import type { ListPodResourcesResponse } from './generated/v1/ListPodResourcesResponse.ts';
import type { PodResources } from './generated/v1/PodResources.ts';
import { isSidecar } from '../podutil/podutil.ts';
import { deviceServices } from './proto.ts';

/** What the API reads: the pods, and the device manager's view of them. */
export interface PodResourcesProvider {
  pods(): Pod[];
  containerDevices(uid: string, container: string): { resourceName: string; deviceIds: string[]; numaNodes: number[] }[];
  allocatableDevices(): { resourceName: string; deviceId: string; numaNodes: number[] }[];
  /** The container's exclusive CPUs (the CPU manager's GetExclusiveCPUs); unset: none. */
  containerCPUs?(uid: string, container: string): number[];
  /** The CPUs that can be assigned exclusively (GetAllocatableCPUs); unset: none. */
  allocatableCPUs?(): number[];
  /** The container's memory blocks (the memory manager's GetMemory); unset: none. */
  containerMemory?(uid: string, container: string): MemoryBlock[];
  /** Each NUMA node's allocatable memory per type (GetAllocatableMemory); unset: none. */
  allocatableMemory?(): MemoryBlock[];
}

export interface MemoryBlock {
  numaAffinity: number[];
  type: string;
  size: number;
}

/** containerMemoryFromBlock: one ContainerMemory per block, its NUMA nodes as its topology. */
const memoryOf = (blocks: MemoryBlock[]) =>
  blocks.map((b) => ({ memoryType: b.type, size: String(b.size), topology: { nodes: b.numaAffinity.map((n) => ({ ID: String(n) })) } }));

export type PodResourcesEndpoint = 'list' | 'get_allocatable' | 'get';
export interface PodResourcesObserver {
  request?(endpoint: PodResourcesEndpoint): void;
  error?(endpoint: PodResourcesEndpoint): void;
}

const topology = (nodes: number[]) => (nodes.length ? { nodes: nodes.map((n) => ({ ID: String(n) })) } : null);

/** One pod as upstream's PodResources: its sidecars and app containers (other init containers have ended), their devices. */
export function podResources(
  pod: Pod,
  p: Pick<PodResourcesProvider, 'containerDevices' | 'containerCPUs' | 'containerMemory'>,
): PodResources {
  const uid = pod.metadata!.uid!;
  const containers = [...(pod.spec?.initContainers ?? []).filter(isSidecar), ...(pod.spec?.containers ?? [])];
  return {
    name: pod.metadata!.name!,
    namespace: pod.metadata!.namespace!,
    containers: containers.map((c) => ({
      name: c.name,
      devices: p
        .containerDevices(uid, c.name)
        .map((d): ContainerDevices => ({ resourceName: d.resourceName, deviceIds: d.deviceIds, topology: topology(d.numaNodes) })),
      cpuIds: p.containerCPUs?.(uid, c.name) ?? [],
      memory: memoryOf(p.containerMemory?.(uid, c.name) ?? []),
      dynamicResources: [],
    })),
  };
}

/** Allocatable devices grouped as upstream: one ContainerDevices per device (its own topology). */
export function allocatableResources(
  p: Pick<PodResourcesProvider, 'allocatableDevices' | 'allocatableCPUs' | 'allocatableMemory'>,
): AllocatableResourcesResponse {
  return {
    devices: p
      .allocatableDevices()
      .map((d) => ({ resourceName: d.resourceName, deviceIds: [d.deviceId], topology: topology(d.numaNodes) })),
    cpuIds: p.allocatableCPUs?.() ?? [],
    memory: memoryOf(p.allocatableMemory?.() ?? []),
  };
}

export async function startPodResourcesServer(
  dir: string,
  p: PodResourcesProvider,
  observe: PodResourcesObserver = {},
): Promise<{ socket: string; stop(): void }> {
  mkdirSync(dir, { recursive: true, mode: 0o750 });
  const socket = join(dir, 'kubelet.sock');
  rmSync(socket, { force: true });
  const server = new Server();
  server.addService(deviceServices().podResources, {
    List(_call: ServerUnaryCall<unknown, ListPodResourcesResponse>, cb: sendUnaryData<ListPodResourcesResponse>) {
      observe.request?.('list');
      cb(null, { podResources: p.pods().map((pod) => podResources(pod, p)) });
    },
    GetAllocatableResources(
      _call: ServerUnaryCall<unknown, AllocatableResourcesResponse>,
      cb: sendUnaryData<AllocatableResourcesResponse>,
    ) {
      observe.request?.('get_allocatable');
      cb(null, allocatableResources(p));
    },
    Get(call: ServerUnaryCall<GetPodResourcesRequest__Output, GetPodResourcesResponse>, cb: sendUnaryData<GetPodResourcesResponse>) {
      observe.request?.('get');
      const { podName, podNamespace } = call.request;
      const pod = p.pods().find((x) => x.metadata?.name === podName && x.metadata?.namespace === podNamespace);
      if (!pod) {
        observe.error?.('get');
        return cb({ code: status.UNKNOWN, details: `pod ${podName} in namespace ${podNamespace} not found` });
      }
      cb(null, { podResources: podResources(pod, p) });
    },
  });
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix://${socket}`, ServerCredentials.createInsecure(), (e) => (e ? reject(e) : resolve())),
  );
  return { socket, stop: () => server.forceShutdown() };
}
