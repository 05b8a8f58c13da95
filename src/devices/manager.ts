// The device manager (upstream's pkg/kubelet/cm/devicemanager ManagerImpl): device plugins
// register on <root-dir>/device-plugins/kubelet.sock, their ListAndWatch streams keep each
// resource's devices and health, pods are admitted against them and their containers get the
// chosen devices at creation (Allocate). Which devices is decided in allocation.ts; this holds
// the state, talks to the plugins, and checkpoints assignments for a restarted kubelet.
import type { Container, Pod, PodStatus } from 'kubernetes-types/core/v1.js';
import protobuf from 'protobufjs';
import type { Logger } from '../log/log.ts';
import {
  byNuma,
  capacity,
  type ContainerDevices,
  deviceIds,
  deviceRequests,
  deviceRunOptions,
  devicesInUse,
  devicesToAllocate,
  type DeviceRunOptions,
  type PodDevices,
  type PodPlanInput,
  planContainerDevices,
  planPodDevices,
  type ResourceState,
  reusableBefore,
} from './allocation.ts';
import { containerTopologyHints, type HintsInput, podTopologyHints } from './topology-hints.ts';
import type { NUMAMask, ProviderHints, TopologyHint } from '../topologymanager/bitmask.ts';
import type { HintProvider } from '../topologymanager/manager.ts';
import { type CheckpointData, readCheckpoint, writeCheckpoint } from './checkpoint.ts';
import { changedDevices, deviceResourcesStatus, podsWithDevices, type ReportedHealth, reportedHealth } from './health.ts';
import type { ContainerAllocateResponse__Output } from './generated/v1beta1/ContainerAllocateResponse.ts';
import type { Device__Output } from './generated/v1beta1/Device.ts';
import type { DevicePluginOptions__Output } from './generated/v1beta1/DevicePluginOptions.ts';
import { dialPlugin, type PluginEndpoint } from './plugin-client.ts';
import { DEVICE_PLUGIN_PROTO } from './proto.ts';
import { validateRegistration } from './registration.ts';
import { startRegistrationServer } from './registration-server.ts';
import type { RuntimeClient } from '../cri/runtime-client.ts';
import { labels as criLabels } from '../container/types.ts';
import { withResourceStatuses } from '../status/allocated-resources.ts';

/**
 * The containers the runtime runs at start, as "podUID/name" (upstream's
 * buildContainerMapAndRunningSetFromRuntime): a restarted kubelet leaves their devices be.
 * A runtime that does not answer gives none.
 */
export async function runningContainersAtStart(cri: Pick<RuntimeClient, 'listContainers'>): Promise<Set<string>> {
  const r = await cri.listContainers({ filter: { state: { state: 'CONTAINER_RUNNING' } } }).catch(() => ({ containers: [] }));
  return new Set(r.containers.map((c) => `${c.labels[criLabels.podUID]}/${c.labels[criLabels.containerName]}`));
}

/** What the manager reports, in its own terms (src/kubelet/observers.ts maps them to upstream's series). */
export interface DeviceObserver {
  registered?(resource: string): void;
  allocated?(resource: string, seconds: number): void;
}

export interface DeviceManagerDeps {
  /** <root-dir>/device-plugins */
  dir: string;
  log: Logger;
  /** UIDs of the pods admitted and not terminated (upstream's activePods). */
  activePods: () => Iterable<string>;
  /** The pod sources have all been listed: assignments of pods not among them may go. */
  sourcesReady: () => boolean;
  /** Containers the runtime ran at start, as "podUID/name": a restarted kubelet leaves their devices be. */
  runningAtStart?: ReadonlySet<string>;
  observe?: DeviceObserver;
  /** Pods holding devices whose health changed (ResourceHealthStatus): their status is due again. */
  podsChanged?: (uids: string[]) => void;
  dial?: typeof dialPlugin;
  now?: () => number;
  /** The machine's NUMA node ids, for the topology hints (upstream's numaNodes from cadvisor); default [0]. */
  numaNodes?: number[];
}

interface Resource extends ResourceState {
  endpoint?: PluginEndpoint;
  options?: DevicePluginOptions__Output;
  /** The health the plugin's last list gave, kept when it disconnects (upstream's allDevices). */
  reported?: ReportedHealth;
}

let responseType: protobuf.Type | undefined;
const allocResponseType = () => (responseType ??= protobuf.loadSync(DEVICE_PLUGIN_PROTO).lookupType('v1beta1.ContainerAllocateResponse'));
const CONVERSION = { defaults: true, arrays: true, objects: true, longs: String, enums: String } as const;

export class DeviceManager implements HintProvider {
  readonly #d: DeviceManagerDeps;
  readonly #resources = new Map<string, Resource>();
  readonly #pods: PodDevices = new Map();
  /** pod UID -> container -> the topology manager's affinity given at its allocation (its store's GetAffinity). */
  readonly #affinity = new Map<string, Map<string, NUMAMask | undefined>>();
  /** Resources deleted after their grace: 0 on the Node from then on, as upstream leaves them. */
  readonly #removed = new Set<string>();
  #server?: { stop(): Promise<void> };
  #stopped = false;

  constructor(d: DeviceManagerDeps) {
    this.#d = d;
  }

  #now = () => this.#d.now?.() ?? Date.now();

  /** upstream's Start: the checkpoint, then the Registration server. */
  async start(): Promise<void> {
    try {
      this.#restore(readCheckpoint(this.#d.dir));
    } catch (e) {
      this.#d.log.error('Continue after failing to read checkpoint file. Device allocation info may NOT be up-to-date', { err: e });
    }
    this.#server = await startRegistrationServer(this.#d.dir, (r) => this.register(r));
    this.#d.log.info('Started device plugin registration server', { dir: this.#d.dir });
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const r of this.#resources.values()) r.endpoint?.close();
    await this.#server?.stop();
  }

  /** upstream's server.Register then PluginConnected: validated, dialled, its options asked. */
  async register(r: { version: string; endpoint: string; resourceName: string }): Promise<void> {
    this.#d.log.info('Got registration request from device plugin with resource', { resourceName: r.resourceName });
    this.#d.observe?.registered?.(r.resourceName);
    const v = validateRegistration(r, this.#d.dir);
    if ('error' in v) {
      this.#d.log.error('Bad registration request from device plugin', { resourceName: r.resourceName, err: v.error });
      throw new Error(v.error);
    }
    const endpoint = await this.#connect(r.resourceName, v.socket);
    this.#d.log.info('Device plugin connected', { resourceName: r.resourceName, endpoint: v.socket });
    void this.#watch(endpoint);
  }

  async #connect(resource: string, socket: string): Promise<PluginEndpoint> {
    const endpoint = await (this.#d.dial ?? dialPlugin)(resource, socket);
    let options: DevicePluginOptions__Output;
    try {
      options = await endpoint.options();
    } catch (e) {
      endpoint.close();
      throw new Error(`failed to get device plugin options: ${(e as Error).message}`);
    }
    const prev = this.#resources.get(resource);
    if (prev?.endpoint && prev.endpoint !== endpoint) prev.endpoint.close();
    this.#resources.set(resource, {
      devices: prev?.devices ?? [],
      stoppedAtMs: prev?.stoppedAtMs,
      reported: prev?.reported,
      endpoint,
      options,
    });
    this.#removed.delete(resource);
    return endpoint;
  }

  /**
   * ListAndWatch for as long as the plugin serves it. When the stream ends the resource's devices
   * turn unhealthy (upstream's PluginDisconnected) and the kubelet does not dial the socket again:
   * the plugin must register anew (upstream's endpoint run; the node e2e "kubelet will not retry
   * to list resources" tests check it). Nothing loops here, so there is no back-off to keep.
   */
  async #watch(endpoint: PluginEndpoint): Promise<void> {
    const err = await endpoint
      .listAndWatch((devices) => this.#onDevices(endpoint, devices))
      .then(
        () => undefined,
        (e: Error) => e,
      );
    if (this.#stopped || this.#resources.get(endpoint.resource)?.endpoint !== endpoint) return;
    this.#d.log.error('ListAndWatch ended unexpectedly for device plugin', {
      resource: endpoint.resource,
      err: err?.message ?? 'stream closed',
    });
    this.#disconnected(endpoint.resource);
    endpoint.close();
  }

  /** upstream's genericDeviceUpdateCallback: the plugin's whole list replaces the resource's. */
  #onDevices(endpoint: PluginEndpoint, devices: Device__Output[]) {
    const r = this.#resources.get(endpoint.resource);
    if (!r || r.endpoint !== endpoint) return;
    r.devices = devices.map((d) => ({
      id: d.ID,
      healthy: d.health === 'Healthy',
      numaNodes: (d.topology?.nodes ?? []).map((n) => Number(n.ID)),
    }));
    r.stoppedAtMs = undefined;
    const reported = reportedHealth(r.devices);
    const changed = changedDevices(r.reported, reported);
    r.reported = reported;
    this.#checkpoint();
    const pods = changed.length ? podsWithDevices(this.#pods, endpoint.resource, changed) : [];
    if (pods.length) this.#d.podsChanged?.(pods);
    this.#d.log.v(2, 'Processed device updates for resource', {
      resourceName: endpoint.resource,
      totalCount: devices.length,
      healthyCount: r.devices.filter((d) => d.healthy).length,
    });
  }

  /** upstream's PluginDisconnected: every device unhealthy, the grace starts. */
  #disconnected(resource: string) {
    const r = this.#resources.get(resource);
    if (!r) return;
    r.devices = r.devices.map((d) => ({ ...d, healthy: false }));
    r.stoppedAtMs = this.#now();
    this.#d.log.info('Endpoint became unhealthy', { resourceName: resource });
  }

  /** upstream's isDevicePluginResource: registered now, or allocated before (from the checkpoint). */
  isDeviceResource = (name: string): boolean => {
    if (this.#resources.has(name)) return true;
    for (const containers of this.#pods.values()) for (const res of containers.values()) if (res.has(name)) return true;
    return false;
  };

  /** upstream's GetCapacity for the Node's status; removed resources stay at 0. */
  capacity(): { capacity: Record<string, number>; allocatable: Record<string, number> } {
    const c = capacity(this.#resources, this.#now());
    for (const name of c.deleted) {
      this.#resources.get(name)?.endpoint?.close();
      this.#resources.delete(name);
      this.#removed.add(name);
    }
    if (c.deleted.length) this.#checkpoint();
    for (const name of this.#removed) {
      c.capacity[name] = 0;
      c.allocatable[name] = 0;
    }
    return { capacity: c.capacity, allocatable: c.allocatable };
  }

  /** upstream's UpdateAllocatedDevices: the devices of pods no longer active are free again. */
  updateAllocatedDevices(alsoActive?: string): void {
    if (!this.#d.sourcesReady()) return;
    const active = new Set(this.#d.activePods());
    if (alsoActive) active.add(alsoActive);
    let changed = false;
    for (const uid of [...this.#affinity.keys()]) if (!active.has(uid)) this.#affinity.delete(uid);
    for (const uid of [...this.#pods.keys()])
      if (!active.has(uid)) {
        this.#pods.delete(uid);
        changed = true;
      }
    if (changed) this.#checkpoint();
  }

  /** What admission plans against (pure data for planPodDevices), after freeing the devices of finished pods. */
  admissionInput(pod: Pod): PodPlanInput {
    this.updateAllocatedDevices(pod.metadata?.uid);
    const running = this.#d.runningAtStart;
    return {
      resources: this.#resources,
      pods: this.#pods,
      isDeviceResource: this.isDeviceResource,
      // Only until the sources are ready: a restarted kubelet's running containers keep what they have.
      runningAtStart: running && !this.#d.sourcesReady() ? (uid, name) => running.has(`${uid}/${name}`) : undefined,
      affinity: (uid, name) => this.#affinity.get(uid)?.get(name),
    };
  }

  #hintsInput(): HintsInput {
    return {
      resources: this.#resources,
      pods: this.#pods,
      isDeviceResource: this.isDeviceResource,
      numaNodes: this.#d.numaNodes ?? [0],
    };
  }

  /** upstream's GetTopologyHints (topology manager scope container), after freeing the devices of finished pods. */
  hints(pod: Pod, c: Container): ProviderHints {
    this.updateAllocatedDevices(pod.metadata?.uid);
    return containerTopologyHints(this.#hintsInput(), pod, c, reusableBefore(pod, c.name, this.#pods));
  }

  /** upstream's GetPodTopologyHints (scope pod). */
  podHints(pod: Pod): ProviderHints {
    this.updateAllocatedDevices(pod.metadata?.uid);
    return podTopologyHints(this.#hintsInput(), pod);
  }

  /**
   * upstream's Allocate as a hint provider: the container's devices, aligned to the topology
   * manager's affinity, are the pod's from admission on (the plugin is asked at container
   * creation). Containers come in order, init containers first, so the devices the earlier
   * ones left are reused. Throws (UnexpectedAdmissionError) when they cannot be had.
   */
  allocate(pod: Pod, c: Container, hint: TopologyHint): void {
    const uid = pod.metadata!.uid!;
    const byContainer = this.#affinity.get(uid) ?? new Map<string, NUMAMask | undefined>();
    byContainer.set(c.name, hint.affinity);
    this.#affinity.set(uid, byContainer);
    const input = this.admissionInput(pod);
    const plan = planContainerDevices(pod, c, input, reusableBefore(pod, c.name, this.#pods), devicesInUse(this.#pods));
    if ('error' in plan) throw new Error(plan.error);
    for (const [container, resource, ids] of plan.assign)
      this.#set(uid, container, resource, { byNuma: byNuma(ids, this.#resources.get(resource)) });
  }

  /** Records the devices an admitted pod's containers get; the plugin is asked at container creation. */
  reserve(pod: Pod): string | undefined {
    const plan = planPodDevices(pod, this.admissionInput(pod));
    if ('error' in plan) return plan.error;
    const uid = pod.metadata!.uid!;
    for (const [container, resource, ids] of plan.assign)
      this.#set(uid, container, resource, { byNuma: byNuma(ids, this.#resources.get(resource)) });
    return undefined;
  }

  #set(uid: string, container: string, resource: string, d: ContainerDevices) {
    const containers = this.#pods.get(uid) ?? new Map<string, Map<string, ContainerDevices>>();
    const resources = containers.get(container) ?? new Map<string, ContainerDevices>();
    resources.set(resource, d);
    containers.set(container, resources);
    this.#pods.set(uid, containers);
  }

  /**
   * upstream's GetDeviceRunContainerOptions, with its Allocate: the plugin is asked for each
   * device resource of the container (once; a restart reuses the answer), PreStartContainer
   * when the plugin wants it, and the answers merged for the CRI config.
   */
  async containerOptions(pod: Pod, c: Container): Promise<DeviceRunOptions | undefined> {
    const uid = pod.metadata!.uid!;
    const requests = deviceRequests(c, this.isDeviceResource);
    if (!requests.length) return undefined;
    // Devices lost across a restart (no checkpoint entry yet): allocated now, as upstream's re-allocation.
    if (requests.some(([r]) => !this.#pods.get(uid)?.get(c.name)?.has(r))) {
      const err = this.reserve(pod);
      if (err) throw new Error(err);
    }
    const responses: ContainerAllocateResponse__Output[] = [];
    for (const [resource] of requests) {
      const devices = this.#pods.get(uid)?.get(c.name)?.get(resource);
      if (!devices) continue;
      const r = this.#resources.get(resource);
      if (!devices.response) {
        if (!r?.endpoint || r.stoppedAtMs !== undefined) throw new Error(`unknown Device Plugin ${resource}`);
        await this.#preferred(pod, c.name, resource, devices, r);
        const started = this.#now();
        const resp = await r.endpoint.allocate(deviceIds(devices));
        this.#d.observe?.allocated?.(resource, (this.#now() - started) / 1000);
        if (!resp.containerResponses.length) throw new Error('no containers return in allocation response');
        devices.response = resp.containerResponses[0];
        this.#checkpoint();
      }
      if (r?.options?.preStartRequired) {
        if (!r.endpoint || r.stoppedAtMs !== undefined)
          throw new Error(`endpoint not found in cache for a registered resource: ${resource}`);
        await r.endpoint.preStartContainer(deviceIds(devices)).catch((e: Error) => {
          throw new Error(`device plugin PreStartContainer rpc failed with err: ${e.message}`);
        });
      }
      responses.push(devices.response!);
    }
    return deviceRunOptions(responses);
  }

  /**
   * upstream's callGetPreferredAllocationIfAvailable, asked before the plugin's Allocate: the
   * container's devices are chosen again as at admission (devicesToAllocate, its own left out of
   * those in use), and if that gets as far as asking the plugin, it is asked what upstream asks
   * (the aligned or available devices with those already taken, which it must include) and the
   * choice made once more with its answer.
   */
  async #preferred(pod: Pod, container: string, resource: string, devices: ContainerDevices, r: Resource) {
    if (!r.options?.getPreferredAllocationAvailable || !r.endpoint) return;
    const uid = pod.metadata!.uid!;
    const mine = deviceIds(devices);
    const inUse = new Set<string>();
    for (const [uid2, containers] of this.#pods)
      for (const [name, res] of containers)
        if (uid2 !== uid || name !== container) for (const id of deviceIds(res.get(resource) ?? { byNuma: {} })) inUse.add(id);
    const input = {
      resource,
      required: mine.length,
      reusable: reusableBefore(pod, container, this.#pods).get(resource) ?? new Set<string>(),
      state: r,
      inUse,
      affinity: this.#affinity.get(uid)?.get(container),
    };
    const first = devicesToAllocate(input);
    if ('error' in first || !first.ask) return;
    this.#d.log.v(4, 'Issuing a GetPreferredAllocation call for container', {
      resourceName: resource,
      containerName: container,
      podUID: uid,
    });
    const resp = await r.endpoint.getPreferredAllocation(first.ask.available, first.ask.mustInclude, first.ask.size).catch((e: Error) => {
      throw new Error(`device plugin GetPreferredAllocation rpc failed with err: ${e.message}`);
    });
    const chosen = devicesToAllocate({ ...input, preferred: [...new Set(resp.containerResponses[0]?.deviceIDs ?? [])] });
    if ('devices' in chosen && chosen.devices.length === mine.length) devices.byNuma = byNuma(chosen.devices, r);
  }

  /** The devices of each container of a pod (upstream's GetDevices), for the PodResources API. */
  containerDevices(uid: string, container: string): { resourceName: string; deviceIds: string[]; numaNodes: number[] }[] {
    const out = [];
    for (const [resourceName, d] of this.#pods.get(uid)?.get(container) ?? []) {
      if (!d.response) continue;
      const numa = Object.keys(d.byNuma)
        .map(Number)
        .filter((n) => n >= 0);
      out.push({ resourceName, deviceIds: deviceIds(d), numaNodes: numa });
    }
    return out;
  }

  /** The healthy devices of each resource (upstream's GetAllocatableDevices). */
  allocatableDevices(): { resourceName: string; deviceId: string; numaNodes: number[] }[] {
    return [...this.#resources].flatMap(([resourceName, r]) =>
      r.devices.filter((d) => d.healthy).map((d) => ({ resourceName, deviceId: d.id, numaNodes: d.numaNodes })),
    );
  }

  /** upstream's UpdateAllocatedResourcesStatus: the health of each container's devices in its status. */
  allocatedResourcesStatus(pod: Pod, status: PodStatus): PodStatus {
    const containers = this.#pods.get(pod.metadata?.uid ?? '');
    if (!containers) return status;
    return withResourceStatuses(status, (name) => deviceResourcesStatus(containers.get(name), (r) => this.#resources.get(r)?.reported));
  }

  /** The devices in use, per resource (for tests and logs). */
  inUse(): Map<string, Set<string>> {
    return devicesInUse(this.#pods);
  }

  /** upstream's writeCheckpoint: the assignments the plugins answered, and the registered healthy devices. */
  #checkpoint() {
    const entries: NonNullable<CheckpointData['PodDeviceEntries']> = [];
    for (const [uid, containers] of this.#pods)
      for (const [container, resources] of containers)
        for (const [resource, d] of resources) {
          if (!d.response) continue;
          const type = allocResponseType();
          entries.push({
            PodUID: uid,
            ContainerName: container,
            ResourceName: resource,
            DeviceIDs: d.byNuma,
            AllocResp: Buffer.from(type.encode(type.fromObject(d.response)).finish()).toString('base64'),
          });
        }
    const registered = Object.fromEntries(
      [...this.#resources].map(([name, r]) => [name, r.devices.filter((d) => d.healthy).map((d) => d.id)]),
    );
    try {
      writeCheckpoint(this.#d.dir, { PodDeviceEntries: entries, RegisteredDevices: registered });
    } catch (e) {
      this.#d.log.error('Failed to write checkpoint file', { err: e });
    }
  }

  /** upstream's readCheckpoint: assignments back, and each registered resource at 0 devices, stopped, until its plugin registers again. */
  #restore(data: CheckpointData | undefined) {
    if (!data) return;
    for (const e of data.PodDeviceEntries ?? []) {
      try {
        const type = allocResponseType();
        const response = type.toObject(
          type.decode(Buffer.from(e.AllocResp ?? '', 'base64')),
          CONVERSION,
        ) as ContainerAllocateResponse__Output;
        const numa = Object.fromEntries(Object.entries(e.DeviceIDs ?? {}).map(([k, v]) => [k, v ?? []]));
        this.#set(e.PodUID, e.ContainerName, e.ResourceName, { byNuma: numa, response });
      } catch (err) {
        this.#d.log.error("Can't unmarshal allocResp", {
          podUID: e.PodUID,
          containerName: e.ContainerName,
          resourceName: e.ResourceName,
          err,
        });
      }
    }
    for (const name of Object.keys(data.RegisteredDevices ?? {})) this.#resources.set(name, { devices: [], stoppedAtMs: this.#now() });
    this.#d.log.v(4, 'Read data from checkpoint file', { entries: data.PodDeviceEntries?.length ?? 0 });
  }
}
