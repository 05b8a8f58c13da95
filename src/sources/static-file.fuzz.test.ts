// Bad input for static pods (#18): manifest files and staticPodURL bodies that are not Pods,
// huge, deeply nested, not UTF-8 or of the wrong shape. Each is refused with an Error naming
// where it came from (never a TypeError from deep inside), and the other files still load.
// Properties run with fixed seeds and run counts, so a failure replays.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { Logger } from '../log/log.ts';
import { MAX_DEPTH, MAX_MANIFEST_BYTES, MAX_YAML_BYTES, fileSource, parseManifest, readManifestFile, staticPod } from './static-file.ts';
import { podsFromURL } from './static-url.ts';

const WHERE = '/etc/kubernetes/manifests/m.yaml';
const run = (seed: number, numRuns = 300) => ({ seed, numRuns });

/** Calls f; passes when it returns, or throws an Error (not a TypeError or RangeError) naming `where`. */
function refusedClearly(f: () => unknown, where = WHERE): void {
  try {
    f();
  } catch (e) {
    assert.equal((e as Error).constructor, Error, `${(e as Error).constructor.name}: ${(e as Error).message}`);
    assert.ok((e as Error).message.startsWith(`${where}: `), (e as Error).message);
  }
}

const label = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?$/);
const validPod = fc.record({
  name: label,
  namespace: fc.option(label, { nil: undefined }),
  containers: fc.uniqueArray(label, { minLength: 1, maxLength: 5 }),
  volumes: fc.uniqueArray(label, { maxLength: 3 }),
});
const podDoc = (p: { name: string; namespace?: string; containers: string[]; volumes: string[] }) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: p.name, ...(p.namespace ? { namespace: p.namespace } : {}) },
  spec: {
    containers: p.containers.map((name) => ({ name, image: 'busybox' })),
    volumes: p.volumes.map((name) => ({ name, emptyDir: {} })),
  },
});

test('fuzz: any bytes or text are a Pod or a clear error naming the file', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 2048 }), (bytes) => refusedClearly(() => staticPod(Buffer.from(bytes), WHERE, 'node-a'))),
    run(0x5eed01, 500),
  );
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 512 }), (text) => refusedClearly(() => staticPod(text, WHERE, 'node-a'))),
    run(0x5eed02, 500),
  );
});

test('fuzz: a Pod with any field replaced by any JSON value is a Pod or a clear error (JSON and YAML alike)', () => {
  // Paths into a valid pod where a fuzzed value goes: the shapes a decoder would refuse.
  const paths = [
    [],
    ['metadata'],
    ['metadata', 'name'],
    ['metadata', 'namespace'],
    ['metadata', 'annotations'],
    ['spec'],
    ['spec', 'containers'],
    ['spec', 'containers', 0],
    ['spec', 'containers', 0, 'name'],
    ['spec', 'containers', 0, 'image'],
    ['spec', 'initContainers'],
    ['spec', 'volumes'],
    ['spec', 'volumes', 0],
    ['spec', 'volumes', 0, 'name'],
    ['kind'],
  ] as (string | number)[][];
  fc.assert(
    fc.property(
      validPod.filter((p) => p.volumes.length > 0),
      fc.constantFrom(...paths),
      fc.jsonValue({ maxDepth: 3 }),
      fc.boolean(),
      (p, path, value, asJSON) => {
        let doc: unknown = podDoc(p);
        if (path.length === 0) doc = value;
        else {
          let at = doc as Record<string | number, unknown>;
          for (const k of path.slice(0, -1)) at = at[k] as Record<string | number, unknown>;
          at[path.at(-1)!] = value;
        }
        const text = asJSON ? JSON.stringify(doc) : JSON.stringify(doc, null, 1).replace(/^\{/, ' {'); // " {": the YAML path
        refusedClearly(() => staticPod(text, WHERE, 'node-a'));
        refusedClearly(() => podsFromURL(JSON.stringify({ kind: 'PodList', items: [doc] }), 'http://m/pods', 'node-a'), 'http://m/pods');
        refusedClearly(() => podsFromURL(JSON.stringify({ kind: 'PodList', items: value }), 'http://m/pods', 'node-a'), 'http://m/pods');
      },
    ),
    run(0x5eed03, 600),
  );
});

test('fuzz: a valid Pod loads, from JSON and YAML alike, its name suffixed and its UID a function of node, file and content', () => {
  fc.assert(
    fc.property(validPod, (p) => {
      const doc = podDoc(p);
      const a = staticPod(JSON.stringify(doc), WHERE, 'node-a');
      const b = staticPod(JSON.stringify(doc, null, 2).replace(/^\{/, ' {'), WHERE, 'node-a');
      assert.equal(a.metadata!.name, `${p.name}-node-a`);
      assert.equal(a.metadata!.namespace, p.namespace ?? 'default');
      assert.deepEqual(a, b);
      assert.deepEqual(JSON.parse(JSON.stringify(a)), a, 'plain data');
    }),
    run(0x5eed04, 200),
  );
});

test('fuzz: invalid UTF-8 is refused in YAML (as goyaml) and replaced in JSON (as Go’s decoder)', () => {
  const invalid = fc.constantFrom([0xff], [0xc3, 0x28], [0xe2, 0x82], [0xf0, 0x9f, 0x92], [0xed, 0xa0, 0x80], [0x80]);
  fc.assert(
    fc.property(validPod, invalid, (p, bad) => {
      const doc = podDoc(p);
      const yaml = Buffer.concat([
        Buffer.from(`kind: Pod\napiVersion: v1\nmetadata:\n  name: ${p.name}\n  annotations: {a: "`),
        Buffer.from(bad),
        Buffer.from('"}\n'),
      ]);
      assert.throws(() => staticPod(yaml, WHERE, 'n'), { message: `${WHERE}: invalid YAML or JSON: invalid UTF-8` });
      const json = Buffer.from(JSON.stringify({ ...doc, metadata: { ...doc.metadata, annotations: { a: '@@' } } }));
      const at = json.indexOf('@@');
      const withBad = Buffer.concat([json.subarray(0, at), Buffer.from(bad), json.subarray(at + 2)]);
      assert.ok(staticPod(withBad, WHERE, 'n').metadata!.annotations!.a!.includes('\uFFFD'));
    }),
    run(0x5eed05, 100),
  );
});

test('deep nesting is refused at MAX_DEPTH without blowing the stack, JSON and YAML, flow and block', () => {
  const cases: [string, string][] = [
    ['json arrays', `{"a":${'['.repeat(10_000)}${']'.repeat(10_000)}}`],
    ['json objects', `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`],
    ['yaml flow', `a: ${'['.repeat(10_000)}${']'.repeat(10_000)}`],
    ['yaml compact sequences', `a:\n${'- '.repeat(10_000)}x\n`],
  ];
  for (const [what, text] of cases)
    assert.throws(
      () => staticPod(text, WHERE, 'n'),
      { message: `${WHERE}: invalid YAML or JSON: exceeded max depth of ${MAX_DEPTH}` },
      what,
    );
  // Nesting below the limit, in a field a Pod does not have, still parses.
  const ok = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"},"x":${'['.repeat(MAX_DEPTH - 2)}${']'.repeat(MAX_DEPTH - 2)},"spec":{"containers":[{"name":"c","image":"i"}]}}`;
  assert.equal(staticPod(ok, WHERE, 'n').metadata!.name, 'a-n');
});

test('size: past maxConfigLength the read limit is reached; YAML past MAX_YAML_BYTES is refused; big JSON loads', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kts-huge-'));
  try {
    const huge = join(dir, 'huge.json');
    writeFileSync(huge, Buffer.alloc(MAX_MANIFEST_BYTES + 1, 0x20));
    assert.throws(() => readManifestFile(huge), { message: `${huge}: the read limit is reached` });
    assert.throws(() => parseManifest(Buffer.alloc(MAX_MANIFEST_BYTES + 1, 0x20), 'u'), { message: 'u: the read limit is reached' });
    const yaml = `apiVersion: v1\nkind: Pod\nmetadata: {name: a, annotations: {x: "${'y'.repeat(MAX_YAML_BYTES)}"}}\nspec: {containers: [{name: c, image: i}]}\n`;
    assert.throws(() => staticPod(yaml, WHERE, 'n'), /YAML of more than 262144 bytes is refused \(as JSON, up to 10485760\)/);
    const big = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'a', annotations: { x: 'y'.repeat(MAX_MANIFEST_BYTES - 200) } },
      spec: { containers: [{ name: 'c', image: 'i' }] },
    };
    const file = join(dir, 'big.json');
    writeFileSync(file, JSON.stringify(big));
    assert.equal(staticPod(readManifestFile(file), file, 'n').metadata!.annotations!.x!.length, MAX_MANIFEST_BYTES - 200);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('pod specs at the apiserver limits: 253-character names with the node suffix, many containers, env vars and volumes', () => {
  const node = 'node-a';
  const name = (n: number) => 'a'.repeat(n);
  const doc = (podName: string) =>
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: podName, namespace: 'n'.repeat(63) },
      spec: {
        containers: Array.from({ length: 200 }, (_, i) => ({
          name: `c${i}-${'x'.repeat(55)}`,
          image: 'busybox',
          env: Array.from({ length: 500 }, (_, j) => ({ name: `E${j}`, value: 'v'.repeat(20) })),
        })),
        volumes: Array.from({ length: 300 }, (_, i) => ({ name: `v${i}`, emptyDir: {} })),
      },
    });
  assert.equal(staticPod(doc(name(253 - node.length - 1)), WHERE, node).metadata!.name!.length, 253);
  assert.throws(
    () => staticPod(doc(name(253 - node.length)), WHERE, node),
    /is not a valid DNS-1123 subdomain \(of at most 253 characters with "-node-a"\)/,
  );
});

test('regressions: shapes that threw TypeErrors, and names that would become paths outside the pod’s directories', () => {
  const pod = (spec: string, meta = '{name: ok}') => `apiVersion: v1\nkind: Pod\nmetadata: ${meta}\nspec: ${spec}\n`;
  const cases: [string, string][] = [
    [pod('{containers: 5}'), 'spec.containers: must be a list'],
    [pod('{containers: [null]}'), 'spec.containers[0]: must be an object'],
    [pod('{containers: [{name: c, image: i}], initContainers: "x"}'), 'spec.initContainers: must be a list'],
    [pod('"x"'), 'spec: must be an object'],
    [
      pod('{containers: [{name: c, image: i}]}', '{name: 5}'),
      'metadata.name 5 is not a valid DNS-1123 subdomain (of at most 253 characters with "-n")',
    ],
    [pod('{containers: [{name: c, image: i}]}', '{name: a, annotations: "x"}'), 'metadata.annotations: must be a map of strings'],
    [
      pod('{containers: [{name: c, image: i}]}', '{name: a, namespace: ../../etc}'),
      'metadata.namespace "../../etc" is not a valid DNS-1123 label',
    ],
    [pod('{containers: [{name: ../../x, image: i}]}'), 'spec.containers[0].name: "../../x" is not a valid DNS-1123 label'],
    [
      pod('{containers: [{name: c, image: i}], volumes: [{name: ../../../../etc, emptyDir: {}}]}'),
      'spec.volumes[0].name: "../../../../etc" is not a valid DNS-1123 label',
    ],
    [pod('{containers: [{name: c, image: i}], initContainers: [{name: c, image: i}]}'), 'spec.containers[0].name: Duplicate value: "c"'],
    ['[1, 2]', 'not a Pod object'],
  ];
  for (const [text, want] of cases) assert.throws(() => staticPod(text, '/m.yaml', 'n'), { message: `/m.yaml: ${want}` }, text);
  const url = 'http://m/pods';
  assert.throws(() => podsFromURL('{"kind":"PodList","items":"abc"}', url, 'n'), { message: `${url}: items: must be a list of Pods` });
  assert.throws(() => podsFromURL('{"kind":"PodList","items":[null]}', url, 'n'), { message: `${url}: items[0]: not a Pod object` });
});

test('fileSource: bad files (not Pods, huge, deep, not UTF-8, binary, a directory, a dangling link) are each logged once; the good ones load', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kts-static-bad-'));
  const good = (name: string) =>
    JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'i' }] } });
  writeFileSync(join(dir, 'a.json'), good('a'));
  writeFileSync(join(dir, 'deployment.yaml'), 'apiVersion: apps/v1\nkind: Deployment\n');
  writeFileSync(join(dir, 'huge.json'), Buffer.alloc(MAX_MANIFEST_BYTES + 10, 0x20));
  writeFileSync(join(dir, 'deep.yaml'), `a: ${'['.repeat(20_000)}`);
  writeFileSync(join(dir, 'latin1.yaml'), Buffer.from('kind: Pod\nname: caf\xe9\n', 'latin1'));
  writeFileSync(join(dir, 'binary'), Buffer.from([0, 1, 2, 0xff, 0xfe, 0x7b]));
  mkdirSync(join(dir, 'subdir'));
  symlinkSync(join(dir, 'nowhere'), join(dir, 'dangling.yaml'));
  writeFileSync(join(dir, 'z.yaml'), `apiVersion: v1\nkind: Pod\nmetadata: {name: z}\nspec: {containers: [{name: c, image: i}]}\n`);
  const errors: string[] = [];
  const log: Logger = { info() {}, v() {}, warn() {}, error: (_m, f) => void errors.push(String(f?.path)) };
  const pods: Pod[] = [];
  const src = fileSource(dir, 'n', { update: (p) => void pods.push(p), remove() {} }, log, 50);
  try {
    await new Promise((r) => setTimeout(r, 200)); // a few rescans: each error is still logged once
    assert.deepEqual(pods.map((p) => p.metadata!.name).sort(), ['a-n', 'z-n']);
    assert.deepEqual(errors.map((p) => p.slice(dir.length + 1)).sort(), [
      'binary',
      'dangling.yaml',
      'deep.yaml',
      'deployment.yaml',
      'huge.json',
      'latin1.yaml',
    ]);
  } finally {
    src.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
