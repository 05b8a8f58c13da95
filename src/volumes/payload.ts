// What a configMap, secret, downwardAPI or projected volume holds: the files (path, bytes,
// mode) to write, computed from API objects. Pure; upstream's MakePayload (configmap,
// secret), CollectData (downwardapi) and projected collectData, with their error texts.
import type { ConfigMap, KeyToPath, Pod, Secret, DownwardAPIVolumeFile } from 'kubernetes-types/core/v1.js';
import { parseQuantity } from '../resources/quantity.ts';

export interface FileProjection { data: Buffer; mode: number }
/** Relative path in the volume -> content. */
export type Payload = Map<string, FileProjection>;

/** The mode API defaulting gives configMap, secret, downwardAPI and projected volumes (0644). */
export const DEFAULT_MODE = 0o644;

function keyedPayload(data: Map<string, Buffer>, items: KeyToPath[] | undefined, defaultMode: number, optional: boolean, missing: (key: string) => string): Payload {
  const out: Payload = new Map();
  if (!items?.length) {
    for (const [k, v] of data) out.set(k, { data: v, mode: defaultMode });
    return out;
  }
  for (const it of items) {
    const v = data.get(it.key);
    if (v === undefined) {
      if (optional) continue;
      throw new Error(missing(it.key));
    }
    out.set(it.path, { data: v, mode: it.mode ?? defaultMode });
  }
  return out;
}

export function configMapPayload(cm: ConfigMap, items: KeyToPath[] | undefined, defaultMode: number, optional: boolean): Payload {
  const data = new Map<string, Buffer>();
  for (const [k, v] of Object.entries(cm.data ?? {})) data.set(k, Buffer.from(v));
  for (const [k, v] of Object.entries(cm.binaryData ?? {})) data.set(k, Buffer.from(v, 'base64'));
  return keyedPayload(data, items, defaultMode, optional, (k) => `configmap references non-existent config key: ${k}`);
}

export function secretPayload(s: Secret, items: KeyToPath[] | undefined, defaultMode: number, optional: boolean): Payload {
  const data = new Map<string, Buffer>();
  for (const [k, v] of Object.entries(s.data ?? {})) data.set(k, Buffer.from(v, 'base64'));
  return keyedPayload(data, items, defaultMode, optional, (k) => `secret references non-existent secret key: ${k}`);
}

/** Go's %q for the strings labels and annotations hold. */
function goQuote(s: string): string {
  return '"' + [...s].map((ch) => {
    const c = ch.codePointAt(0)!;
    if (ch === '"') return '\\"';
    if (ch === '\\') return '\\\\';
    if (ch === '\n') return '\\n';
    if (ch === '\t') return '\\t';
    if (ch === '\r') return '\\r';
    if (c < 0x20 || c === 0x7f) return `\\x${c.toString(16).padStart(2, '0')}`;
    return ch;
  }).join('') + '"';
}

/** Upstream's FormatMap: key="value" lines in key order. */
export const formatMap = (m: Record<string, string> | undefined) =>
  Object.keys(m ?? {}).sort().map((k) => `${k}=${goQuote(m![k]!)}`).join('\n');

/** Upstream's ExtractFieldPathAsString (plus the pod fields env vars may name). */
export function fieldPathValue(pod: Pod, fieldPath: string): string {
  const md = pod.metadata ?? {};
  const sub = /^metadata\.(labels|annotations)\['(.*)'\]$/.exec(fieldPath);
  if (sub) return (sub[1] === 'labels' ? md.labels : md.annotations)?.[sub[2]!] ?? '';
  switch (fieldPath) {
    case 'metadata.annotations': return formatMap(md.annotations);
    case 'metadata.labels': return formatMap(md.labels);
    case 'metadata.name': return md.name ?? '';
    case 'metadata.namespace': return md.namespace ?? '';
    case 'metadata.uid': return md.uid ?? '';
    case 'spec.nodeName': return pod.spec?.nodeName ?? '';
    case 'spec.serviceAccountName': return pod.spec?.serviceAccountName ?? '';
    case 'status.hostIP': return pod.status?.hostIP ?? '';
    case 'status.podIP': return pod.status?.podIP ?? '';
  }
  throw new Error(`unsupported fieldPath: ${fieldPath}`);
}

/**
 * Upstream's resourceFieldRef value: a limit that is not set is the node's allocatable;
 * CPU in ceil(millicores / divisor), other resources in ceil(value / divisor).
 */
export function resourceFieldValue(pod: Pod, ref: { containerName?: string; resource: string; divisor?: string }, allocatable: Record<string, string>): string {
  const c = [...pod.spec?.containers ?? [], ...pod.spec?.initContainers ?? []].find((x) => x.name === ref.containerName);
  if (!c) throw new Error(`container ${ref.containerName ?? ''} not found`);
  const [kind, name] = ref.resource.includes('.') ? ref.resource.split(/\.(.*)/s) as [string, string] : ['limits', ref.resource];
  const set = kind === 'requests' ? c.resources?.requests : c.resources?.limits;
  let q = set?.[name];
  if (q === undefined && kind === 'limits') q = allocatable[name];
  const value = parseQuantity(q ?? '0');
  const divisor = parseQuantity(ref.divisor ?? '1');
  if (value === undefined || !divisor) throw new Error(`unsupported container resource : ${ref.resource}`);
  if (name === 'cpu') return String(Math.ceil(Math.round(value * 1000) / Math.round(divisor * 1000)));
  return String(Math.ceil(value / divisor));
}

/** Upstream's downwardapi CollectData: every item is tried; the errors are aggregated. */
export function downwardAPIPayload(pod: Pod, items: DownwardAPIVolumeFile[] | undefined, defaultMode: number, allocatable: Record<string, string>): Payload {
  const out: Payload = new Map();
  const errors: string[] = [];
  for (const it of items ?? []) {
    let data = Buffer.alloc(0);
    try {
      if (it.fieldRef) data = Buffer.from(fieldPathValue(pod, it.fieldRef.fieldPath));
      else if (it.resourceFieldRef) data = Buffer.from(resourceFieldValue(pod, it.resourceFieldRef as { containerName?: string; resource: string; divisor?: string }, allocatable));
    } catch (e) { errors.push((e as Error).message); }
    out.set(cleanPath(it.path), { data, mode: it.mode ?? defaultMode });
  }
  if (errors.length) throw new Error(aggregate(errors));
  return out;
}

/** utilerrors.NewAggregate's message. */
export const aggregate = (errors: string[]) => (errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`);

/** filepath.Clean for a relative path. */
function cleanPath(p: string): string {
  const parts: string[] = [];
  for (const s of p.split('/')) {
    if (s === '' || s === '.') continue;
    if (s === '..' && parts.length && parts[parts.length - 1] !== '..') parts.pop(); else parts.push(s);
  }
  return parts.join('/') || '.';
}

const MAX_PATH = 4096, MAX_NAME = 255;

/** The atomic writer's checks on every path of a payload (upstream's validatePath). */
export function validatePayloadPath(p: string): void {
  if (p === '') throw new Error(`invalid path: must not be empty: ""`);
  if (p.startsWith('/')) throw new Error(`invalid path: must be relative path: ${p}`);
  if (p.length > MAX_PATH) throw new Error(`invalid path: must be less than or equal to ${MAX_PATH} characters`);
  const items = p.split('/');
  for (const it of items) {
    if (it === '..') throw new Error(`invalid path: must not contain '..': ${p}`);
    if (it.length > MAX_NAME) throw new Error(`invalid path: filenames must be less than or equal to ${MAX_NAME} characters`);
  }
  if (items[0]!.startsWith('..') && items[0]!.length > 2) throw new Error(`invalid path: must not start with '..': ${p}`);
}
