// The two other ways upstream's kubelet keeps a pod's ConfigMaps and Secrets
// (configMapAndSecretChangeDetectionStrategy), beside the watch of object-cache.ts, with the same
// ObjectCache face:
// - Cache: upstream's TTL-based objectStore (pkg/kubelet/util/manager/cache_based_manager.go):
//   an object is read again once its TTL has passed (the Node's node.alpha.kubernetes.io/ttl,
//   which the TTL controller sets by cluster size, else a minute); a failed read keeps the last
//   object; a NotFound is kept like an object; dropped when no pod reads it any more.
// - Get: upstream's simple managers: a GET every time, nothing kept.
import { type ApiClient, isNotFound } from './client.ts';
import type { ObjectCache } from './object-cache.ts';
import { apiPath } from './paths.ts';

/** GetObjectTTLFromNodeFunc: the Node's node.alpha.kubernetes.io/ttl (whole seconds) in ms; undefined without one. */
export function objectTTLMs(node: { metadata?: { annotations?: Record<string, string> } } | undefined): number | undefined {
  const v = node?.metadata?.annotations?.['node.alpha.kubernetes.io/ttl'];
  return v !== undefined && /^[-+]?\d+$/.test(v) ? Number(v) * 1000 : undefined;
}

interface Entry<T> {
  object?: T;
  /** Set when the last read failed with no object to fall back on (upstream's data.err). */
  error?: unknown;
  at: number;
  refs: Set<string>;
}

/** Pure: upstream's isObjectOlder, on resourceVersions (integers to the apiserver that made them). */
export function isOlder(fresh: { metadata?: { resourceVersion?: string } } | undefined, cached: typeof fresh): boolean {
  const rv = (o: typeof fresh) => {
    const v = o?.metadata?.resourceVersion;
    return v && /^\d+$/.test(v) ? BigInt(v) : undefined;
  };
  const a = rv(fresh),
    b = rv(cached);
  return a !== undefined && b !== undefined && a < b;
}

/** The Cache strategy. ttlMs: the Node's annotation in ms, or undefined for the one-minute default. */
export function ttlCachedObjects<T extends { metadata?: { resourceVersion?: string } }>(
  api: Pick<ApiClient, 'get'>,
  resource: string,
  ttlMs: () => number | undefined,
  now: () => number = Date.now,
): ObjectCache<T> {
  const entries = new Map<string, Entry<T>>();
  return {
    async get(namespace, name, referencedBy) {
      const key = `${namespace}/${name}`;
      let e = entries.get(key);
      if (!e) entries.set(key, (e = { at: Number.NEGATIVE_INFINITY, refs: new Set() }));
      if (referencedBy) e.refs.add(referencedBy);
      if (e.error === undefined && now() < e.at + (ttlMs() ?? 60_000)) return e.object;
      try {
        const fresh = await api.get<T>(apiPath({ resource, namespace, name }));
        if (!isOlder(fresh, e.object)) Object.assign(e, { object: fresh, error: undefined, at: now() });
      } catch (err) {
        if (isNotFound(err)) Object.assign(e, { object: undefined, error: undefined, at: now() });
        // No object to fall back on: the read's failure is the answer (upstream returns it).
        else if (e.object === undefined) throw err;
      }
      return e.object;
    },
    release(referencedBy) {
      for (const [key, e] of entries) if (e.refs.delete(referencedBy) && e.refs.size === 0) entries.delete(key);
    },
    stop() {
      entries.clear();
    },
  };
}

/** The Get strategy: read each time. */
export function fetchedObjects<T>(api: Pick<ApiClient, 'get'>, resource: string): ObjectCache<T> {
  return {
    get: (namespace, name) =>
      api.get<T>(apiPath({ resource, namespace, name })).catch((e: unknown) => (isNotFound(e) ? undefined : Promise.reject(e))),
    release() {},
    stop() {},
  };
}
