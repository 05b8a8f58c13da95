// One registration of the plugin behind a socket (upstream's operationGenerator
// GenerateRegisterPluginFunc): ask it what it is, let its type's handler validate and register
// it, and tell the plugin the outcome, a refusal with its reason as well.
import { credentials, makeClientConstructor, type ServiceError } from '@grpc/grpc-js';
import type { PluginHandler } from './handler.ts';
import type { PluginInfo__Output } from './generated/pluginregistration/PluginInfo.ts';
import type { RegistrationClient } from './generated/pluginregistration/Registration.ts';
import { registrationService } from './proto.ts';
import type { RegisteredPlugin } from './reconcile.ts';
import { checkPluginInfo } from './validate.ts';

// upstream's dialTimeoutDuration, the GetInfo context timeout, and notifyTimeoutDuration.
const DIAL_TIMEOUT_MS = 10_000;
const GET_INFO_TIMEOUT_MS = 1_000;
const NOTIFY_TIMEOUT_MS = 5_000;

type ClientCtor = new (target: string, creds: ReturnType<typeof credentials.createInsecure>, options: object) => RegistrationClient;
let ctor: ClientCtor | undefined;

/** upstream's dial: waits for the plugin's socket to answer, or for the manager to stop. */
async function dial(socketPath: string, signal: AbortSignal): Promise<RegistrationClient> {
  ctor ??= makeClientConstructor(registrationService(), 'Registration') as unknown as ClientCtor;
  const client = new ctor(`unix://${socketPath}`, credentials.createInsecure(), { 'grpc.default_authority': 'localhost' });
  try {
    await new Promise<void>((resolve, reject) => {
      // Closing the client does not end its waitForReady (grpc-js reconnects), so a stop rejects here.
      const stopped = () => reject(new Error('the plugin manager stopped'));
      signal.addEventListener('abort', stopped, { once: true });
      client.waitForReady(Date.now() + DIAL_TIMEOUT_MS, (e) => {
        signal.removeEventListener('abort', stopped);
        if (e) reject(e);
        else resolve();
      });
    });
  } catch (e) {
    client.close();
    throw new Error(`RegisterPlugin error -- dial failed at socket ${socketPath}, err: ${(e as Error).message}`);
  }
  return client;
}

const getInfo = (client: RegistrationClient) =>
  new Promise<PluginInfo__Output>((resolve, reject) =>
    client.GetInfo({}, { deadline: Date.now() + GET_INFO_TIMEOUT_MS }, (e: ServiceError | null, r?: PluginInfo__Output) =>
      e ? reject(e) : resolve(r!),
    ),
  );

const notify = (client: RegistrationClient, pluginRegistered: boolean, error: string) =>
  new Promise<void>((resolve, reject) =>
    client.NotifyRegistrationStatus({ pluginRegistered, error }, { deadline: Date.now() + NOTIFY_TIMEOUT_MS }, (e: ServiceError | null) =>
      e ? reject(e) : resolve(),
    ),
  );

/** Registers the plugin on socketPath with its handler; rejects with why it was not, after telling the plugin. */
export async function registerSocket(
  socketPath: string,
  socketId: string,
  handlers: ReadonlyMap<string, PluginHandler>,
  signal: AbortSignal,
): Promise<RegisteredPlugin> {
  const client = await dial(socketPath, signal);
  try {
    const info = await getInfo(client).catch((e: Error) => {
      throw new Error(`RegisterPlugin error -- failed to get plugin info using RPC GetInfo at socket ${socketPath}, err: ${e.message}`);
    });
    // upstream's notifyPlugin with registered=false: the plugin learns why, the caller gets the same error.
    const refuse = async (error: string): Promise<never> => {
      await notify(client, false, error).catch((e: Error) => {
        throw new Error(`RegisterPlugin error -- failed to send error at socket ${socketPath}, err: ${error}: ${e.message}`);
      });
      throw new Error(error);
    };
    const plugin = checkPluginInfo(info, socketPath, (type) => handlers.has(type));
    if ('error' in plugin) return await refuse(plugin.error);
    const handler = handlers.get(plugin.type)!;
    const { name, endpoint, versions } = plugin;
    try {
      handler.validatePlugin(name, endpoint, versions);
    } catch (e) {
      return await refuse(`RegisterPlugin error -- plugin validation failed with err: ${(e as Error).message}`);
    }
    try {
      await handler.registerPlugin(name, endpoint, versions);
    } catch (e) {
      return await refuse(`RegisterPlugin error -- plugin registration failed with err: ${(e as Error).message}`);
    }
    // Told after the handler registered it, as upstream: a plugin that cannot hear it is taken back.
    try {
      await notify(client, true, '');
    } catch (e) {
      handler.deRegisterPlugin(name, endpoint);
      throw new Error(`RegisterPlugin error -- failed to send registration status at socket ${socketPath}, err: ${(e as Error).message}`);
    }
    return { ...plugin, socketId };
  } finally {
    client.close();
  }
}
