// List then watch from the list's resourceVersion, forever: the one loop every
// apiserver-backed view uses. A 410 Gone lists again; the consumer gets the full list
// and diffs it, so nothing is lost between watches. With the client's watchList (client-go's
// WatchListClient gate, on in v1.36) the list comes as a watch's initial events instead, as
// upstream's Reflector.watchList asks for it (sendInitialEvents, resourceVersionMatch
// NotOlderThan): the apiserver streams it from its watch cache, no list is built, and the same
// watch goes on after the bookmark that ends it.
import { type ApiClient, apiserverBehind, behindWaits, isGone, type WatchEvent } from './client.ts';
import { backoff, jittered, sleep } from '../backoff/backoff.ts';
import type { Logger } from '../log/log.ts';

interface Listed<T> {
  items: T[];
  metadata?: { resourceVersion?: string };
}
interface Versioned {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; annotations?: Record<string, string> };
}

/** The bookmark's annotation that ends a watch's initial events (metav1.InitialEventsAnnotationKey). */
const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';
const key = (o: Versioned) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

export interface ReflectorHandlers<T> {
  /** A complete list: everything that exists now. */
  list(items: T[]): void;
  /** One change after the list. */
  event(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: T): void;
}

/** path is a collection URL with its query (e.g. a fieldSelector); what is a name in logs. */
export function reflector<T extends Versioned>(
  api: ApiClient,
  path: string,
  what: string,
  h: ReflectorHandlers<T>,
  log: Logger,
  opts: {
    /** Told of each failed list or watch (a reader waiting for the first list can say why). */
    onError?: (e: unknown) => void;
    /** Each watch asks the server to end it after this to twice this (client-go's MinWatchTimeout, 5 min by default). */
    minWatchTimeoutMs?: number;
  } = {},
): { stop(): void } {
  const { onError, minWatchTimeoutMs = 300_000 } = opts;
  const abort = new AbortController();
  const retry = backoff(800, 30_000);
  // A first list refused by an apiserver behind the pod that references the object (a new
  // namespace's kube-root-ca.crt in a burst, which all its pods wait for) is asked again sooner.
  const behind = behindWaits();
  let listed = false;
  const sep = path.includes('?') ? '&' : '?';
  (async () => {
    let rv: string | undefined;
    // Set when a watch-list fails before its initial events end: this round lists (upstream's
    // fallbackToList, for an apiserver without the WatchList feature).
    let listOnce = false;
    // A watch's event once the list is had.
    const follow = (ev: WatchEvent<T>) => {
      rv = ev.object.metadata?.resourceVersion ?? rv;
      if (ev.type !== 'BOOKMARK' && ev.type !== 'ERROR') h.event(ev.type, ev.object);
    };
    while (!abort.signal.aborted) {
      // The server ends each watch after 5-10 min (by default), so a stale connection cannot hide for long.
      const timeout = Math.round(jittered(minWatchTimeoutMs, 1) / 1000);
      try {
        if (rv === undefined && api.watchList && !listOnce) {
          // Until the bookmark, the events build the list; the synced resourceVersion is the bookmark's.
          let initial: Map<string, T> | undefined = new Map();
          try {
            await api.watch<T>(
              `${path}${sep}watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=&timeoutSeconds=${timeout}`,
              (ev) => {
                if (!initial) follow(ev);
                else if (ev.type === 'BOOKMARK' && ev.object.metadata?.annotations?.[INITIAL_EVENTS_END] === 'true') {
                  h.list([...initial.values()]);
                  listed = true;
                  initial = undefined;
                  rv = ev.object.metadata?.resourceVersion ?? '';
                } else if (ev.type === 'DELETED') initial.delete(key(ev.object));
                else if (ev.type !== 'BOOKMARK' && ev.type !== 'ERROR') initial.set(key(ev.object), ev.object);
              },
              abort.signal,
            );
          } catch (e) {
            if (initial === undefined || abort.signal.aborted) throw e;
            listOnce = true;
            log.v(4, `Data of ${what} couldn't be fetched in watchlist mode, falling back to a list`, { err: e });
            continue;
          }
          // Ended before its initial events did: again, after a pause.
          if (initial !== undefined) throw new Error(`the watch-list of ${what} ended before its initial events did`);
          retry.reset();
          continue;
        }
        if (rv === undefined) {
          const l = await api.get<Listed<T>>(path);
          listOnce = false;
          h.list(l.items);
          listed = true;
          rv = l.metadata?.resourceVersion ?? '';
          // The consumer may have had all it needs (an immutable object).
          if (abort.signal.aborted) break;
        }
        await api.watch<T>(
          `${path}${sep}watch=1&allowWatchBookmarks=true&resourceVersion=${rv}&timeoutSeconds=${timeout}`,
          follow,
          abort.signal,
        );
        retry.reset();
      } catch (e) {
        if (abort.signal.aborted) break;
        onError?.(e);
        // As upstream: only an expired resourceVersion needs a new list; after any other
        // failure (an apiserver restart, a dropped connection) the watch resumes where it was.
        if (isGone(e)) {
          rv = undefined;
          log.info(`Watch of ${what} expired, listing again`);
          continue;
        }
        const wait = (!listed && apiserverBehind(e) ? behind() : undefined) ?? retry.next();
        log.warn(`Watch of ${what} failed, will retry`, { err: e, retryInMs: wait });
        await sleep(wait, abort.signal);
      }
    }
  })();
  return { stop: () => abort.abort() };
}
