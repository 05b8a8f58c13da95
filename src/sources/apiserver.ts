// The apiserver pod source: list, then watch from the list's resourceVersion, the pods
// bound to this node (fieldSelector spec.nodeName). A 410 Gone answers with a fresh
// list, whose difference to what we had becomes updates and removals: no pod is lost.
import type { Pod, PodList } from 'kubernetes-types/core/v1.js';
import { type ApiClient, isGone } from '../apiserver/client.ts';
import { backoff, jittered, sleep } from '../backoff/backoff.ts';
import type { Logger } from '../log/log.ts';

export interface PodSink {
  /** The pod was added or changed. */
  update(pod: Pod): void;
  /** The pod is gone from the apiserver. */
  remove(uid: string): void;
  /** A full list arrived (the first one marks the source as seen). */
  synced(): void;
}

export function apiserverSource(api: ApiClient, nodeName: string, sink: PodSink, log: Logger): { stop(): void } {
  const abort = new AbortController();
  const base = `/api/v1/pods?fieldSelector=${encodeURIComponent(`spec.nodeName=${nodeName}`)}`;
  const known = new Map<string, Pod>();
  const retry = backoff(800, 30_000);

  async function list(): Promise<string> {
    const l = await api.get<PodList>(base);
    const seen = new Set<string>();
    for (const p of l.items) {
      seen.add(p.metadata!.uid!);
      if (known.get(p.metadata!.uid!)?.metadata?.resourceVersion !== p.metadata?.resourceVersion) { known.set(p.metadata!.uid!, p); sink.update(p); }
    }
    for (const uid of known.keys()) if (!seen.has(uid)) { known.delete(uid); sink.remove(uid); }
    sink.synced();
    return l.metadata!.resourceVersion!;
  }

  (async () => {
    let rv: string | undefined;
    while (!abort.signal.aborted) {
      try {
        rv ??= await list();
        // The server ends each watch after 5-10 min, so a stale connection cannot hide for long.
        const timeout = Math.round(jittered(300_000, 1) / 1000);
        await api.watch<Pod>(`${base}&watch=1&allowWatchBookmarks=true&resourceVersion=${rv}&timeoutSeconds=${timeout}`, (ev) => {
          rv = ev.object.metadata?.resourceVersion ?? rv;
          if (ev.type === 'BOOKMARK') return;
          const uid = ev.object.metadata!.uid!;
          if (ev.type === 'DELETED') { known.delete(uid); sink.remove(uid); } else { known.set(uid, ev.object); sink.update(ev.object); }
        }, abort.signal);
        retry.reset();
      } catch (e) {
        if (abort.signal.aborted) break;
        if (isGone(e)) { log.info('Watch of pods expired, listing again', { err: e }); rv = undefined; continue; }
        const wait = retry.next();
        log.warn('Pod watch failed, will retry', { err: e, retryInMs: wait });
        rv = undefined;
        await sleep(wait, abort.signal);
      }
    }
  })();
  return { stop: () => abort.abort() };
}
