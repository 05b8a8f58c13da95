// The in-memory runtime's gRPC face: CRI's RuntimeService and ImageService on a unix socket, from
// the same proto the kubelet's client loads, answering as containerd does for the calls the
// kubelet makes. What a hollow node cannot do (exec streams, attach, port-forward) answers
// UNIMPLEMENTED; ExecSync (exec probes) succeeds with no output.
import {
  Metadata,
  type sendUnaryData,
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type ServerWritableStream,
  status,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { criServices } from '../proto.ts';
import type { ListFilter } from './filters.ts';
import { type ContainerEvent, InMemoryRuntime, type InMemoryRuntimeOptions, RuntimeRefusal } from './runtime.ts';

/** The request fields the answers read (proto-loader hands every field, defaulted). */
interface CriRequest {
  verbose?: boolean;
  podSandboxId: string;
  containerId: string;
  runtimeHandler?: string;
  config?: (Parameters<InMemoryRuntime['runPodSandbox']>[0] & Parameters<InMemoryRuntime['createContainer']>[1]) | null;
  filter?: ListFilter | null;
  image?: { image: string } | null;
}
type Answer = (request: CriRequest) => unknown;

/** A call that answers nothing but an empty message. */
const empty = (f: () => unknown) => {
  f();
  return {};
};

/** The version a hollow runtime reports (runtimeName shows in the Node's containerRuntimeVersion). */
export const RUNTIME_NAME = 'hollow';
export const RUNTIME_VERSION = '0.1.0';

function runtimeAnswers(r: InMemoryRuntime): Record<string, Answer> {
  const ready = (type: string) => ({ type, status: true, reason: '', message: '' });
  return {
    Version: () => ({ version: '0.1.0', runtimeName: RUNTIME_NAME, runtimeVersion: RUNTIME_VERSION, runtimeApiVersion: 'v1' }),
    Status: (q: { verbose?: boolean }) => ({
      status: { conditions: [ready('RuntimeReady'), ready('NetworkReady')] },
      runtimeHandlers: [{ name: '', features: { recursiveReadOnlyMounts: true, userNamespaces: true } }],
      info: q.verbose ? { config: JSON.stringify({ sandboxImage: r.sandboxImage }) } : {},
      features: { supplementalGroupsPolicy: true },
    }),
    RuntimeConfig: () => ({ linux: { cgroupDriver: 'CGROUPFS' } }),
    UpdateRuntimeConfig: () => ({}),
    RunPodSandbox: (q) => ({ podSandboxId: r.runPodSandbox(q.config ?? {}, q.runtimeHandler) }),
    StopPodSandbox: (q) => empty(() => r.stopPodSandbox(q.podSandboxId)),
    RemovePodSandbox: (q) => empty(() => r.removePodSandbox(q.podSandboxId)),
    PodSandboxStatus: (q) => ({ status: r.podSandboxStatus(q.podSandboxId), info: {}, containersStatuses: [], timestamp: '0' }),
    ListPodSandbox: (q) => ({ items: r.listPodSandbox(q.filter) }),
    CreateContainer: (q) => ({ containerId: r.createContainer(q.podSandboxId, q.config ?? {}) }),
    StartContainer: (q) => empty(() => r.startContainer(q.containerId)),
    StopContainer: (q) => empty(() => r.stopContainer(q.containerId)),
    RemoveContainer: (q) => empty(() => r.removeContainer(q.containerId)),
    ListContainers: (q) => ({ containers: r.listContainers(q.filter) }),
    ContainerStatus: (q) => ({ status: r.containerStatus(q.containerId), info: {} }),
    UpdateContainerResources: (q) => empty(() => r.containerStatus(q.containerId)),
    ReopenContainerLog: (q) => empty(() => r.containerStatus(q.containerId)),
    ExecSync: (q) => {
      r.containerStatus(q.containerId);
      return { stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), exitCode: 0 };
    },
    ContainerStats: (q) => {
      const [stats] = r.containerStats({ id: q.containerId });
      if (!stats) throw new RuntimeRefusal('NOT_FOUND', `container "${q.containerId}" not found`);
      return { stats };
    },
    ListContainerStats: (q) => ({ stats: r.containerStats(q.filter) }),
    // The kubelet reads pod-level stats from its cgroups or from the containers' (src/stats): none here.
    ListPodSandboxStats: () => ({ stats: [] }),
  };
}

function imageAnswers(r: InMemoryRuntime): Record<string, Answer> {
  return {
    ListImages: () => ({ images: r.listImages() }),
    ImageStatus: (q) => ({ image: r.imageStatus(q.image?.image ?? ''), info: {} }),
    PullImage: (q) => ({ imageRef: r.pullImage(q.image?.image ?? '') }),
    RemoveImage: (q) => empty(() => r.removeImage(q.image?.image ?? '')),
    ImageFsInfo: () => ({ imageFilesystems: [r.imageFsInfo()], containerFilesystems: [] }),
  };
}

/** Every method of a service: the answers given, UNIMPLEMENTED for the rest; refusals as their gRPC codes. */
function implementation(methods: string[], answers: Record<string, Answer>): UntypedServiceImplementation {
  return Object.fromEntries(
    methods.map((name) => [
      name,
      (call: ServerUnaryCall<CriRequest, unknown>, callback: sendUnaryData<unknown>) => {
        const answer = answers[name];
        if (!answer) return callback({ code: status.UNIMPLEMENTED, details: `${name} is not served by the in-memory runtime` });
        try {
          callback(null, answer(call.request));
        } catch (e) {
          if (e instanceof RuntimeRefusal) callback({ code: status[e.code], details: e.message });
          else callback({ code: status.UNKNOWN, details: (e as Error).message });
        }
      },
    ]),
  );
}

export interface InMemoryRuntimeServer {
  runtime: InMemoryRuntime;
  /** unix:///path/to.sock */
  endpoint: string;
  stop(): Promise<void>;
}

/** Serves a new in-memory runtime on this unix socket path until stopped. */
export async function serveInMemoryRuntime(socketPath: string, o: InMemoryRuntimeOptions = {}): Promise<InMemoryRuntimeServer> {
  const runtime = new InMemoryRuntime(o);
  const { runtime: runtimeService, image: imageService } = criServices();
  const server = new Server();
  const service = implementation(Object.keys(runtimeService), runtimeAnswers(runtime));
  // The kubelet's event stream: every container event until the kubelet hangs up.
  service.GetContainerEvents = (call: ServerWritableStream<unknown, unknown>) => {
    const unsubscribe = runtime.subscribe((e: ContainerEvent) => call.write({ ...e, podSandboxStatus: null, containersStatuses: [] }));
    call.on('cancelled', unsubscribe);
    call.on('close', unsubscribe);
    // grpc-js sends a server stream's headers with its first message; send them now, so that the
    // client sees the stream up on an idle node (as event-stream.ts notes of containerd).
    call.sendMetadata(new Metadata());
  };
  server.addService(runtimeService, service);
  server.addService(imageService, implementation(Object.keys(imageService), imageAnswers(runtime)));
  const endpoint = `unix://${socketPath}`;
  await new Promise<number>((resolve, reject) =>
    server.bindAsync(endpoint, ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))),
  );
  return {
    runtime,
    endpoint,
    stop: () =>
      new Promise<void>((resolve) => {
        runtime.close();
        server.tryShutdown(() => resolve());
        // Open event streams never end on their own: cut them after a moment.
        setTimeout(() => server.forceShutdown(), 200).unref();
      }),
  };
}
