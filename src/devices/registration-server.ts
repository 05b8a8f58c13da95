// The Registration service on <root-dir>/device-plugins/kubelet.sock (upstream's plugin/v1beta1
// server.Start): stale sockets in the directory are removed first, so that plugins, which
// watch for kubelet.sock to be created again, know to register anew.
import { lstatSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Server, ServerCredentials, status, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import type { RegisterRequest__Output } from './generated/v1beta1/RegisterRequest.ts';
import type { Empty } from './generated/v1beta1/Empty.ts';
import { CHECKPOINT_FILE } from './checkpoint.ts';
import { deviceServices } from './proto.ts';

export const KUBELET_SOCKET = 'kubelet.sock';

/** upstream's CleanupPluginDirectory: every socket in dir goes, the checkpoint and anything else stays. */
export function cleanupPluginDirectory(dir: string): string[] {
  const removed: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === CHECKPOINT_FILE) continue;
    const path = join(dir, name);
    try {
      if (!lstatSync(path).isSocket()) continue;
      rmSync(path, { force: true });
      removed.push(path);
    } catch {
      // Gone meanwhile.
    }
  }
  return removed;
}

/** Serves Registration; register rejects with the reason the plugin is told. */
export async function startRegistrationServer(
  dir: string,
  register: (r: RegisterRequest__Output) => Promise<void>,
): Promise<{ socket: string; stop(): Promise<void> }> {
  mkdirSync(dir, { recursive: true, mode: 0o750 });
  cleanupPluginDirectory(dir);
  const socket = join(dir, KUBELET_SOCKET);
  const server = new Server();
  server.addService(deviceServices().registration, {
    Register(call: ServerUnaryCall<RegisterRequest__Output, Empty>, cb: sendUnaryData<Empty>) {
      register(call.request).then(
        () => cb(null, {}),
        (e: Error) => cb({ code: status.UNKNOWN, details: e.message }),
      );
    },
  });
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix://${socket}`, ServerCredentials.createInsecure(), (e) => (e ? reject(e) : resolve())),
  );
  return {
    socket,
    stop: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
        setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 1000).unref();
      }),
  };
}
