// The kubelet's client of one device plugin's endpoint (upstream's plugin/v1beta1 client and
// endpointImpl): dial its socket, ask its options, stream ListAndWatch, and the allocation calls.
import { type Client, credentials, makeClientConstructor, type ServiceError } from '@grpc/grpc-js';
import type { AllocateResponse__Output } from './generated/v1beta1/AllocateResponse.ts';
import type { Device__Output } from './generated/v1beta1/Device.ts';
import type { DevicePluginClient } from './generated/v1beta1/DevicePlugin.ts';
import type { DevicePluginOptions__Output } from './generated/v1beta1/DevicePluginOptions.ts';
import type { PreferredAllocationResponse__Output } from './generated/v1beta1/PreferredAllocationResponse.ts';
import { deviceServices } from './proto.ts';

// upstream's dial timeout and KubeletPreStartContainerRPCTimeoutInSecs.
const DIAL_TIMEOUT_MS = 10_000;
const PRE_START_TIMEOUT_MS = 30_000;
const CALL_TIMEOUT_MS = 30_000;

export interface PluginEndpoint {
  readonly resource: string;
  readonly socket: string;
  options(): Promise<DevicePluginOptions__Output>;
  /** Streams ListAndWatch; resolves or rejects when the stream ends (the plugin is gone). */
  listAndWatch(onDevices: (devices: Device__Output[]) => void): Promise<void>;
  getPreferredAllocation(available: string[], mustInclude: string[], size: number): Promise<PreferredAllocationResponse__Output>;
  allocate(ids: string[]): Promise<AllocateResponse__Output>;
  preStartContainer(ids: string[]): Promise<void>;
  close(): void;
}

let ctor: (new (target: string, creds: ReturnType<typeof credentials.createInsecure>, options: object) => DevicePluginClient) | undefined;

function unary<Req, Res>(client: DevicePluginClient, method: string, req: Req, timeoutMs: number): Promise<Res> {
  return new Promise((resolve, reject) => {
    const call = (client as unknown as Record<string, (r: Req, o: object, cb: (e: ServiceError | null, r?: Res) => void) => void>)[method]!;
    call.call(client, req, { deadline: Date.now() + timeoutMs }, (e, r) => (e ? reject(e) : resolve(r!)));
  });
}

/** Connects to a plugin's socket, waiting up to upstream's 10 s for it to answer (grpc.WithBlock). */
export async function dialPlugin(resource: string, socket: string): Promise<PluginEndpoint> {
  ctor ??= makeClientConstructor(deviceServices().devicePlugin, 'DevicePlugin') as unknown as typeof ctor;
  const client = new ctor!(`unix://${socket}`, credentials.createInsecure(), { 'grpc.default_authority': 'localhost' });
  await new Promise<void>((resolve, reject) =>
    (client as unknown as Client).waitForReady(Date.now() + DIAL_TIMEOUT_MS, (e) =>
      e ? reject(new Error(`failed to dial device plugin: ${e.message}`)) : resolve(),
    ),
  ).catch((e) => {
    client.close();
    throw e;
  });
  let stream: ReturnType<DevicePluginClient['ListAndWatch']> | undefined;
  return {
    resource,
    socket,
    options: () => unary(client, 'GetDevicePluginOptions', {}, CALL_TIMEOUT_MS),
    listAndWatch(onDevices) {
      return new Promise<void>((resolve, reject) => {
        stream = client.ListAndWatch({});
        stream.on('data', (r: { devices: Device__Output[] }) => onDevices(r.devices));
        stream.on('error', reject);
        stream.on('end', resolve);
      });
    },
    getPreferredAllocation: (available, mustInclude, size) =>
      unary(
        client,
        'GetPreferredAllocation',
        { containerRequests: [{ availableDeviceIDs: available, mustIncludeDeviceIDs: mustInclude, allocationSize: size }] },
        CALL_TIMEOUT_MS,
      ),
    allocate: (ids) => unary(client, 'Allocate', { containerRequests: [{ devicesIds: ids }] }, CALL_TIMEOUT_MS),
    preStartContainer: async (ids) => {
      await unary(client, 'PreStartContainer', { devicesIds: ids }, PRE_START_TIMEOUT_MS);
    },
    close() {
      stream?.cancel();
      client.close();
    },
  };
}
