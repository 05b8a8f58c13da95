// A provider's cache of the credentials its plugin returned, and the single flight of its
// calls, as upstream's pluginProvider keeps them (cache.NewExpirationStore keyed by
// generateCacheKey, singleflight.Group).
import { registryOf } from './match.ts';

/** A plugin's answer as a docker config: registry pattern -> credential. */
export type DockerConfig = Record<string, { username: string; password: string }>;

// Angle brackets cannot occur in an image or registry name (upstream's globalCacheKey).
export const GLOBAL_CACHE_KEY = '<global>';
const PURGE_INTERVAL_MS = 15 * 60_000;

/**
 * Upstream's generateCacheKey: the base key (image, registry or <global>) and the service
 * account part; JSON arrays are as unambiguous as its length-prefixed bytes.
 */
export const cacheKey = (base: string, serviceAccountKey: string) => JSON.stringify([base, serviceAccountKey]);

/** Upstream's generateServiceAccountCacheKey: the SA's coordinates and annotations, plus the token's hash for cacheType Token. */
export function serviceAccountCacheKey(p: {
  namespace: string;
  name: string;
  uid: string;
  annotations: Record<string, string>;
  cacheType: string;
  tokenHash: string;
}): string {
  const annotations = Object.keys(p.annotations)
    .sort()
    .map((k) => [k, p.annotations[k]]);
  return JSON.stringify([p.namespace, p.name, p.uid, annotations, ...(p.cacheType === 'Token' ? ['token', p.tokenHash] : [])]);
}

/** The keys looked up for an image, in upstream's order (getCachedCredentials): image, registry, global. */
export const lookupKeys = (image: string, serviceAccountKey: string) =>
  [image, registryOf(image), GLOBAL_CACHE_KEY].map((base) => cacheKey(base, serviceAccountKey));

export class CredentialCache {
  readonly #entries = new Map<string, { credentials: DockerConfig; expiresAt: number }>();
  readonly #now: () => number;
  #lastPurge: number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
    this.#lastPurge = now();
  }

  /** The first live entry of keys; an expired one is dropped when met (the expiration store's Get). */
  get(keys: readonly string[]): DockerConfig | undefined {
    const now = this.#now();
    // Entries nobody asks for again are dropped every 15 minutes.
    if (now > this.#lastPurge + PURGE_INTERVAL_MS) {
      for (const [k, e] of this.#entries) if (now > e.expiresAt) this.#entries.delete(k);
      this.#lastPurge = now;
    }
    for (const k of keys) {
      const e = this.#entries.get(k);
      if (!e) continue;
      if (now > e.expiresAt) this.#entries.delete(k);
      else return e.credentials;
    }
    return undefined;
  }

  set(key: string, credentials: DockerConfig, ttlMs: number): void {
    this.#entries.set(key, { credentials, expiresAt: this.#now() + ttlMs });
  }

  get size(): number {
    return this.#entries.size;
  }
}

/** singleflight.Group.Do: concurrent calls with one key share the first one's promise. */
export class SingleFlight<T> {
  readonly #inFlight = new Map<string, Promise<T>>();

  do(key: string, fn: () => Promise<T>): Promise<T> {
    const running = this.#inFlight.get(key);
    if (running) return running;
    const p = fn().finally(() => this.#inFlight.delete(key));
    this.#inFlight.set(key, p);
    return p;
  }
}

/**
 * How long a response is kept (upstream's provide): its cacheDuration, else the provider's
 * default; undefined when it is not to be cached (a zero either way).
 */
export function cacheTtl(responseMs: number | undefined, defaultMs: number): number | undefined {
  const ttl = responseMs ?? defaultMs;
  return ttl === 0 ? undefined : ttl;
}
