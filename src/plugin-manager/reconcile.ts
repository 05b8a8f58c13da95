// What one pass of the plugin manager does (upstream's reconciler.reconcile over the desired and
// actual states of the world): the sockets found now are the desired state, the plugins
// registered the actual one. A socket file's identity (device, inode, mtime) stands in for the
// UUID upstream mints on each create event: a socket replaced at the same path is a new plugin,
// so the old one is deregistered and the new one registered.
import type { CheckedPluginInfo } from './validate.ts';

export interface RegisteredPlugin extends CheckedPluginInfo {
  /** The identity of the socket file it registered from. */
  socketId: string;
}

/** A failed registration of one socket file, tried again from atMs (upstream's exponential backoff per socket path). */
export interface Retry {
  socketId: string;
  atMs: number;
}

export interface PassInput {
  /** Socket path -> identity, as found under plugins_registry now. */
  found: ReadonlyMap<string, string>;
  registered: ReadonlyMap<string, Pick<RegisteredPlugin, 'socketId'>>;
  /** Socket paths with a registration under way: nothing else starts on them (upstream's goroutinemap). */
  busy: ReadonlySet<string>;
  retries: ReadonlyMap<string, Retry>;
  nowMs: number;
  /** How many more registrations may start now. */
  slots: number;
}

/** Socket paths to deregister, then to register, in that order as upstream. */
export interface Pass {
  deregister: string[];
  register: string[];
}

export function reconcile(i: PassInput): Pass {
  const deregister: string[] = [];
  for (const [path, p] of i.registered) if (!i.busy.has(path) && i.found.get(path) !== p.socketId) deregister.push(path);
  const register: string[] = [];
  for (const [path, id] of i.found) {
    if (register.length >= i.slots) break;
    if (i.busy.has(path) || i.registered.get(path)?.socketId === id) continue;
    // The backoff is of that socket file: a plugin that came back on a new socket is tried at once.
    const retry = i.retries.get(path);
    if (retry?.socketId === id && retry.atMs > i.nowMs) continue;
    register.push(path);
  }
  return { deregister, register };
}
