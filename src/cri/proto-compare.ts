// The wire comparison behind the proto compat tests (src/cri, src/devices, src/csi): each proto
// of ours is written here, not copied, and diffed element by element against the upstream
// module fetched through the Go module proxy. No go or no proxy is a failure, never a skip.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import protobuf from 'protobufjs';

const REPO = new URL('../../', import.meta.url);

/** The pinned Kubernetes release, v1.Y.Z (hack/versions.env). */
export async function kubeVersion(): Promise<string> {
  const env = await readFile(new URL('hack/versions.env', REPO), 'utf8');
  const kube = /^KUBE_VERSION=(v1\.\d+\.\d+)\s*$/m.exec(env);
  assert.ok(kube, 'hack/versions.env has no KUBE_VERSION=v1.Y.Z');
  return kube[1]!;
}

/** The staging modules' version for the pinned Kubernetes release (v0.Y.Z for v1.Y.Z). */
export async function stagingVersion(): Promise<string> {
  return (await kubeVersion()).replace(/^v1\./, 'v0.');
}

/** One file of a Go module at a version, through `go mod download`. */
export async function upstreamFile(module: string, version: string, path: string): Promise<string> {
  return await readFile(join(await moduleDir(module, version), path), 'utf8');
}

/** The directory of a Go module at a version in the module cache, through `go mod download`. */
export async function moduleDir(module: string, version: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'proto-compat-'));
  try {
    const { stdout } = await promisify(execFile)('go', ['mod', 'download', '-json', `${module}@${version}`], {
      cwd: dir,
      env: { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '-mod=mod' },
      timeout: 120_000,
    }).catch((err: Error & { stderr?: string; stdout?: string }) => {
      throw new Error(
        `go mod download ${module}@${version} failed (go and the Go module proxy are required): ${err.message} ${err.stdout ?? ''}`,
      );
    });
    return (JSON.parse(stdout) as { Dir: string }).Dir;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Our proto file against `path` of a staging module (k8s.io/kubelet...) at the pinned release:
 * the differences on the wire (none: compatible), and the version compared with.
 */
export async function wireDifferences(ours: string, module: string, path: string): Promise<{ version: string; problems: string[] }> {
  const version = await stagingVersion();
  const upstream = parse(await upstreamFile(module, version, path));
  return { version, problems: compare(parse(await readFile(ours, 'utf8')), upstream) };
}

// Older cri-api releases carried gogoproto annotations; they change no wire format.
export function stripGogo(source: string): string {
  return source
    .replace(/^\s*import\s+"[^"]*gogo[^"]*";\s*$/gm, '')
    .replace(/^\s*option\s+\(gogoproto\.[^;]*;\s*$/gm, '')
    .replace(/\(gogoproto\.\w+\)\s*=\s*[^,\]]+,?\s*/g, '')
    .replace(/\[\s*\]/g, '');
}

// protoc finds google/protobuf/*.proto in its include directory; protobufjs ships the same.
const descriptorJson = createRequire(import.meta.url)('protobufjs/google/protobuf/descriptor.json') as protobuf.INamespace;

export function parse(source: string): protobuf.Root {
  const { root, imports = [] } = protobuf.parse(source, { keepCase: true });
  for (const file of imports) {
    if (!file.startsWith('google/protobuf/')) continue;
    const json = file === 'google/protobuf/descriptor.proto' ? descriptorJson : protobuf.common.get(file);
    assert.ok(json?.nested, `no definition of ${file} in protobufjs`);
    root.addJSON(json.nested);
  }
  root.resolveAll();
  return root;
}

const fullName = (obj: protobuf.ReflectionObject) => obj.fullName.replace(/^\./, '');

/** One service, message or enum (not what it nests) as "kind name" -> description entries. */
function describeOne(obj: protobuf.ReflectionObject, out: Map<string, string>): void {
  if (obj instanceof protobuf.Service) {
    out.set(`service ${fullName(obj)}`, '');
    for (const m of obj.methodsArray) {
      m.resolve();
      const req = `${m.requestStream ? 'stream ' : ''}${fullName(m.resolvedRequestType!)}`;
      const res = `${m.responseStream ? 'stream ' : ''}${fullName(m.resolvedResponseType!)}`;
      out.set(`method ${fullName(obj)}.${m.name}`, `(${req}) returns (${res})`);
    }
  } else if (obj instanceof protobuf.Type) {
    out.set(`message ${fullName(obj)}`, '');
    for (const f of obj.fieldsArray) {
      const type = f.resolvedType ? fullName(f.resolvedType) : f.type;
      const key = f instanceof protobuf.MapField ? `map<${f.keyType}> ` : '';
      const rule = f.repeated ? 'repeated ' : f.options?.proto3_optional ? 'optional ' : '';
      const packable = f.resolvedType instanceof protobuf.Enum || f.type in protobuf.types.packed;
      const packed = f.repeated && packable && f.packed ? ' packed' : '';
      const oneof = f.partOf ? ` oneof ${f.partOf.name}` : '';
      out.set(`field ${fullName(obj)}.${f.name}`, `${rule}${key}${type} = ${f.id}${packed}${oneof}`);
    }
    for (const o of obj.oneofsArray) out.set(`oneof ${fullName(obj)}.${o.name}`, o.oneof.join(','));
  } else if (obj instanceof protobuf.Enum) {
    out.set(`enum ${fullName(obj)}`, '');
    for (const [name, value] of Object.entries(obj.values)) out.set(`enum value ${fullName(obj)}.${name}`, String(value));
  }
}

/** Every wire-relevant element as "kind name" -> description, so two protos diff as maps. */
function describe(root: protobuf.Root, keep: (obj: protobuf.ReflectionObject) => boolean = () => true): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (ns: protobuf.NamespaceBase) => {
    for (const obj of ns.nestedArray) {
      if (keep(obj)) describeOne(obj, out);
      if (obj instanceof protobuf.Namespace || obj instanceof protobuf.Type) walk(obj);
    }
  };
  walk(root);
  return out;
}

/** The services named and every message and enum their methods carry, however deeply nested. */
function reachable(root: protobuf.Root, services: string[]): Set<protobuf.ReflectionObject> {
  const seen = new Set<protobuf.ReflectionObject>();
  const visit = (obj: protobuf.ReflectionObject | null | undefined) => {
    if (!obj || seen.has(obj)) return;
    seen.add(obj);
    if (obj instanceof protobuf.Service)
      for (const m of obj.methodsArray) {
        m.resolve();
        visit(m.resolvedRequestType);
        visit(m.resolvedResponseType);
      }
    if (obj instanceof protobuf.Type) for (const f of obj.fieldsArray) visit(f.resolvedType);
  };
  for (const name of services) visit(root.lookup(name));
  return seen;
}

const servicesOf = (root: protobuf.Root) => [...describe(root).keys()].filter((k) => k.startsWith('service ')).map((k) => k.slice(8));

/**
 * Differences between the messages ours defines and upstream's of the same names, one line each:
 * ours may define only some messages (those the kubelet needs), but each of them whole.
 */
export function compareMessages(ours: protobuf.Root, upstream: protobuf.Root): string[] {
  const a = describe(ours);
  const b = describe(upstream);
  const messages = new Set([...a.keys()].filter((k) => k.startsWith('message ')).map((k) => k.slice(8)));
  const problems: string[] = [];
  for (const [name, want] of b) {
    const owner = name.startsWith('field ') ? name.slice(6, name.lastIndexOf('.')) : name.slice(8);
    if (!name.startsWith('field ') || !messages.has(owner)) continue;
    if (!a.has(name)) problems.push(`missing ${name}: ${want}`);
    else if (a.get(name) !== want) problems.push(`${name}: ours ${a.get(name)}, upstream ${want}`);
  }
  for (const [name, got] of a) if (!b.has(name)) problems.push(`extra ${name}${got ? `: ${got}` : ''}`);
  return problems;
}

/**
 * Differences between ours and upstream, one line each, naming the element. With subset, ours
 * declares only some of upstream's services: both sides are cut down to those services and the
 * messages and enums they carry, which must then match exactly (one that ours lacks is missing).
 */
export function compare(ours: protobuf.Root, upstream: protobuf.Root, opts: { subset?: boolean } = {}): string[] {
  const only = (root: protobuf.Root) => {
    if (!opts.subset) return undefined;
    const wanted = reachable(root, servicesOf(ours));
    return (obj: protobuf.ReflectionObject) => wanted.has(obj);
  };
  const a = describe(ours, only(ours));
  const b = describe(upstream, only(upstream));
  const problems: string[] = [];
  for (const [name, want] of b) {
    if (!a.has(name)) problems.push(`missing ${name}${want ? `: ${want}` : ''}`);
    else if (a.get(name) !== want) problems.push(`${name}: ours ${a.get(name)}, upstream ${want}`);
  }
  for (const [name, got] of a) if (!b.has(name)) problems.push(`extra ${name}${got ? `: ${got}` : ''}`);
  return problems;
}
