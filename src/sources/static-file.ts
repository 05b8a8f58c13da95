// Static pods: pods the kubelet runs without the apiserver, from staticPodPath (one pod
// per file, yaml or json) or staticPodURL (static-url.ts). As upstream: the name gets
// "-NODENAME", the UID is a hash of the node, the file (or URL) and the content (an edit
// replaces the pod), hidden files are skipped, and a bad file is reported with its path
// and ignored; the others run on.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { parse } from 'yaml';
import type { Logger } from '../log/log.ts';
import type { PodSink } from './apiserver.ts';
import { CONFIG_HASH, CONFIG_SOURCE } from '../podutil/podutil.ts';

const DNS1123 = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Pure: YAML or JSON text as an object, or an Error naming where it came from. */
export function parseManifest(text: string, where: string): unknown {
  try {
    return parse(text);
  } catch (e) {
    throw new Error(`${where}: invalid YAML or JSON: ${(e as Error).message.split('\n')[0]}`);
  }
}

/**
 * Pure: the pod a manifest defines on this node, or an Error saying what is wrong with it.
 * where is the file path or the URL, which the UID depends on.
 */
export function staticPodFrom(doc: unknown, where: string, nodeName: string, source: 'file' | 'http'): Pod {
  const pod = doc as Pod;
  if (!pod || typeof pod !== 'object') throw new Error(`${where}: not a Pod object`);
  if (pod.kind !== 'Pod' || pod.apiVersion !== 'v1')
    throw new Error(`${where}: want apiVersion v1, kind Pod; got ${pod.apiVersion}/${pod.kind}`);
  const name = pod.metadata?.name;
  if (!name || !DNS1123.test(name)) throw new Error(`${where}: metadata.name ${JSON.stringify(name)} is not a valid DNS-1123 subdomain`);
  const containers = pod.spec?.containers ?? [];
  if (containers.length === 0) throw new Error(`${where}: spec.containers: at least one container is required`);
  containers.forEach((c, i) => {
    if (!c.name) throw new Error(`${where}: spec.containers[${i}].name: required`);
    if (!c.image) throw new Error(`${where}: spec.containers[${i}].image: required`);
  });
  const hash = createHash('md5');
  hash
    .update(`host:${nodeName}`)
    .update(source === 'file' ? `file:${where}` : `url:${where}`)
    .update(JSON.stringify(pod));
  const uid = hash.digest('hex');
  return {
    ...pod,
    metadata: {
      ...pod.metadata,
      name: `${name}-${nodeName}`,
      namespace: pod.metadata?.namespace || 'default',
      uid,
      annotations: { ...pod.metadata?.annotations, [CONFIG_HASH]: uid, [CONFIG_SOURCE]: source },
    },
    spec: {
      ...pod.spec!,
      nodeName,
      restartPolicy: pod.spec?.restartPolicy ?? 'Always',
      terminationGracePeriodSeconds: pod.spec?.terminationGracePeriodSeconds ?? 30,
    },
  };
}

/** Pure: the pod a manifest file defines on this node. */
export function staticPod(text: string, path: string, nodeName: string): Pod {
  return staticPodFrom(parseManifest(text, path), path, nodeName, 'file');
}

/** Tells sink what changed between two sets of static pods (by UID: an edit is a remove and an add). */
export function reportChanges(before: Pod[], after: Pod[], sink: PodSink): void {
  const uids = (pods: Pod[]) => new Set(pods.map((p) => p.metadata!.uid!));
  const was = uids(before),
    now = uids(after);
  for (const uid of was) if (!now.has(uid)) sink.remove(uid);
  for (const p of after) if (!was.has(p.metadata!.uid!)) sink.update(p);
}

const fileBirth = (path: string) => {
  try {
    return statSync(path).birthtimeMs;
  } catch {
    return undefined;
  }
};

/** Watches the directory (and rescans every periodMs); reports additions, edits and removals to sink. */
export function fileSource(dir: string, nodeName: string, sink: PodSink, log: Logger, periodMs: number): { stop(): void } {
  let known = new Map<string, Pod>(); // path -> pod
  const born = new Map<string, number>(); // path -> the file's birth time when it was read
  const failed = new Map<string, string>(); // path -> last error, logged once per change
  const scan = () => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      names = [];
    }
    const next = new Map<string, Pod>();
    for (const n of names) {
      const path = join(dir, n);
      if (n.startsWith('.')) continue;
      try {
        const st = statSync(path);
        if (!st.isFile()) continue;
        next.set(path, staticPod(readFileSync(path, 'utf8'), path, nodeName));
        born.set(path, st.birthtimeMs);
        failed.delete(path);
      } catch (e) {
        const msg = (e as Error).message;
        if (failed.get(path) !== msg) log.error('Could not process manifest file, ignoring it', { path, err: msg });
        failed.set(path, msg);
        const old = known.get(path);
        if (old) next.set(path, old); // a broken edit keeps the pod that was running
      }
    }
    reportChanges([...known.values()], [...next.values()], sink);
    known = next;
    for (const path of born.keys()) if (!known.has(path)) born.delete(path);
  };
  let timer: NodeJS.Timeout | undefined;
  const soon = (_event?: string, name?: string | null) => {
    // A file removed (or removed and written again: a new birth time) is a REMOVE at once, as
    // upstream's inotify source reports IN_DELETE, so that a pod written back is started again
    // rather than coalesced into no change by the scan below.
    const path = name && join(dir, name);
    const pod = path && known.get(path);
    if (path && pod && fileBirth(path) !== born.get(path)) {
      known.delete(path);
      born.delete(path);
      sink.remove(pod.metadata!.uid!);
    }
    clearTimeout(timer);
    timer = setTimeout(scan, 100);
  };
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dir, soon);
  } catch {
    /* the directory may appear later: the rescan finds it */
  }
  scan();
  const interval = setInterval(scan, periodMs);
  return {
    stop() {
      clearInterval(interval);
      clearTimeout(timer);
      watcher?.close();
    },
  };
}
