// List then watch from the list's resourceVersion, forever: the one loop every
// apiserver-backed view uses. A 410 Gone lists again; the consumer gets the full list
// and diffs it, so nothing is lost between watches.
import { type ApiClient, isGone } from './client.ts';
import { backoff, jittered, sleep } from '../backoff/backoff.ts';
import type { Logger } from '../log/log.ts';

interface Listed<T> {
  items: T[];
  metadata?: { resourceVersion?: string };
}
interface Versioned {
  metadata?: { resourceVersion?: string };
}

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
  /** Told of each failed list or watch (a reader waiting for the first list can say why). */
  onError?: (e: unknown) => void,
): { stop(): void } {
  const abort = new AbortController();
  const retry = backoff(800, 30_000);
  const sep = path.includes('?') ? '&' : '?';
  (async () => {
    let rv: string | undefined;
    while (!abort.signal.aborted) {
      try {
        if (rv === undefined) {
          const l = await api.get<Listed<T>>(path);
          h.list(l.items);
          rv = l.metadata?.resourceVersion ?? '';
          // The consumer may have had all it needs (an immutable object).
          if (abort.signal.aborted) break;
        }
        // The server ends each watch after 5-10 min, so a stale connection cannot hide for long.
        const timeout = Math.round(jittered(300_000, 1) / 1000);
        await api.watch<T>(
          `${path}${sep}watch=1&allowWatchBookmarks=true&resourceVersion=${rv}&timeoutSeconds=${timeout}`,
          (ev) => {
            rv = ev.object.metadata?.resourceVersion ?? rv;
            if (ev.type !== 'BOOKMARK' && ev.type !== 'ERROR') h.event(ev.type, ev.object);
          },
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
        const wait = retry.next();
        log.warn(`Watch of ${what} failed, will retry`, { err: e, retryInMs: wait });
        await sleep(wait, abort.signal);
      }
    }
  })();
  return { stop: () => abort.abort() };
}
