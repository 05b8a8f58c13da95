// The records of KEP-2535 (ensure-secret-pulled-images) in upstream's on-disk format, so that a
// node switched between kubelets keeps them: kubelet.config.k8s.io ImagePullIntent and
// ImagePulledRecord as JSON, one file per image (intents) or image ref (records), named as
// upstream's cacheFilename. Written as v1beta1 (upstream's encodeVersion in v1.36), read as
// v1alpha1 or v1beta1, strictly (an unknown field is an error), as fs_pullrecords.go does.
import { createHash } from 'node:crypto';
import { rfc3339 } from '../../apiserver/time.ts';

export interface ImagePullSecret {
  uid: string;
  namespace: string;
  name: string;
  /** sha256 (hex) of the credentials the secret held for the pull; '' when hashing failed. */
  credentialHash: string;
}

export interface ImagePullServiceAccount {
  uid: string;
  namespace: string;
  name: string;
}

/** Which credentials may use an image: secrets, service accounts, or every pod on the node. */
export interface ImagePullCredentials {
  kubernetesSecrets?: ImagePullSecret[];
  kubernetesServiceAccounts?: ImagePullServiceAccount[];
  nodePodsAccessible?: boolean;
}

export interface ImagePullIntent {
  image: string;
}

export interface ImagePulledRecord {
  /** ms since the epoch; stored as RFC 3339 seconds, as metav1.Time. */
  lastUpdatedTime: number;
  imageRef: string;
  /** By image name without tag or digest (trimImageTagDigest). */
  credentialMapping: Record<string, ImagePullCredentials>;
}

const GROUP = 'kubelet.config.k8s.io';
export const CURRENT_VERSION = `${GROUP}/v1beta1`;
const READABLE = new Set([`${GROUP}/v1alpha1`, CURRENT_VERSION]);

/** Go's json.Marshal escapes these in strings; the text matches upstream's byte for byte. */
const goJson = (v: unknown) =>
  JSON.stringify(v).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** Upstream's cacheFilename: "sha256-" and the hex sha256 of the image (intents) or image ref (records). */
export function cacheFilename(key: string): string {
  return `sha256-${createHash('sha256').update(key).digest('hex')}`;
}

/** Pure: an intent as upstream's JSON encoder writes it (fields in struct order, a trailing newline). */
export function encodeIntent(i: ImagePullIntent): string {
  return `${goJson({ kind: 'ImagePullIntent', apiVersion: CURRENT_VERSION, image: i.image })}\n`;
}

/** Pure: a pulled record as upstream writes it; credentialMapping's keys sorted as Go sorts a map's. */
export function encodePulledRecord(r: ImagePulledRecord): string {
  const keys = Object.keys(r.credentialMapping).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const mapping = Object.fromEntries(keys.map((k) => [k, encodeCredentials(r.credentialMapping[k]!)]));
  return `${goJson({
    kind: 'ImagePulledRecord',
    apiVersion: CURRENT_VERSION,
    lastUpdatedTime: rfc3339(r.lastUpdatedTime),
    imageRef: r.imageRef,
    ...(keys.length ? { credentialMapping: mapping } : {}),
  })}\n`;
}

// Struct order and omitempty of the v1beta1 types.
function encodeCredentials(c: ImagePullCredentials) {
  return {
    ...(c.kubernetesSecrets?.length
      ? {
          kubernetesSecrets: c.kubernetesSecrets.map((s) => ({
            uid: s.uid,
            namespace: s.namespace,
            name: s.name,
            credentialHash: s.credentialHash,
          })),
        }
      : {}),
    ...(c.kubernetesServiceAccounts?.length
      ? { kubernetesServiceAccounts: c.kubernetesServiceAccounts.map((s) => ({ uid: s.uid, namespace: s.namespace, name: s.name })) }
      : {}),
    ...(c.nodePodsAccessible ? { nodePodsAccessible: true } : {}),
  };
}

/** A decoded file and whether it is in the version upstream writes (else it is rewritten at start). */
export interface Decoded<T> {
  value: T;
  current: boolean;
}

/** Pure: an intent file's text; throws (one line) on what upstream's strict decoder refuses. */
export function decodeIntent(text: string): Decoded<ImagePullIntent> {
  const { o, current } = envelope(text, 'ImagePullIntent');
  strictKeys(o, ['image'], 'ImagePullIntent');
  return { value: { image: str(o.image, 'image') }, current };
}

/** Pure: a pulled record file's text; throws (one line) on what upstream's strict decoder refuses. */
export function decodePulledRecord(text: string): Decoded<ImagePulledRecord> {
  const { o, current } = envelope(text, 'ImagePulledRecord');
  strictKeys(o, ['lastUpdatedTime', 'imageRef', 'credentialMapping'], 'ImagePulledRecord');
  const time = o.lastUpdatedTime === undefined || o.lastUpdatedTime === null ? 0 : Date.parse(str(o.lastUpdatedTime, 'lastUpdatedTime'));
  if (Number.isNaN(time)) throw new Error(`lastUpdatedTime: not an RFC 3339 time: ${JSON.stringify(o.lastUpdatedTime)}`);
  const mapping: Record<string, ImagePullCredentials> = {};
  if (o.credentialMapping !== undefined && o.credentialMapping !== null) {
    for (const [image, creds] of Object.entries(obj(o.credentialMapping, 'credentialMapping')))
      mapping[image] = decodeCredentials(creds, image);
  }
  return { value: { lastUpdatedTime: time, imageRef: str(o.imageRef ?? '', 'imageRef'), credentialMapping: mapping }, current };
}

function decodeCredentials(v: unknown, image: string): ImagePullCredentials {
  const where = `credentialMapping[${JSON.stringify(image)}]`;
  const o = obj(v, where);
  strictKeys(o, ['kubernetesSecrets', 'kubernetesServiceAccounts', 'nodePodsAccessible'], where);
  const out: ImagePullCredentials = {};
  const secrets = list(o.kubernetesSecrets, `${where}.kubernetesSecrets`);
  if (secrets.length) {
    out.kubernetesSecrets = secrets.map((s) => {
      const so = obj(s, `${where}.kubernetesSecrets`);
      strictKeys(so, ['uid', 'namespace', 'name', 'credentialHash'], `${where}.kubernetesSecrets`);
      return {
        uid: str(so.uid ?? '', 'uid'),
        namespace: str(so.namespace ?? '', 'namespace'),
        name: str(so.name ?? '', 'name'),
        credentialHash: str(so.credentialHash ?? '', 'credentialHash'),
      };
    });
  }
  const accounts = list(o.kubernetesServiceAccounts, `${where}.kubernetesServiceAccounts`);
  if (accounts.length) {
    out.kubernetesServiceAccounts = accounts.map((s) => {
      const so = obj(s, `${where}.kubernetesServiceAccounts`);
      strictKeys(so, ['uid', 'namespace', 'name'], `${where}.kubernetesServiceAccounts`);
      return { uid: str(so.uid ?? '', 'uid'), namespace: str(so.namespace ?? '', 'namespace'), name: str(so.name ?? '', 'name') };
    });
  }
  if (o.nodePodsAccessible !== undefined && o.nodePodsAccessible !== null) {
    if (typeof o.nodePodsAccessible !== 'boolean') throw new Error(`${where}.nodePodsAccessible: expected a boolean`);
    if (o.nodePodsAccessible) out.nodePodsAccessible = true;
  }
  return out;
}

function envelope(text: string, kind: string): { o: Record<string, unknown>; current: boolean } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new Error(`not JSON: ${(e as Error).message}`);
  }
  const { kind: k, apiVersion, ...o } = obj(parsed, kind);
  if (typeof apiVersion !== 'string' || !READABLE.has(apiVersion))
    throw new Error(`no kind "${String(k)}" is registered for version "${String(apiVersion)}"`);
  if (k !== kind) throw new Error(`expected ${kind}, got kind ${JSON.stringify(k)}`);
  return { o, current: apiVersion === CURRENT_VERSION };
}

// The strict decoder's refusal of a field the type does not have.
function strictKeys(o: Record<string, unknown>, known: string[], where: string) {
  const unknown = Object.keys(o).find((k) => !known.includes(k));
  if (unknown !== undefined) throw new Error(`${where}: strict decoding error: unknown field "${unknown}"`);
}

function obj(v: unknown, where: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`${where}: expected a JSON object`);
  return v as Record<string, unknown>;
}

function list(v: unknown, where: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new Error(`${where}: expected a list`);
  return v;
}

function str(v: unknown, where: string): string {
  if (typeof v !== 'string') throw new Error(`${where}: expected a string`);
  return v;
}
