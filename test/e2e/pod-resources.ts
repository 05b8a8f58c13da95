// A client of the kubelet's PodResources API (k8s.io/kubelet pkg/apis/podresources/v1), as a
// monitoring agent on the node calls it: one connection a call, over the kubelet's socket.
import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { KUBELET_ROOT_DIR, ROOT } from './stack.ts';

export const POD_RESOURCES_SOCKET = `${KUBELET_ROOT_DIR}/pod-resources/kubelet.sock`;

export interface ContainerDevices {
  resourceName: string;
  deviceIds: string[];
  /** The devices' NUMA nodes (TopologyInfo); null when they have none. */
  topology?: { nodes: { ID: string }[] } | null;
}
export interface ContainerMemory {
  memoryType: string;
  size: string;
  topology: { nodes: { ID: string }[] } | null;
}
export interface PodResources {
  name: string;
  namespace: string;
  containers: { name: string; cpuIds: string[]; devices: ContainerDevices[]; memory: ContainerMemory[] }[];
}
type Unary<Res> = (req: object, options: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: Res) => void) => void;
export interface PodResourcesLister extends grpc.Client {
  List: Unary<{ podResources: PodResources[] }>;
  GetAllocatableResources: Unary<{ cpuIds: string[]; devices: ContainerDevices[]; memory: ContainerMemory[] }>;
}

/** Calls the PodResources API on the kubelet's socket (an error names the API), within 10s. */
export async function podResources<Res>(call: (c: PodResourcesLister) => Unary<Res>): Promise<Res> {
  const def = loadSync(`${ROOT}/proto/podresources/v1/api.proto`, { longs: String, enums: String, defaults: true, oneofs: true });
  const Lister = (grpc.loadPackageDefinition(def) as any).v1.PodResourcesLister as new (
    target: string,
    creds: grpc.ChannelCredentials,
  ) => PodResourcesLister;
  const client = new Lister(`unix://${POD_RESOURCES_SOCKET}`, grpc.credentials.createInsecure());
  try {
    return await new Promise<Res>((resolve, reject) =>
      call(client).call(client, {}, { deadline: Date.now() + 10_000 }, (err, res) =>
        err ? reject(new Error(`PodResources: ${err.message}`)) : resolve(res),
      ),
    );
  } finally {
    client.close();
  }
}
