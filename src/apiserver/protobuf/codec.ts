// The apiserver's protobuf wire form (k8s.io/apimachinery pkg/runtime/serializer/protobuf): the
// 4-byte magic "k8s\0", then a runtime.Unknown whose typeMeta names the kind and whose raw is the
// object's message. Watch streams (pkg/runtime/serializer/streaming with protobuf's
// LengthDelimitedFramer) are frames of a 4-byte big-endian length and such an envelope of a
// metav1.WatchEvent, whose object.raw is in turn the envelope of the object.
import protobuf from 'protobufjs/minimal.js';
import { readMessage } from './read.ts';
import { messageOf } from './schema.ts';
import { writeMessage } from './write.ts';

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/**
 * The built-in groups served in protobuf whose types proto/k8s defines, by the Go package of their
 * types (k8s.io/api/<package>/<version>). Every other group is JSON: CRDs are served in JSON only.
 */
const GROUPS: Record<string, string> = {
  '': 'core',
  'authentication.k8s.io': 'authentication',
  'authorization.k8s.io': 'authorization',
  'certificates.k8s.io': 'certificates',
  'coordination.k8s.io': 'coordination',
  'node.k8s.io': 'node',
  'resource.k8s.io': 'resource',
  'storage.k8s.io': 'storage',
};

/** The protobuf package of a group/version's types, or undefined when kubelet-ts reads it in JSON. */
export function packageOf(apiVersion: string): string | undefined {
  const slash = apiVersion.lastIndexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = apiVersion.slice(slash + 1);
  if (group === 'meta.k8s.io') return `k8s.io.apimachinery.pkg.apis.meta.${version}`;
  const pkg = GROUPS[group];
  return pkg && version === 'v1' ? `k8s.io.api.${pkg}.${version}` : undefined;
}

/** The group/version a request path addresses (/api/v1/..., /apis/<group>/<version>/...). */
export function apiVersionOfPath(path: string): string | undefined {
  const m = /^\/(?:api\/(v1)|apis\/([^/?]+)\/([^/?]+))(?:[/?]|$)/.exec(path);
  if (!m) return undefined;
  return m[1] ?? `${m[2]}/${m[3]}`;
}

/** Whether the apiserver serves path in protobuf to kubelet-ts (a built-in group it has the types of). */
export const protobufPath = (path: string): boolean => {
  const gv = apiVersionOfPath(path);
  return gv !== undefined && packageOf(gv) !== undefined;
};

const STATUS = 'k8s.io.apimachinery.pkg.apis.meta.v1.Status';

/** The full name of the message of an object of that apiVersion and kind, or undefined when proto/k8s has none. */
function typeOf(apiVersion: string, kind: string): string | undefined {
  // metav1.Status is served as kind Status of every group (an error, a delete's answer).
  if (kind === 'Status') return STATUS;
  const pkg = packageOf(apiVersion);
  if (!pkg) return undefined;
  const name = `${pkg}.${kind}`;
  return messageOf(name) ? name : undefined;
}

/** runtime.Unknown's typeMeta (1: apiVersion 1, kind 2) and raw (2), as its generated Unmarshal reads them. */
function unwrap(data: Uint8Array): { apiVersion: string; kind: string; raw: Uint8Array } {
  if (data.length < 4 || !MAGIC.equals(data.subarray(0, 4))) throw new Error('not a Kubernetes protobuf object (no "k8s\\0" prefix)');
  const r = protobuf.Reader.create(data.subarray(4));
  let apiVersion = '';
  let kind = '';
  let raw: Uint8Array = new Uint8Array();
  while (r.pos < r.len) {
    const tag = r.uint32();
    if (tag >>> 3 === 1) {
      const end = r.uint32() + r.pos;
      while (r.pos < end) {
        const t = r.uint32();
        if (t >>> 3 === 1) apiVersion = r.string();
        else if (t >>> 3 === 2) kind = r.string();
        else r.skipType(t & 7);
      }
    } else if (tag >>> 3 === 2) raw = r.bytes();
    else r.skipType(tag & 7);
  }
  return { apiVersion, kind, raw };
}

/** An object in the apiserver's protobuf envelope as the JSON path yields it (apiVersion and kind first). */
export function decodeObject<T = Record<string, unknown>>(data: Uint8Array): T {
  const { apiVersion, kind, raw } = unwrap(data);
  const type = typeOf(apiVersion, kind);
  if (!type) throw new Error(`no protobuf definition of ${apiVersion} ${kind}`);
  const body = readMessage(type, protobuf.Reader.create(raw), raw.length);
  // The apiserver writes an empty list's items as [] in JSON (a nil slice would be null), and in
  // protobuf as nothing: readers iterate items, so [] as JSON has it.
  if (kind.endsWith('List') && body.items === null) body.items = [];
  return { kind, apiVersion, ...body } as T;
}

/** The protobuf envelope of an object, or undefined when its apiVersion and kind are not ones kubelet-ts has the types of. */
export function encodeObject(obj: unknown): Buffer | undefined {
  const o = obj as { apiVersion?: string; kind?: string };
  if (!o || typeof o !== 'object' || !o.apiVersion || !o.kind) return undefined;
  const type = typeOf(o.apiVersion, o.kind);
  if (!type) return undefined;
  // runtime.Unknown as protobuf.Serializer's Encode fills it: typeMeta (1), raw (2) the object's message.
  const w = protobuf.Writer.create();
  w.uint32(10).fork().uint32(10).string(o.apiVersion).uint32(18).string(o.kind).ldelim();
  writeMessage(type, o as Record<string, unknown>, w.uint32(18).fork()).ldelim();
  return Buffer.concat([MAGIC, w.finish()]);
}

export interface DecodedWatchEvent {
  type: string;
  object: Record<string, unknown>;
}

/** One watch frame's payload (the length prefix removed): the event with its object decoded. */
export function decodeWatchEvent(frame: Uint8Array): DecodedWatchEvent {
  // The apiserver sends the WatchEvent in an envelope; a bare message is read the same.
  const raw = frame.length >= 4 && MAGIC.equals(frame.subarray(0, 4)) ? unwrap(frame).raw : frame;
  // metav1.WatchEvent: type (1), object (2) a runtime.RawExtension whose raw (1) is the object's envelope.
  const r = protobuf.Reader.create(raw);
  let type = '';
  let obj: Uint8Array | undefined;
  while (r.pos < r.len) {
    const tag = r.uint32();
    if (tag >>> 3 === 1) type = r.string();
    else if (tag >>> 3 === 2) {
      const end = r.uint32() + r.pos;
      while (r.pos < end) {
        const t = r.uint32();
        if (t >>> 3 === 1) obj = r.bytes();
        else r.skipType(t & 7);
      }
    } else r.skipType(tag & 7);
  }
  if (!obj?.length) throw new Error(`watch event ${type} without an object`);
  return { type, object: decodeObject(obj) };
}

/**
 * Splits a watch stream into frames (the 4-byte big-endian length each begins with): push each
 * chunk as it comes; each complete frame goes to onFrame, a partial one waits for the next chunk.
 */
export function frameReader(onFrame: (frame: Uint8Array) => void): { push(chunk: Buffer): void; pending(): number } {
  let buf: Buffer = Buffer.alloc(0);
  return {
    push(chunk) {
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      while (buf.length >= 4) {
        const n = buf.readUInt32BE(0);
        if (buf.length < 4 + n) break;
        onFrame(buf.subarray(4, 4 + n));
        buf = buf.subarray(4 + n);
      }
    },
    pending: () => buf.length,
  };
}
