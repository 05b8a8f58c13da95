// Static pods from staticPodURL (upstream's http source): the URL is fetched every
// httpCheckFrequency, with staticPodURLHeader; it serves one Pod or a PodList. A failed
// fetch or a bad document is logged and the pods keep running; an empty body means none.
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { Logger } from '../log/log.ts';
import type { PodSink } from './apiserver.ts';
import { MAX_MANIFEST_BYTES, parseManifest, reportChanges, staticPodFrom } from './static-file.ts';

/** Pure: the static pods a response body defines (all of them, or an Error for the first bad one). */
export function podsFromURL(body: Buffer | string, url: string, nodeName: string, preventAPIReferences = true): Pod[] {
  if (!body.toString().trim()) return [];
  const doc = parseManifest(body, url) as { kind?: string; items?: unknown } | null;
  if (doc?.kind === 'PodList') {
    const items = doc.items ?? [];
    if (!Array.isArray(items)) throw new Error(`${url}: items: must be a list of Pods`);
    // Items of a list carry no kind of their own.
    return items.map((item, i) => {
      if (typeof item !== 'object' || item === null || Array.isArray(item)) throw new Error(`${url}: items[${i}]: not a Pod object`);
      return staticPodFrom({ apiVersion: 'v1', kind: 'Pod', ...item }, url, nodeName, 'http', preventAPIReferences);
    });
  }
  return [staticPodFrom(doc, url, nodeName, 'http', preventAPIReferences)];
}

export function urlSource(
  url: string,
  headers: Record<string, string[]>,
  nodeName: string,
  sink: PodSink,
  log: Logger,
  periodMs: number,
  preventAPIReferences = true,
): { stop(): void } {
  let known: Pod[] = [];
  let lastError = '';
  const abort = new AbortController();
  const flat = Object.entries(headers).map(([k, vs]) => [k, vs.join(', ')] as [string, string]);
  const check = async () => {
    try {
      const res = await fetch(url, { headers: flat, signal: AbortSignal.any([abort.signal, AbortSignal.timeout(10_000)]) });
      const body = await readAtMost(res, MAX_MANIFEST_BYTES, url);
      if (!res.ok) throw new Error(`${url}: ${res.status} ${res.statusText}`);
      const next = podsFromURL(body, url, nodeName, preventAPIReferences);
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

/**
 * Upstream's utilio.ReadAtMost(resp.Body, maxConfigLength): the body, or an Error once it
 * passes the limit (leaving the loop cancels the rest of the body).
 */
export async function readAtMost(res: Response, limit: number, url: string): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let n = 0;
  if (!res.body) return Buffer.alloc(0);
  for await (const chunk of res.body) {
    n += chunk.length;
    if (n > limit) {
      throw new Error(`${url}: the read limit is reached`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, n);
}
