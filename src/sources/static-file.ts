// Static pods: pods the kubelet runs without the apiserver, from staticPodPath (one pod
// per file, yaml or json) or staticPodURL (static-url.ts). As upstream: the name gets
// "-NODENAME", the UID is a hash of the node, the file (or URL) and the content (an edit
// replaces the pod), hidden files are skipped, and a bad file is reported with its path
// and ignored; the others run on.
import { createHash } from 'node:crypto';
import { closeSync, openSync, readdirSync, readSync, statSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { parse } from 'yaml';
import type { Logger } from '../log/log.ts';
import { apiObjectReference } from './api-references.ts';
import type { PodSink } from './apiserver.ts';
import { CONFIG_HASH, CONFIG_SOURCE } from '../podutil/podutil.ts';

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Upstream's maxConfigLength: a manifest file or URL body is read up to this, and refused past it. */
export const MAX_MANIFEST_BYTES = 10 << 20;
/**
 * YAML is refused well below that: the yaml library builds a document model of some hundred
 * bytes per input byte and seconds per MiB (10 MiB of YAML ran out of a 4 GB heap), where
 * upstream's goyaml streams. JSON, parsed by JSON.parse, takes the full 10 MiB.
 */
export const MAX_YAML_BYTES = 256 << 10;
/**
 * Upstream's decoders stop at 10000 levels ("exceeded max depth"); the yaml composer and
 * JSON.stringify recurse and run out of stack first, so nesting stops here, far above any Pod's.
 */
export const MAX_DEPTH = 1000;

const readLimitReached = (where: string) => new Error(`${where}: the read limit is reached`);

/** Upstream's utilio.ReadAtMost(file, maxConfigLength): the file's bytes, or an Error past the limit. */
export function readManifestFile(path: string, limit = MAX_MANIFEST_BYTES): Buffer {
  const fd = openSync(path, 'r');
  try {
    const chunks: Buffer[] = [];
    let n = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(64 << 10);
      const r = readSync(fd, chunk, 0, chunk.length, null);
      if (r === 0) return Buffer.concat(chunks, n);
      n += r;
      if (n > limit) throw readLimitReached(path);
      chunks.push(chunk.subarray(0, r));
    }
  } finally {
    closeSync(fd);
  }
}

/** Pure: whether JSON text nests deeper than max ([ and { outside strings). */
function jsonTooDeep(text: string, max: number): boolean {
  let depth = 0,
    inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

// The yaml library reports a stack overflow in its composer as a parse error of its own.
const isStackOverflow = (e: unknown) => /maximum call stack size exceeded/i.test((e as Error)?.message ?? '');

/**
 * Pure: a manifest's bytes (or text) as an object, or an Error naming where it came from.
 * As upstream's utilyaml.ToJSON: text starting with "{" is JSON (invalid UTF-8 in it replaced,
 * as Go's decoder does), anything else YAML (invalid UTF-8 refused, as goyaml does).
 */
export function parseManifest(data: Buffer | string, where: string): unknown {
  const bad = (why: string) => new Error(`${where}: invalid YAML or JSON: ${why}`);
  if (data.length > MAX_MANIFEST_BYTES) throw readLimitReached(where);
  const bytes = typeof data === 'string' ? undefined : data;
  const json = /^\s*\{/.test(bytes ? bytes.toString('latin1', 0, Math.min(bytes.length, 4096)) : (data as string).slice(0, 4096));
  let text: string;
  if (!bytes) text = data as string;
  else if (json) text = new TextDecoder().decode(bytes);
  else {
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw bad('invalid UTF-8');
    }
  }
  if (json) {
    if (jsonTooDeep(text, MAX_DEPTH)) throw bad(`exceeded max depth of ${MAX_DEPTH}`);
    try {
      return JSON.parse(text);
    } catch (e) {
      throw bad((e as Error).message);
    }
  }
  if (Buffer.byteLength(text) > MAX_YAML_BYTES)
    throw new Error(`${where}: YAML of more than ${MAX_YAML_BYTES} bytes is refused (as JSON, up to ${MAX_MANIFEST_BYTES})`);
  try {
    // goyaml.v2, upstream's, lets a repeated key win; the yaml library's check is quadratic.
    return parse(text, { uniqueKeys: false, logLevel: 'error' }); // no process warnings for odd tags
  } catch (e) {
    if (isStackOverflow(e)) throw bad(`exceeded max depth of ${MAX_DEPTH}`);
    throw bad((e as Error).message.split('\n')[0]!);
  }
}

const isObject = (v: unknown): v is object => typeof v === 'object' && v !== null && !Array.isArray(v);
const isLabel = (v: unknown): v is string => typeof v === 'string' && v.length <= 63 && DNS1123_LABEL.test(v);

/**
 * Pure: the pod a manifest defines on this node, or an Error saying what is wrong with it.
 * where is the file path or the URL, which the UID depends on.
 */
/**
 * Pure: the static pod a document defines on this node, checked as upstream's tryDecodeSinglePod
 * (and, with PreventStaticPodAPIReferences, refused when it names an API object).
 */
export function staticPodFrom(doc: unknown, where: string, nodeName: string, source: 'file' | 'http', preventAPIReferences = true): Pod {
  const pod = doc as Pod;
  const fail = (why: string) => new Error(`${where}: ${why}`);
  if (!isObject(pod)) throw fail('not a Pod object');
  if (pod.kind !== 'Pod' || pod.apiVersion !== 'v1')
    throw fail(`want apiVersion v1, kind Pod; got ${String(pod.apiVersion)}/${String(pod.kind)}`);
  if (pod.metadata !== undefined && !isObject(pod.metadata)) throw fail('metadata: must be an object');
  if (pod.spec !== undefined && !isObject(pod.spec)) throw fail('spec: must be an object');
  const annotations: unknown = pod.metadata?.annotations;
  if (annotations !== undefined && (!isObject(annotations) || Object.values(annotations).some((v) => typeof v !== 'string')))
    throw fail('metadata.annotations: must be a map of strings');
  const name: unknown = pod.metadata?.name;
  // Upstream validates the name it gives the pod, NAME-NODENAME.
  if (typeof name !== 'string' || !DNS1123_SUBDOMAIN.test(name) || name.length + 1 + nodeName.length > 253)
    throw fail(`metadata.name ${JSON.stringify(name)} is not a valid DNS-1123 subdomain (of at most 253 characters with "-${nodeName}")`);
  // The namespace and the names of containers and volumes become paths on the host (pod log
  // directories, termination logs, volume directories): upstream's ValidatePodCreate checks them.
  const namespace: unknown = pod.metadata?.namespace;
  if (namespace !== undefined && namespace !== '' && !isLabel(namespace))
    throw fail(`metadata.namespace ${JSON.stringify(namespace)} is not a valid DNS-1123 label`);
  const spec = pod.spec ?? ({} as NonNullable<Pod['spec']>);
  const containers = spec.containers ?? [];
  if (!Array.isArray(containers)) throw fail('spec.containers: must be a list');
  if (containers.length === 0) throw fail('spec.containers: at least one container is required');
  const names = new Set<string>();
  for (const field of ['initContainers', 'containers', 'ephemeralContainers', 'volumes'] as const) {
    const list: unknown = spec[field] ?? [];
    if (!Array.isArray(list)) throw fail(`spec.${field}: must be a list`);
    const seen = field === 'volumes' ? new Set<string>() : names;
    list.forEach((c: unknown, i) => {
      const at = `spec.${field}[${i}]`;
      if (!isObject(c)) throw fail(`${at}: must be an object`);
      const n: unknown = (c as { name?: unknown }).name;
      if (n === undefined || n === '') throw fail(`${at}.name: required`);
      if (!isLabel(n)) throw fail(`${at}.name: ${JSON.stringify(n)} is not a valid DNS-1123 label`);
      if (seen.has(n)) throw fail(`${at}.name: Duplicate value: ${JSON.stringify(n)}`);
      seen.add(n);
      if (field !== 'volumes' && (typeof (c as { image?: unknown }).image !== 'string' || !(c as { image: string }).image))
        throw fail(`${at}.image: required`);
    });
  }
  if (preventAPIReferences) {
    const ref = apiObjectReference(pod as Pod);
    if (ref && 'error' in ref) throw fail(ref.error);
    if (ref) throw fail(`static pods may not reference ${ref.resource}`);
  }
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
export function staticPod(data: Buffer | string, path: string, nodeName: string, preventAPIReferences = true): Pod {
  return staticPodFrom(parseManifest(data, path), path, nodeName, 'file', preventAPIReferences);
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
export function fileSource(
  dir: string,
  nodeName: string,
  sink: PodSink,
  log: Logger,
  periodMs: number,
  preventAPIReferences = true,
): { stop(): void } {
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
        next.set(path, staticPod(readManifestFile(path), path, nodeName, preventAPIReferences));
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
