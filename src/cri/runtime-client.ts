import type { Long } from '@grpc/proto-loader';
import { CriConnection, type CallOptions, type ConnectionOptions, type RequestOf, type ResponseOf, type Rpc } from './connection.ts';
import type { RuntimeServiceDefinition } from './generated/runtime/v1/RuntimeService.ts';
import { criServices } from './proto.ts';

type Methods = RuntimeServiceDefinition;
export type RuntimeRequest<M extends keyof Methods> = RequestOf<Methods[M]>;
export type RuntimeResponse<M extends keyof Methods> = ResponseOf<Methods[M]>;

// Anything that changes state has runtimeRequestTimeout as its deadline (the connection's);
// reads are cheap here (a full relist takes ~5 ms) so they fail fast.
const READ_MS = 10_000;
const STATS_MS = 30_000;

const read = (operation: string, timeoutMs = READ_MS): Rpc => ({ operation, timeoutMs, idempotent: true });
const write = (operation: string, timeoutMs?: number): Rpc => ({ operation, timeoutMs, idempotent: false });

// Operation names are upstream's operation_type metric labels.
const RPC = {
  Version: read('version'),
  Status: read('status'),
  RuntimeConfig: read('runtime_config'),
  RunPodSandbox: write('run_podsandbox'),
  StopPodSandbox: write('stop_podsandbox'),
  RemovePodSandbox: write('remove_podsandbox'),
  PodSandboxStatus: read('podsandbox_status'),
  ListPodSandbox: read('list_podsandbox'),
  CreateContainer: write('create_container'),
  StartContainer: write('start_container'),
  StopContainer: write('stop_container'),
  RemoveContainer: write('remove_container'),
  ListContainers: read('list_containers'),
  ContainerStatus: read('container_status'),
  UpdateContainerResources: write('update_container'),
  ExecSync: write('exec_sync'),
  // Each call mints a single-use streaming URL: cheap, but not worth repeating.
  Exec: write('exec', READ_MS),
  Attach: write('attach', READ_MS),
  PortForward: write('port_forward', READ_MS),
  ListContainerStats: read('list_container_stats', STATS_MS),
  ListPodSandboxStats: read('list_podsandbox_stats', STATS_MS),
  UpdateRuntimeConfig: write('update_runtime_config'),
  ReopenContainerLog: write('reopen_container_log'),
} satisfies { [M in keyof Methods]?: Rpc };

/** CRI RuntimeService over a unix socket; every method rejects with a CriError. */
export class RuntimeClient {
  readonly #connection: CriConnection;
  readonly #methods = criServices().runtime;

  /** endpoint: unix:///run/containerd/containerd.sock or a bare socket path. */
  constructor(endpoint: string, options?: ConnectionOptions) {
    this.#connection = new CriConnection(endpoint, options);
  }

  get target(): string {
    return this.#connection.target;
  }

  version(request: RuntimeRequest<'Version'> = {}, options?: CallOptions) {
    return this.#call('Version', request, options);
  }

  /** The runtime's cgroup driver (containerd 2; containerd 1.6 answers UNIMPLEMENTED). */
  runtimeConfig(request: RuntimeRequest<'RuntimeConfig'> = {}, options?: CallOptions) {
    return this.#call('RuntimeConfig', request, options);
  }

  status(request: RuntimeRequest<'Status'> = {}, options?: CallOptions) {
    return this.#call('Status', request, options);
  }

  runPodSandbox(request: RuntimeRequest<'RunPodSandbox'>, options?: CallOptions) {
    return this.#call('RunPodSandbox', request, options);
  }

  stopPodSandbox(request: RuntimeRequest<'StopPodSandbox'>, options?: CallOptions) {
    return this.#call('StopPodSandbox', request, options);
  }

  removePodSandbox(request: RuntimeRequest<'RemovePodSandbox'>, options?: CallOptions) {
    return this.#call('RemovePodSandbox', request, options);
  }

  podSandboxStatus(request: RuntimeRequest<'PodSandboxStatus'>, options?: CallOptions) {
    return this.#call('PodSandboxStatus', request, options);
  }

  listPodSandbox(request: RuntimeRequest<'ListPodSandbox'> = {}, options?: CallOptions) {
    return this.#call('ListPodSandbox', request, options);
  }

  createContainer(request: RuntimeRequest<'CreateContainer'>, options?: CallOptions) {
    return this.#call('CreateContainer', request, options);
  }

  startContainer(request: RuntimeRequest<'StartContainer'>, options?: CallOptions) {
    return this.#call('StartContainer', request, options);
  }

  /** The default deadline is the grace period (request.timeout, seconds) plus runtimeRequestTimeout. */
  stopContainer(request: RuntimeRequest<'StopContainer'>, options?: CallOptions) {
    return this.#call('StopContainer', request, {
      timeoutMs: this.#connection.requestTimeoutMs + seconds(request.timeout) * 1000,
      ...options,
    });
  }

  removeContainer(request: RuntimeRequest<'RemoveContainer'>, options?: CallOptions) {
    return this.#call('RemoveContainer', request, options);
  }

  listContainers(request: RuntimeRequest<'ListContainers'> = {}, options?: CallOptions) {
    return this.#call('ListContainers', request, options);
  }

  containerStatus(request: RuntimeRequest<'ContainerStatus'>, options?: CallOptions) {
    return this.#call('ContainerStatus', request, options);
  }

  /** In-place resize: the container's new cgroup settings. */
  updateContainerResources(request: RuntimeRequest<'UpdateContainerResources'>, options?: CallOptions) {
    return this.#call('UpdateContainerResources', request, options);
  }

  /** The default deadline is the command's timeout (seconds) plus runtimeRequestTimeout. */
  execSync(request: RuntimeRequest<'ExecSync'>, options?: CallOptions) {
    return this.#call('ExecSync', request, { timeoutMs: this.#connection.requestTimeoutMs + seconds(request.timeout) * 1000, ...options });
  }

  exec(request: RuntimeRequest<'Exec'>, options?: CallOptions) {
    return this.#call('Exec', request, options);
  }

  attach(request: RuntimeRequest<'Attach'>, options?: CallOptions) {
    return this.#call('Attach', request, options);
  }

  portForward(request: RuntimeRequest<'PortForward'>, options?: CallOptions) {
    return this.#call('PortForward', request, options);
  }

  listContainerStats(request: RuntimeRequest<'ListContainerStats'> = {}, options?: CallOptions) {
    return this.#call('ListContainerStats', request, options);
  }

  listPodSandboxStats(request: RuntimeRequest<'ListPodSandboxStats'> = {}, options?: CallOptions) {
    return this.#call('ListPodSandboxStats', request, options);
  }

  updateRuntimeConfig(request: RuntimeRequest<'UpdateRuntimeConfig'>, options?: CallOptions) {
    return this.#call('UpdateRuntimeConfig', request, options);
  }

  /** Makes the runtime open a fresh log file at the container's log path (log rotation). */
  reopenContainerLog(request: RuntimeRequest<'ReopenContainerLog'>, options?: CallOptions) {
    return this.#call('ReopenContainerLog', request, options);
  }

  close(): void {
    this.#connection.close();
  }

  #call<M extends keyof typeof RPC>(method: M, request: RuntimeRequest<M>, options?: CallOptions): Promise<RuntimeResponse<M>> {
    return this.#connection.call(this.#methods[method], RPC[method], request, options?.timeoutMs, options?.signal);
  }
}

function seconds(value: number | string | Long | undefined): number {
  return Number(String(value ?? 0)) || 0;
}
