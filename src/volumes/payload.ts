// What a configMap, secret, downwardAPI or projected volume holds: the files (path, bytes,
// mode) to write, computed from API objects. Pure; upstream's MakePayload (configmap,
// secret), CollectData (downwardapi) and projected collectData, with their error texts.
import type { ConfigMap, KeyToPath, Pod, Secret, DownwardAPIVolumeFile } from 'kubernetes-types/core/v1.js';
import { fieldRefValue, resourceFieldRefValue, type Value } from '../resources/downward.ts';

export interface FileProjection {
  data: Buffer;
  mode: number;
}
/** Relative path in the volume -> content. */
export type Payload = Map<string, FileProjection>;

/** The mode API defaulting gives configMap, secret, downwardAPI and projected volumes (0644). */
export const DEFAULT_MODE = 0o644;

function keyedPayload(
  data: Map<string, Buffer>,
  items: KeyToPath[] | undefined,
  defaultMode: number,
  optional: boolean,
  missing: (key: string) => string,
): Payload {
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

const unwrap = (v: Value) => {
  if ('error' in v) throw new Error(v.error);
  return v.value;
};

/** Upstream's downwardapi CollectData: every item is tried; the errors are aggregated. */
export function downwardAPIPayload(
  pod: Pod,
  items: DownwardAPIVolumeFile[] | undefined,
  defaultMode: number,
  allocatable: Record<string, string>,
): Payload {
  const out: Payload = new Map();
  const errors: string[] = [];
  for (const it of items ?? []) {
    let data = Buffer.alloc(0);
    try {
      // A volume may name only metadata fields (the apiserver validates that).
      const ips = { podIPs: pod.status?.podIP ? [pod.status.podIP] : [], hostIPs: pod.status?.hostIP ? [pod.status.hostIP] : [] };
      if (it.fieldRef) data = Buffer.from(unwrap(fieldRefValue(it.fieldRef, pod, ips)));
      else if (it.resourceFieldRef) data = Buffer.from(unwrap(resourceFieldRefValue(it.resourceFieldRef, pod, undefined, allocatable)));
    } catch (e) {
      errors.push((e as Error).message);
    }
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
    if (s === '..' && parts.length && parts[parts.length - 1] !== '..') parts.pop();
    else parts.push(s);
  }
  return parts.join('/') || '.';
}

const MAX_PATH = 4096,
  MAX_NAME = 255;

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
