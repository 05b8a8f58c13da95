// The in-memory container runtime: what containerd keeps (sandboxes, containers, images) without
// processes, namespaces or files. Sandboxes get an IP at once, images are "pulled" at once, and a
// container runs until stopped unless exitPlan says it ends. Each state change follows
// lifecycle.ts; the gRPC face is server.ts. Used by hollow nodes (src/hollow) and by tests that
// want a runtime that behaves, not a list of canned answers.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { exitPlan } from './exit-plan.ts';
import { passes, type ListFilter } from './filters.ts';
import { type ContainerState, containerTransition, exitReason, type SandboxState, sandboxTransition } from './lifecycle.ts';

/** A refused call: the server answers it with this gRPC code name. */
export class RuntimeRefusal extends Error {
  readonly code: 'NOT_FOUND' | 'FAILED_PRECONDITION' | 'INVALID_ARGUMENT' | 'ALREADY_EXISTS';
  constructor(code: RuntimeRefusal['code'], message: string) {
    super(message);
    this.code = code;
  }
}

type Labels = Record<string, string>;
interface Metadata {
  name: string;
  [k: string]: unknown;
}

interface Sandbox {
  id: string;
  metadata: Metadata;
  state: SandboxState;
  createdAt: bigint;
  labels: Labels;
  annotations: Labels;
  runtimeHandler: string;
  ip: string;
  hostNetwork: boolean;
  logDirectory: string;
}

interface Container {
  id: string;
  podSandboxId: string;
  metadata: Metadata;
  image: { image: string; [k: string]: unknown };
  imageRef: string;
  state: ContainerState;
  createdAt: bigint;
  startedAt: bigint;
  finishedAt: bigint;
  exitCode: number;
  reason: string;
  labels: Labels;
  annotations: Labels;
  logPath: string;
  argv: string[];
  timer?: NodeJS.Timeout;
}

/** What the runtime tells its GetContainerEvents subscribers. */
export interface ContainerEvent {
  containerId: string;
  containerEventType: 'CONTAINER_CREATED_EVENT' | 'CONTAINER_STARTED_EVENT' | 'CONTAINER_STOPPED_EVENT' | 'CONTAINER_DELETED_EVENT';
  createdAt: string;
}

export interface InMemoryRuntimeOptions {
  /** Nanoseconds since the epoch (tests pin it). */
  now?: () => bigint;
  /** The IP of the n-th sandbox (from 0); default 10.200.0.0/16 in order. */
  podIP?: (n: number) => string;
  /** Make each container's log file (empty), as the kubelet's log reader and rotation expect one; default true. */
  logFiles?: boolean;
  /** The directory the image filesystem is said to be on (image GC and eviction statfs it); default /. */
  imageFsPath?: string;
  /** The sandbox ("pause") image, pinned and present from the start. */
  sandboxImage?: string;
}

const IMAGE_SIZE = 1_000_000;
const MEMORY_WORKING_SET = 1_048_576;
const realNow = () => BigInt(Date.now()) * 1_000_000n;

export class InMemoryRuntime {
  readonly #sandboxes = new Map<string, Sandbox>();
  readonly #containers = new Map<string, Container>();
  /** Image ref (sha256:...) by every tag and ref it answers to. */
  readonly #images = new Map<string, { id: string; tags: Set<string>; pinned: boolean }>();
  readonly #listeners = new Set<(e: ContainerEvent) => void>();
  readonly #now: () => bigint;
  readonly #podIP: (n: number) => string;
  #sandboxesMade = 0;
  readonly #logFiles: boolean;
  readonly #imageFsPath: string;
  readonly sandboxImage: string;
  #seq = 0;

  constructor(o: InMemoryRuntimeOptions = {}) {
    this.#now = o.now ?? realNow;
    this.#podIP = o.podIP ?? ((n) => `10.200.${((n + 1) >> 8) & 255}.${(n + 1) & 255}`);
    this.#logFiles = o.logFiles ?? true;
    this.#imageFsPath = o.imageFsPath ?? '/';
    this.sandboxImage = o.sandboxImage ?? 'registry.k8s.io/pause:3.10.1';
    this.pullImage(this.sandboxImage, true);
  }

  #id(): string {
    this.#seq++;
    return (this.#seq.toString(16).padStart(8, '0') + Math.random().toString(16).slice(2)).padEnd(64, '0').slice(0, 64);
  }

  /** Follows every container event until the returned function is called. */
  subscribe(listener: (e: ContainerEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #emit(containerId: string, containerEventType: ContainerEvent['containerEventType']) {
    const e = { containerId, containerEventType, createdAt: String(this.#now()) };
    for (const l of this.#listeners) l(e);
  }

  // --- images

  #image(ref: string) {
    const named = ref.includes(':') || ref.includes('@') ? ref : `${ref}:latest`;
    return this.#images.get(ref) ?? this.#images.get(named) ?? this.#images.get(`docker.io/library/${named}`);
  }

  /** Pulled at once, whatever the name: the image ref is a digest of the name. */
  pullImage(ref: string, pinned = false): string {
    const known = this.#image(ref);
    if (known) return known.id;
    const tag = ref.includes(':') || ref.includes('@') ? ref : `${ref}:latest`;
    const id = `sha256:${Buffer.from(tag).toString('hex').padEnd(64, '0').slice(0, 64)}`;
    const image = { id, tags: new Set([tag]), pinned };
    this.#images.set(tag, image);
    this.#images.set(id, image);
    return id;
  }

  imageStatus(ref: string) {
    const i = this.#image(ref);
    return i ? this.#imageOut(i) : null;
  }

  #imageOut(i: { id: string; tags: Set<string>; pinned: boolean }) {
    return {
      id: i.id,
      repoTags: [...i.tags],
      repoDigests: [],
      size: String(IMAGE_SIZE),
      uid: null,
      username: '',
      spec: { image: i.id },
      pinned: i.pinned,
    };
  }

  listImages() {
    return [...new Set(this.#images.values())].map((i) => this.#imageOut(i));
  }

  removeImage(ref: string) {
    const i = this.#image(ref);
    if (!i) return;
    for (const [k, v] of this.#images) if (v === i) this.#images.delete(k);
  }

  imageFsInfo() {
    const used = this.#images.size ? new Set(this.#images.values()).size * IMAGE_SIZE : 0;
    return {
      timestamp: String(this.#now()),
      fsId: { mountpoint: this.#imageFsPath },
      usedBytes: { value: String(used) },
      inodesUsed: { value: '0' },
    };
  }

  // --- sandboxes

  runPodSandbox(
    config: {
      metadata?: Metadata | null;
      labels?: Labels;
      annotations?: Labels;
      logDirectory?: string;
      linux?: { securityContext?: { namespaceOptions?: { network?: string | number } | null } | null } | null;
    },
    runtimeHandler = '',
  ): string {
    if (!config.metadata?.name) throw new RuntimeRefusal('INVALID_ARGUMENT', 'sandbox config must include metadata');
    const key = sandboxKey(config.metadata);
    for (const s of this.#sandboxes.values())
      if (sandboxKey(s.metadata) === key) throw new RuntimeRefusal('ALREADY_EXISTS', `sandbox name "${key}" is reserved for "${s.id}"`);
    const id = this.#id();
    const network = config.linux?.securityContext?.namespaceOptions?.network;
    this.#sandboxes.set(id, {
      id,
      metadata: config.metadata,
      state: 'SANDBOX_READY',
      createdAt: this.#now(),
      labels: config.labels ?? {},
      annotations: config.annotations ?? {},
      runtimeHandler,
      ip: this.#podIP(this.#sandboxesMade++),
      hostNetwork: network === 'NODE' || network === 2,
      logDirectory: config.logDirectory ?? '',
    });
    return id;
  }

  #sandbox(id: string): Sandbox {
    const s = this.#sandboxes.get(id) ?? [...this.#sandboxes.values()].find((x) => id && x.id.startsWith(id));
    if (!s) throw new RuntimeRefusal('NOT_FOUND', `an error occurred when try to find sandbox "${id}": not found`);
    return s;
  }

  stopPodSandbox(id: string) {
    const s = this.#sandboxes.get(id) ?? [...this.#sandboxes.values()].find((x) => id && x.id.startsWith(id));
    if (!s) return; // CRI: stopping a sandbox that is gone succeeds
    for (const c of this.#containers.values()) if (c.podSandboxId === s.id) this.#end(c, 'stop');
    s.state = to(sandboxTransition(s.state, 'stop'));
  }

  removePodSandbox(id: string) {
    const s = this.#sandboxes.get(id) ?? [...this.#sandboxes.values()].find((x) => id && x.id.startsWith(id));
    if (!s) return;
    this.stopPodSandbox(s.id);
    for (const c of [...this.#containers.values()]) if (c.podSandboxId === s.id) this.removeContainer(c.id);
    this.#sandboxes.delete(s.id);
  }

  podSandboxStatus(id: string) {
    const s = this.#sandbox(id);
    return {
      ...this.#sandboxOut(s),
      network: { ip: s.hostNetwork ? '' : s.ip, additionalIps: [] },
      linux: {
        namespaces: {
          options: { network: s.hostNetwork ? 'NODE' : 'POD', pid: 'CONTAINER', ipc: 'POD', targetId: '', usernsOptions: null },
        },
      },
    };
  }

  #sandboxOut(s: Sandbox) {
    return {
      id: s.id,
      metadata: s.metadata,
      state: s.state,
      createdAt: String(s.createdAt),
      labels: s.labels,
      annotations: s.annotations,
      runtimeHandler: s.runtimeHandler,
    };
  }

  listPodSandbox(filter?: ListFilter | null) {
    return [...this.#sandboxes.values()].filter((s) => passes(s, filter)).map((s) => this.#sandboxOut(s));
  }

  // --- containers

  createContainer(
    podSandboxId: string,
    config: {
      metadata?: Metadata | null;
      image?: { image: string } | null;
      command?: string[];
      args?: string[];
      labels?: Labels;
      annotations?: Labels;
      logPath?: string;
    },
  ): string {
    const s = this.#sandbox(podSandboxId);
    const refused = sandboxTransition(s.state, 'createContainer');
    if ('refused' in refused) throw new RuntimeRefusal('FAILED_PRECONDITION', refused.refused);
    if (!config.metadata?.name) throw new RuntimeRefusal('INVALID_ARGUMENT', 'container config must include metadata');
    const image = this.#image(config.image?.image ?? '');
    if (!image) throw new RuntimeRefusal('NOT_FOUND', `failed to get image "${config.image?.image}": not found`);
    const id = this.#id();
    const logPath = config.logPath && s.logDirectory ? join(s.logDirectory, config.logPath) : (config.logPath ?? '');
    if (this.#logFiles && isAbsolute(logPath)) {
      mkdirSync(dirname(logPath), { recursive: true });
      writeFileSync(logPath, '', { flag: 'a' });
    }
    this.#containers.set(id, {
      id,
      podSandboxId: s.id,
      metadata: config.metadata,
      image: { ...config.image, image: config.image?.image ?? '' },
      imageRef: image.id,
      state: 'CONTAINER_CREATED',
      createdAt: this.#now(),
      startedAt: 0n,
      finishedAt: 0n,
      exitCode: 0,
      reason: '',
      labels: config.labels ?? {},
      annotations: config.annotations ?? {},
      logPath,
      argv: [...(config.command ?? []), ...(config.args ?? [])],
    });
    this.#emit(id, 'CONTAINER_CREATED_EVENT');
    return id;
  }

  #container(id: string): Container {
    const c = this.#containers.get(id) ?? [...this.#containers.values()].find((x) => id && x.id.startsWith(id));
    if (!c) throw new RuntimeRefusal('NOT_FOUND', `an error occurred when try to find container "${id}": not found`);
    return c;
  }

  startContainer(id: string) {
    const c = this.#container(id);
    const t = containerTransition(c.state, 'start');
    if ('refused' in t) throw new RuntimeRefusal('FAILED_PRECONDITION', t.refused);
    c.state = to(t);
    c.startedAt = this.#now();
    this.#emit(c.id, 'CONTAINER_STARTED_EVENT');
    const sandbox = this.#sandboxes.get(c.podSandboxId);
    const plan = exitPlan(c.argv, { ...sandbox?.annotations, ...c.annotations });
    if (plan) {
      c.timer = setTimeout(() => this.#end(c, 'exit', plan.exitCode), plan.afterMs);
      c.timer.unref();
    }
  }

  /** A running container ends: on its own (exit), or killed (stop: 137, as SIGKILL after no grace here). */
  #end(c: Container, op: 'exit' | 'stop', exitCode = 137) {
    clearTimeout(c.timer);
    const was = c.state;
    c.state = to(containerTransition(c.state, op));
    if (was !== 'CONTAINER_RUNNING') return;
    c.finishedAt = this.#now();
    c.exitCode = exitCode;
    c.reason = exitReason(exitCode);
    this.#emit(c.id, 'CONTAINER_STOPPED_EVENT');
  }

  /** Test hook and the hollow driver's: a running container exits now with this code. */
  exit(id: string, exitCode: number) {
    this.#end(this.#container(id), 'exit', exitCode);
  }

  stopContainer(id: string) {
    const c = this.#containers.get(id) ?? [...this.#containers.values()].find((x) => id && x.id.startsWith(id));
    if (!c) throw new RuntimeRefusal('NOT_FOUND', `an error occurred when try to find container "${id}": not found`);
    this.#end(c, 'stop');
  }

  removeContainer(id: string) {
    const c = this.#containers.get(id) ?? [...this.#containers.values()].find((x) => id && x.id.startsWith(id));
    if (!c) return; // CRI: removing what is gone succeeds
    this.#end(c, 'stop');
    to(containerTransition(c.state, 'remove'));
    this.#containers.delete(c.id);
    this.#emit(c.id, 'CONTAINER_DELETED_EVENT');
  }

  #containerOut(c: Container) {
    return {
      id: c.id,
      podSandboxId: c.podSandboxId,
      metadata: c.metadata,
      image: c.image,
      imageRef: c.imageRef,
      imageId: c.imageRef,
      state: c.state,
      createdAt: String(c.createdAt),
      labels: c.labels,
      annotations: c.annotations,
    };
  }

  listContainers(filter?: ListFilter | null) {
    return [...this.#containers.values()].filter((c) => passes(c, filter)).map((c) => this.#containerOut(c));
  }

  containerStatus(id: string) {
    const c = this.#container(id);
    return {
      ...this.#containerOut(c),
      startedAt: String(c.startedAt),
      finishedAt: String(c.finishedAt),
      exitCode: c.exitCode,
      reason: c.reason,
      message: '',
      mounts: [],
      logPath: c.logPath,
      resources: null,
      user: null,
    };
  }

  /** Stats of each container asked for: CPU as if each running one used 1 ms a second, a fixed working set. */
  containerStats(filter?: ListFilter | null) {
    const now = this.#now();
    return this.listContainers(filter).map((c) => {
      const full = this.#containers.get(c.id)!;
      const runningNs = full.startedAt ? (full.finishedAt || now) - full.startedAt : 0n;
      return {
        attributes: { id: c.id, metadata: c.metadata, labels: c.labels, annotations: c.annotations },
        cpu: { timestamp: String(now), usageCoreNanoSeconds: { value: String(runningNs / 1000n) }, usageNanoCores: { value: '1000000' } },
        memory: {
          timestamp: String(now),
          workingSetBytes: { value: String(MEMORY_WORKING_SET) },
          usageBytes: { value: String(MEMORY_WORKING_SET) },
        },
        writableLayer: {
          timestamp: String(now),
          fsId: { mountpoint: this.#imageFsPath },
          usedBytes: { value: '4096' },
          inodesUsed: { value: '1' },
        },
      };
    });
  }

  /** Counts, for the hollow driver's log and tests. */
  counts() {
    let running = 0;
    for (const c of this.#containers.values()) if (c.state === 'CONTAINER_RUNNING') running++;
    return { sandboxes: this.#sandboxes.size, containers: this.#containers.size, running };
  }

  /** Clears every exit timer (the process may end without waiting for them). */
  close() {
    for (const c of this.#containers.values()) clearTimeout(c.timer);
    this.#listeners.clear();
  }
}

/** The name containerd reserves for a sandbox: its metadata's name, namespace, uid and attempt. */
function sandboxKey(m: Metadata): string {
  return `${m.name}_${m.namespace ?? ''}_${m.uid ?? ''}_${m.attempt ?? 0}`;
}

/** A transition that cannot be refused (stop, exit, remove), applied. */
function to<S>(t: { to: S | 'gone' } | { refused: string }): S {
  if ('refused' in t) throw new RuntimeRefusal('FAILED_PRECONDITION', t.refused);
  return t.to as S;
}
