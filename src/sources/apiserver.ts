// The apiserver pod source: the pods bound to this node (fieldSelector spec.nodeName),
// listed and watched. After a relist, pods missing from the list are removed.
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { ApiClient } from '../apiserver/client.ts';
import { reflector } from '../apiserver/reflector.ts';
import type { Logger } from '../log/log.ts';
import { apiPath } from '../apiserver/paths.ts';

export interface PodSink {
  /** The pod was added or changed. */
  update(pod: Pod): void;
  /** The pod is gone from the apiserver. */
  remove(uid: string): void;
}

export function apiserverSource(api: ApiClient, nodeName: string, sink: PodSink, log: Logger): { stop(): void; synced(): boolean } {
  const known = new Map<string, string>(); // uid -> resourceVersion
  // Set once the first list reached the sink: until then a pod not seen may just not be
  // listed yet, so housekeeping must not take it for an orphan (upstream's sourcesReady).
  let synced = false;
  const path = apiPath({ resource: 'pods' }, { fieldSelector: `spec.nodeName=${nodeName}` });
  const set = (p: Pod) => {
    const uid = p.metadata!.uid!;
    if (known.get(uid) === p.metadata?.resourceVersion) return;
    known.set(uid, p.metadata?.resourceVersion ?? '');
    sink.update(p);
  };
  const remove = (uid: string) => {
    if (known.delete(uid)) sink.remove(uid);
  };
  const r = reflector<Pod>(
    api,
    path,
    'pods',
    {
      list(items) {
        const seen = new Set(items.map((p) => p.metadata!.uid!));
        for (const uid of [...known.keys()]) if (!seen.has(uid)) remove(uid);
        items.forEach(set);
        synced = true;
      },
      event: (type, p) => (type === 'DELETED' ? remove(p.metadata!.uid!) : set(p)),
    },
    log,
  );
  return { stop: r.stop, synced: () => synced };
}
