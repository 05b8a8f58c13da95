// Single objects read by name (a pod's ConfigMaps and Secrets), each kept by its own watch
// (fieldSelector metadata.name, which the node authorizer allows for what a node's pods
// reference): upstream's watch-based object cache (pkg/kubelet/util/manager,
// objectCache.Get). A volume refreshed at every resync then costs no request; the watch is
// renewed every 30-60 min, stopped once the object is immutable, and dropped when the last pod
// reading it goes (upstream's UnregisterPod: the node authorizer would refuse the next watch),
// when nothing has asked for it for a while (startRecycleIdleWatch), or when the apiserver
// refuses it to a node that no longer reads it.
import { ApiError, type ApiClient } from './client.ts';
import { reflector } from './reflector.ts';
import { apiPath } from './paths.ts';
import type { Logger } from '../log/log.ts';

interface Named {
  metadata?: { name?: string; resourceVersion?: string };
  immutable?: boolean;
}

/** Longer than a resync period (1 min and its jitter), in which every mounted volume is read again. */
const UNUSED_MS = 90_000;

/**
 * A watch of one object is renewed after 30-60 min, not the 5-10 of a reflector's default, as
 * upstream's objectCache asks (MinWatchTimeout 30 min, "to avoid recreating watches too often"):
 * a node's 4-6 of them (its pods' namespaces' kube-root-ca.crt, kube-proxy's and flannel's
 * configmaps) made 1.2 watch requests a node a minute in run AN's cluster, upstream's 0.7.
 */
const WATCH_TIMEOUT_MS = 30 * 60_000;

export interface ObjectCache<T> {
  /**
   * The object as last seen, undefined when it does not exist; throws when its watch never
   * listed. referencedBy: the pod reading it (upstream's RegisterPod), until release.
   */
  get(namespace: string, name: string, referencedBy?: string): Promise<T | undefined>;
  /** The pod is gone: the watches of objects no other pod reads stop (upstream's UnregisterPod). */
  release(referencedBy: string): void;
  stop(): void;
}

interface Item<T> {
  object?: T;
  synced: boolean;
  lastError?: unknown;
  /** Resolves at the first list. */
  ready: Promise<void>;
  stop(): void;
  lastAccess: number;
  /** The pods reading it: the node authorizer lets the node watch it while one of them exists. */
  refs: Set<string>;
}

/**
 * resource: the plural (configmaps, secrets). idleMs: upstream's maxIdleTime, five resync
 * periods. syncWaitMs: how long a first read waits for the first list.
 */
export function watchedObjects<T extends Named>(
  api: Pick<ApiClient, 'get' | 'watch'>,
  resource: string,
  log: Logger,
  opts: { idleMs?: number; syncWaitMs?: number; sweepEveryMs?: number; now?: () => number } = {},
): ObjectCache<T> {
  const idleMs = opts.idleMs ?? 300_000,
    syncWaitMs = opts.syncWaitMs ?? 10_000,
    now = opts.now ?? Date.now;
  const items = new Map<string, Item<T>>();
  const drop = (key: string, item: Item<T>) => {
    item.stop();
    if (items.get(key) === item) items.delete(key);
  };

  function start(key: string, namespace: string, name: string): Item<T> {
    let synced!: () => void;
    const item: Item<T> = { synced: false, ready: new Promise((r) => (synced = r)), stop: () => {}, lastAccess: now(), refs: new Set() };
    const seen = (o: T | undefined) => {
      item.object = o;
      item.synced = true;
      synced();
      // Nothing can change an immutable object but its deletion, which a new item would see.
      if (o?.immutable) item.stop();
    };
    const path = apiPath({ resource, namespace }, { fieldSelector: `metadata.name=${name}` });
    item.stop = reflector<T>(
      api as ApiClient,
      path,
      `${resource} ${namespace}/${name}`,
      {
        list: (found) => seen(found.find((o) => o.metadata?.name === name)),
        event: (type, o) => seen(type === 'DELETED' ? undefined : o),
      },
      log,
      {
        onError: (e) => {
          item.lastError = e;
          // Refused or gone, and not read for a resync period: no pod of the node uses it any
          // more (the node authorizer refuses what none references, e.g. after its namespace
          // went). Upstream stops the watch as the last pod referencing it is unregistered.
          if (e instanceof ApiError && (e.status === 403 || e.status === 404) && now() - item.lastAccess > UNUSED_MS) drop(key, item);
        },
        minWatchTimeoutMs: WATCH_TIMEOUT_MS,
      },
    ).stop;
    return item;
  }

  const sweep = setInterval(() => {
    for (const [key, item] of items) if (now() - item.lastAccess >= idleMs) drop(key, item);
  }, opts.sweepEveryMs ?? 60_000);
  sweep.unref();

  return {
    async get(namespace, name, referencedBy) {
      const key = `${namespace}/${name}`;
      let item = items.get(key);
      if (!item) items.set(key, (item = start(key, namespace, name)));
      item.lastAccess = now();
      if (referencedBy) item.refs.add(referencedBy);
      if (!item.synced) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([item.ready, new Promise((r) => (timer = setTimeout(r, syncWaitMs)))]);
        clearTimeout(timer);
        if (!item.synced) {
          const why = item.lastError instanceof Error ? `: ${item.lastError.message}` : '';
          throw new Error(`failed to sync ${resource} cache${why}`);
        }
      }
      return item.object;
    },
    release(referencedBy) {
      for (const [key, item] of items) if (item.refs.delete(referencedBy) && !item.refs.size) drop(key, item);
    },
    stop() {
      clearInterval(sweep);
      for (const item of items.values()) item.stop();
      items.clear();
    },
  };
}
