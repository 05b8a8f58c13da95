// An in-memory container runtime for the sync's tests, and a PodSyncer (src/pods/sync-pod.ts, with
// its CRI executor) wired to it (testing.ts: the build leaves it out, the unit test glob does not
// run it). It keeps sandboxes and containers with their states, attempts and exit codes as
// containerd would, records every CRI call, and answers the view's pod(uid) from that state, so
// that a sync runs its real decisions (computePodActions) over it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Container } from 'kubernetes-types/core/v1.js';
import type { RuntimeRequest, RuntimeResponse } from '../cri/runtime-client.ts';
import type { ImageUser } from './security-context.ts';
import type { ImageToPull, PullResult } from '../images/puller.ts';
import type { Fields, Logger } from '../log/log.ts';
import type { VolumeManager } from '../volumes/volume-manager.ts';
import { PodResizer, type ResizeDeps } from '../resize/pod-resizer.ts';
import type { LinuxResources } from '../resources/linux-resources.ts';
import type { EnvSource } from './env-sources.ts';
import { containerHash } from './hash.ts';
import type { NodeContext } from './pod-config.ts';
import type { PodRuntime, PodView } from './pod-runtime.ts';
import { PodSyncer, type PodCgroups } from '../pods/sync-pod.ts';
import type { SyncObserver } from './sync.ts';
import { type ContainerPhase, type ContainerState, type PodRuntimeStatus, type SandboxState, labels } from '../container/types.ts';

interface FakeSandbox extends SandboxState {
  uid: string;
  config?: RuntimeRequest<'RunPodSandbox'>['config'];
}
interface FakeContainer extends ContainerState {
  config?: RuntimeRequest<'CreateContainer'>['config'];
}

/** One CRI call as the fake received it. */
export interface Call {
  method: string;
  request: unknown;
}

/** The CRI methods a test can make fail, and the resizer's. */
type Method = keyof PodRuntime | 'updateContainerResources';

// Wall-clock nanoseconds, strictly increasing within a run: newest-first ordering and the crash back-off read them.
let lastNs = 0n;
const nowNs = () => {
  const t = BigInt(Date.now()) * 1_000_000n;
  lastNs = t > lastNs ? t : lastNs + 1n;
  return String(lastNs);
};

export class FakeRuntime implements PodRuntime, PodView {
  readonly calls: Call[] = [];
  /** The runtime's NetworkReady condition (CRI Status). */
  network = { ready: true, reason: '', message: '' };
  /** ExecSync's exit code (lifecycle hooks). */
  execExitCode = 0;
  readonly #sandboxes = new Map<string, FakeSandbox>();
  readonly #containers = new Map<string, FakeContainer>();
  readonly #failures = new Map<Method, Error>();
  #next = { sb: 1, c: 1 };

  // ---- the test's hands on the runtime's state ----

  /** A sandbox of pod uid that is already there (ready with an IP unless told otherwise); its id. */
  addSandbox(uid: string, o: { id?: string; attempt?: number; ready?: boolean; ip?: string } = {}): string {
    const id = o.id ?? this.#newId('sb', this.#sandboxes);
    const ready = o.ready ?? true;
    this.#sandboxes.set(id, {
      id,
      uid,
      attempt: o.attempt ?? 0,
      ready,
      ip: 'ip' in o ? o.ip : ready ? '10.88.0.7' : undefined,
      createdAtNs: nowNs(),
    });
    return id;
  }

  /** An instance of a spec's container that is already there (its hash the spec's); its id. */
  addContainer(
    sandboxId: string,
    spec: Container,
    o: { id?: string; phase?: ContainerPhase; attempt?: number; exitCode?: number } = {},
  ): string {
    const id = o.id ?? this.#newId('c', this.#containers);
    const phase = o.phase ?? 'running';
    const created = nowNs();
    this.#containers.set(id, {
      id,
      sandboxId,
      name: spec.name,
      attempt: o.attempt ?? 0,
      phase,
      image: spec.image ?? '',
      imageRef: `sha256:${spec.image}`,
      hash: containerHash(spec),
      createdAtNs: created,
      ...(phase === 'running' || phase === 'exited' ? { startedAtNs: created } : {}),
      ...(phase === 'exited' ? { finishedAtNs: nowNs(), exitCode: o.exitCode ?? 0, reason: o.exitCode ? 'Error' : 'Completed' } : {}),
    });
    return id;
  }

  /** A running container's process ends now. */
  exit(id: string, exitCode: number): void {
    const c = this.#must(this.#containers, id);
    this.#containers.set(id, { ...c, phase: 'exited', finishedAtNs: nowNs(), exitCode, reason: exitCode ? 'Error' : 'Completed' });
  }

  /** The next call of method rejects with error. */
  failNext(method: Method, error: Error): void {
    this.#failures.set(method, error);
  }

  /** The newest instance of a container by name, with what CreateContainer was given. */
  container(name: string): FakeContainer | undefined {
    return [...this.#containers.values()].reverse().find((c) => c.name === name);
  }
  sandbox(id: string): FakeSandbox | undefined {
    return this.#sandboxes.get(id);
  }

  /** The calls in a line each: what a table row compares. */
  trace(): string[] {
    return this.calls.map(({ method, request: r }) => {
      const q = r as Record<string, any>;
      switch (method) {
        case 'RunPodSandbox': {
          const m = q.config.metadata;
          return `RunPodSandbox ${m.namespace}/${m.name} attempt=${m.attempt}`;
        }
        case 'CreateContainer':
          return `CreateContainer ${q.config.metadata.name} attempt=${q.config.metadata.attempt} in ${q.podSandboxId}`;
        case 'StopContainer':
          return `StopContainer ${q.containerId} timeout=${q.timeout}`;
        case 'ExecSync':
          return `ExecSync ${q.containerId} ${JSON.stringify(q.cmd)} timeout=${q.timeout}`;
        case 'Status':
          return 'Status';
        default:
          return `${method} ${q.podSandboxId ?? q.containerId}`;
      }
    });
  }

  // ---- PodView: every read is fresh ----

  current(uid: string): Promise<PodRuntimeStatus> {
    return this.pod(uid);
  }

  /** The pods changed() was called for, in order. */
  readonly changes: string[] = [];
  changed(uid: string): void {
    this.changes.push(uid);
  }

  async stopping(uid: string, stop: () => Promise<void>): Promise<void> {
    try {
      await stop();
    } finally {
      this.changed(uid);
    }
  }

  async sandboxStatus(id: string): Promise<SandboxState> {
    const { attempt, ready, ip, createdAtNs } = this.#sandboxes.get(id)!;
    return { id, attempt, ready, ip, ...(ip ? { ips: [ip] } : {}), createdAtNs };
  }

  async pod(uid: string): Promise<PodRuntimeStatus> {
    const sandboxes = [...this.#sandboxes.values()].filter((s) => s.uid === uid);
    const ids = new Set(sandboxes.map((s) => s.id));
    const newest = (a: { createdAtNs: string }, b: { createdAtNs: string }) => (BigInt(b.createdAtNs) > BigInt(a.createdAtNs) ? 1 : -1);
    return {
      uid,
      sandboxes: sandboxes
        .sort((a, b) => b.attempt - a.attempt || newest(a, b))
        .map(({ id, attempt, ready, ip, createdAtNs }) => ({ id, attempt, ready, ip, ...(ip ? { ips: [ip] } : {}), createdAtNs })),
      containers: [...this.#containers.values()]
        .filter((c) => ids.has(c.sandboxId))
        .sort((a, b) => b.attempt - a.attempt || newest(a, b))
        .map(({ config: _, ...c }) => ({ ...c })),
    };
  }

  /** RuntimeView's: the resizer tells what it sent. */
  noteResources(containerId: string, linux: LinuxResources): void {
    const c = this.#containers.get(containerId);
    if (c) this.#containers.set(containerId, { ...c, linux });
  }

  // ---- PodRuntime (CRI) ----

  async status(request: RuntimeRequest<'Status'> = {}): Promise<RuntimeResponse<'Status'>> {
    this.#call('Status', request, 'status');
    return {
      status: {
        conditions: [
          { type: 'RuntimeReady', status: true, reason: '', message: '' },
          { type: 'NetworkReady', status: this.network.ready, reason: this.network.reason, message: this.network.message },
        ],
      },
      info: {},
      runtimeHandlers: [],
      features: null,
    };
  }

  async runPodSandbox(request: RuntimeRequest<'RunPodSandbox'>): Promise<RuntimeResponse<'RunPodSandbox'>> {
    this.#call('RunPodSandbox', request, 'runPodSandbox');
    const m = request.config?.metadata;
    const id = this.#newId('sb', this.#sandboxes);
    this.#sandboxes.set(id, {
      id,
      uid: m?.uid ?? '',
      attempt: m?.attempt ?? 0,
      ready: true,
      ip: `10.88.0.${this.#next.sb}`,
      createdAtNs: nowNs(),
      config: request.config,
    });
    return { podSandboxId: id };
  }

  /** As containerd: the sandbox's containers are stopped with it. */
  async stopPodSandbox(request: RuntimeRequest<'StopPodSandbox'>): Promise<RuntimeResponse<'StopPodSandbox'>> {
    this.#call('StopPodSandbox', request, 'stopPodSandbox');
    const sb = this.#sandboxes.get(request.podSandboxId ?? '');
    if (sb) this.#sandboxes.set(sb.id, { ...sb, ready: false });
    for (const c of this.#containers.values()) if (c.sandboxId === request.podSandboxId && c.phase === 'running') this.exit(c.id, 137);
    return {};
  }

  /** As containerd: the sandbox's containers go with it; one already gone is fine. */
  async removePodSandbox(request: RuntimeRequest<'RemovePodSandbox'>): Promise<RuntimeResponse<'RemovePodSandbox'>> {
    this.#call('RemovePodSandbox', request, 'removePodSandbox');
    this.#sandboxes.delete(request.podSandboxId ?? '');
    for (const c of [...this.#containers.values()]) if (c.sandboxId === request.podSandboxId) this.#containers.delete(c.id);
    return {};
  }

  async createContainer(request: RuntimeRequest<'CreateContainer'>): Promise<RuntimeResponse<'CreateContainer'>> {
    this.#call('CreateContainer', request, 'createContainer');
    const sb = this.#must(this.#sandboxes, request.podSandboxId ?? '');
    if (!sb.ready) throw new Error(`sandbox ${sb.id} is not ready`);
    const cfg = request.config;
    const id = this.#newId('c', this.#containers);
    this.#containers.set(id, {
      id,
      sandboxId: sb.id,
      name: cfg?.metadata?.name ?? '',
      attempt: cfg?.metadata?.attempt ?? 0,
      phase: 'created',
      image: cfg?.image?.image ?? '',
      imageRef: `sha256:${cfg?.image?.image}`,
      hash: cfg?.annotations?.[labels.containerHash] ?? '',
      createdAtNs: nowNs(),
      config: cfg,
    });
    return { containerId: id };
  }

  async startContainer(request: RuntimeRequest<'StartContainer'>): Promise<RuntimeResponse<'StartContainer'>> {
    this.#call('StartContainer', request, 'startContainer');
    const c = this.#must(this.#containers, request.containerId ?? '');
    this.#containers.set(c.id, { ...c, phase: 'running', startedAtNs: nowNs() });
    return {};
  }

  /** The process ends on SIGTERM (exit code 143); one already stopped is fine. */
  async stopContainer(request: RuntimeRequest<'StopContainer'>): Promise<RuntimeResponse<'StopContainer'>> {
    this.#call('StopContainer', request, 'stopContainer');
    const c = this.#containers.get(request.containerId ?? '');
    if (c && (c.phase === 'running' || c.phase === 'unknown')) this.exit(c.id, 143);
    return {};
  }

  /** As containerd: a running container cannot be removed; one already gone is fine. */
  async removeContainer(request: RuntimeRequest<'RemoveContainer'>): Promise<RuntimeResponse<'RemoveContainer'>> {
    this.#call('RemoveContainer', request, 'removeContainer');
    const c = this.#containers.get(request.containerId ?? '');
    if (c?.phase === 'running') throw new Error(`container ${c.id} is running`);
    this.#containers.delete(request.containerId ?? '');
    return {};
  }

  async execSync(request: RuntimeRequest<'ExecSync'>): Promise<RuntimeResponse<'ExecSync'>> {
    this.#call('ExecSync', request, 'execSync');
    return { stdout: Buffer.from(''), stderr: Buffer.from(this.execExitCode ? 'failed' : ''), exitCode: this.execExitCode };
  }

  /** The resizer's call (PodResizer's ResizeRuntime). */
  async updateContainerResources(
    request: RuntimeRequest<'UpdateContainerResources'>,
  ): Promise<RuntimeResponse<'UpdateContainerResources'>> {
    this.#call('UpdateContainerResources', request, 'updateContainerResources');
    return {};
  }

  #call(method: string, request: unknown, key: Method) {
    this.calls.push({ method, request });
    const e = this.#failures.get(key);
    if (e) {
      this.#failures.delete(key);
      throw e;
    }
  }

  /** sb1, sb2, ... and c1, c2, ...: the next one no object has. */
  #newId(prefix: 'sb' | 'c', taken: Map<string, unknown>): string {
    let id: string;
    do id = `${prefix}${this.#next[prefix]++}`;
    while (taken.has(id));
    return id;
  }

  #must<T>(m: Map<string, T>, id: string): T {
    const v = m.get(id);
    if (!v) throw new Error(`not found: ${id}`);
    return v;
  }
}

/** A log line as the fake logger kept it. */
export interface LogLine {
  level: 'info' | 'v' | 'warn' | 'error';
  msg: string;
  fields?: Fields;
}

export function recordingLogger(lines: LogLine[] = []): Logger & { lines: LogLine[] } {
  return {
    lines,
    info: (msg, fields) => {
      lines.push({ level: 'info', msg, fields });
    },
    v: (_level, msg, fields) => {
      lines.push({ level: 'v', msg, fields });
    },
    warn: (msg, fields) => {
      lines.push({ level: 'warn', msg, fields });
    },
    error: (msg, fields) => {
      lines.push({ level: 'error', msg, fields });
    },
  };
}

// One temporary directory per test process for pod log directories; gone when the process ends.
let scratch: string | undefined;
function scratchDir(): string {
  if (!scratch) {
    const dir = (scratch = mkdtempSync(join(tmpdir(), 'kubelet-ts-sync-')));
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return mkdtempSync(join(scratch, 'pod-logs-'));
}

export interface SyncerOptions {
  runtime?: FakeRuntime;
  env?: EnvSource;
  volumes?: Pick<VolumeManager, 'setUp' | 'containerMounts' | 'containerDevices' | 'tearDown'>;
  /** The image's user by image name; pull: what ensure answers instead (an ErrImagePull, say). */
  imageUsers?: Record<string, ImageUser>;
  pull?: (c: ImageToPull) => PullResult | undefined;
  resize?: Partial<ResizeDeps>;
  node?: Partial<NodeContext>;
  runtimeHandler?: (runtimeClassName: string) => Promise<string>;
  /** Pods' user namespaces (src/userns); none: no usernsOptions at all. */
  userns?: ConstructorParameters<typeof PodSyncer>[0]['userns'];
  observe?: SyncObserver;
}

/** A PodSyncer over a FakeRuntime, with what it emits kept: events as "Type Reason: message". */
export function fakeSyncer(o: SyncerOptions = {}) {
  const runtime = o.runtime ?? new FakeRuntime();
  const events: string[] = [];
  const log = recordingLogger();
  const cgroups: string[] = [];
  const forgotten: string[] = [];
  const podCgroups: PodCgroups = {
    ensure: async (path) => {
      cgroups.push(`ensure ${path}`);
    },
    remove: async (path) => {
      cgroups.push(`remove ${path}`);
      return true;
    },
  };
  const recorder = {
    event: (_o: unknown, type: string, reason: string, message: string) => {
      events.push(`${type} ${reason}: ${message}`);
    },
  };
  const node: NodeContext = {
    podLogsDir: scratchDir(),
    clusterDomain: 'cluster.local',
    clusterDNS: ['10.96.0.10'],
    hostDNS: { servers: [], searches: [], options: [] },
    nodeIPs: ['172.30.0.2'],
    ...o.node,
  };
  const syncer = new PodSyncer({
    runtime,
    view: runtime,
    events: recorder,
    log,
    node,
    env: o.env,
    volumes: o.volumes,
    podCgroups,
    runtimeHandler: o.runtimeHandler,
    userns: o.userns,
    observe: o.observe,
    images: {
      ensure: async (c) => o.pull?.(c) ?? { imageRef: `sha256:${c.image}`, user: o.imageUsers?.[c.image ?? ''] ?? {} },
      forget: (prefix) => {
        forgotten.push(prefix);
      },
    },
    resizer: new PodResizer({ cri: runtime, view: runtime, events: recorder, log, ...o.resize }),
  });
  return { syncer, runtime, events, log: log.lines, cgroups, forgotten, podLogsDir: node.podLogsDir };
}
