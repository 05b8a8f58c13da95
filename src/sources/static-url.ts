// Static pods from staticPodURL (upstream's http source): the URL is fetched every
// httpCheckFrequency, with staticPodURLHeader; it serves one Pod or a PodList. A failed
// fetch or a bad document is logged and the pods keep running; an empty body means none.
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { Logger } from '../log/log.ts';
import type { PodSink } from './apiserver.ts';
import { parseManifest, reportChanges, staticPodFrom } from './static-file.ts';

/** Pure: the static pods a response body defines (all of them, or an Error for the first bad one). */
export function podsFromURL(body: string, url: string, nodeName: string): Pod[] {
  if (!body.trim()) return [];
  const doc = parseManifest(body, url) as { kind?: string; items?: unknown[] } | null;
  if (doc?.kind === 'PodList') {
    // Items of a list carry no kind of their own.
    return (doc.items ?? []).map((item) => staticPodFrom({ apiVersion: 'v1', kind: 'Pod', ...(item as object) }, url, nodeName, 'http'));
  }
  return [staticPodFrom(doc, url, nodeName, 'http')];
}

export function urlSource(
  url: string,
  headers: Record<string, string[]>,
  nodeName: string,
  sink: PodSink,
  log: Logger,
  periodMs: number,
): { stop(): void } {
  let known: Pod[] = [];
  let lastError = '';
  const abort = new AbortController();
  const flat = Object.entries(headers).map(([k, vs]) => [k, vs.join(', ')] as [string, string]);
  const check = async () => {
    try {
      const res = await fetch(url, { headers: flat, signal: AbortSignal.any([abort.signal, AbortSignal.timeout(10_000)]) });
      const body = await res.text();
      if (!res.ok) throw new Error(`${url}: ${res.status} ${res.statusText}`);
      const next = podsFromURL(body, url, nodeName);
      reportChanges(known, next, sink);
      known = next;
      lastError = '';
    } catch (e) {
      if (abort.signal.aborted) return;
      const msg = (e as Error).message;
      if (msg !== lastError) log.error('Failed to read pods from URL, keeping the pods it served before', { url, err: msg });
      lastError = msg;
    }
  };
  void check();
  const interval = setInterval(check, periodMs);
  return {
    stop() {
      clearInterval(interval);
      abort.abort();
    },
  };
}
