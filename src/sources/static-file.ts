// Static pods: one pod per file in staticPodPath (yaml or json), run by the kubelet
// without the apiserver. As upstream: the name gets "-NODENAME", the UID is a hash of
// the node, the file and its content (an edit replaces the pod), hidden files are
// skipped, and a bad file is reported with its path and ignored; the others run on.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { parse } from 'yaml';
import type { Logger } from '../log/log.ts';
import type { PodSink } from './apiserver.ts';

export const CONFIG_SOURCE = 'kubernetes.io/config.source';
export const CONFIG_HASH = 'kubernetes.io/config.hash';

const DNS1123 = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Pure: the pod a manifest file defines on this node, or an Error saying what is wrong with it. */
export function staticPod(text: string, path: string, nodeName: string): Pod {
  let doc: Pod;
  try { doc = parse(text) as Pod; } catch (e) { throw new Error(`${path}: invalid YAML or JSON: ${(e as Error).message.split('\n')[0]}`); }
  if (!doc || typeof doc !== 'object') throw new Error(`${path}: not a Pod object`);
  if (doc.kind !== 'Pod' || doc.apiVersion !== 'v1') throw new Error(`${path}: want apiVersion v1, kind Pod; got ${doc.apiVersion}/${doc.kind}`);
  const name = doc.metadata?.name;
  if (!name || !DNS1123.test(name)) throw new Error(`${path}: metadata.name ${JSON.stringify(name)} is not a valid DNS-1123 subdomain`);
  const containers = doc.spec?.containers ?? [];
  if (containers.length === 0) throw new Error(`${path}: spec.containers: at least one container is required`);
  containers.forEach((c, i) => {
    if (!c.name) throw new Error(`${path}: spec.containers[${i}].name: required`);
    if (!c.image) throw new Error(`${path}: spec.containers[${i}].image: required`);
  });
  const hash = createHash('md5');
  hash.update(`host:${nodeName}`).update(`file:${path}`).update(JSON.stringify(doc));
  const uid = hash.digest('hex');
  return {
    ...doc,
    metadata: {
      ...doc.metadata,
      name: `${name}-${nodeName}`,
      namespace: doc.metadata?.namespace || 'default',
      uid,
      annotations: { ...doc.metadata?.annotations, [CONFIG_HASH]: uid, [CONFIG_SOURCE]: 'file' },
    },
    spec: { ...doc.spec!, nodeName, restartPolicy: doc.spec?.restartPolicy ?? 'Always', terminationGracePeriodSeconds: doc.spec?.terminationGracePeriodSeconds ?? 30 },
  };
}

/** Watches the directory (and rescans every periodMs); reports additions, edits and removals to sink. */
export function fileSource(dir: string, nodeName: string, sink: PodSink, log: Logger, periodMs: number): { stop(): void } {
  let known = new Map<string, { uid: string; pod: Pod }>(); // path -> pod
  const failed = new Map<string, string>(); // path -> last error, logged once per change
  const scan = () => {
    let names: string[];
    try { names = readdirSync(dir); } catch { names = []; }
    const next = new Map<string, { uid: string; pod: Pod }>();
    for (const n of names) {
      const path = join(dir, n);
      if (n.startsWith('.')) continue;
      try {
        if (!statSync(path).isFile()) continue;
        const pod = staticPod(readFileSync(path, 'utf8'), path, nodeName);
        next.set(path, { uid: pod.metadata!.uid!, pod });
        failed.delete(path);
      } catch (e) {
        const msg = (e as Error).message;
        if (failed.get(path) !== msg) log.error('Could not process manifest file, ignoring it', { path, err: msg });
        failed.set(path, msg);
        const old = known.get(path);
        if (old) next.set(path, old); // a broken edit keeps the pod that was running
      }
    }
    const nextUIDs = new Set([...next.values()].map((p) => p.uid));
    for (const { uid } of known.values()) if (!nextUIDs.has(uid)) sink.remove(uid);
    const oldUIDs = new Set([...known.values()].map((p) => p.uid));
    for (const { uid, pod } of next.values()) if (!oldUIDs.has(uid)) sink.update(pod);
    known = next;
  };
  let timer: NodeJS.Timeout | undefined;
  const soon = () => { clearTimeout(timer); timer = setTimeout(scan, 100); };
  let watcher: FSWatcher | undefined;
  try { watcher = watch(dir, soon); } catch { /* the directory may appear later: the rescan finds it */ }
  scan();
  const interval = setInterval(scan, periodMs);
  return { stop() { clearInterval(interval); clearTimeout(timer); watcher?.close(); } };
}
