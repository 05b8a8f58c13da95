// The import rules of src/ (README, "Map of the code"), checked on the source text: no file
// imports itself through others (no cycle), and every import runs downward or sideways through
// the layers below, so a reader can take the folders bottom-up. A new folder gets a row here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

// 0: the vocabulary everything may use; 1: clients, the runtime's plain data (container) and
// shared mechanics; 2: the kubelet's parts; 3: what reads every part (the config file, the
// kubelet API); 4: the wiring and the command line.
const LAYERS: Record<string, number> = {
  log: 0,
  backoff: 0,
  podutil: 0,
  features: 0,
  checkpoint: 0,
  grpc: 0,
  apiserver: 1,
  container: 1,
  cri: 1,
  resources: 1,
  mount: 1,
  dbus: 1,
  events: 1,
  metrics: 1,
  network: 1,
  tracing: 1,
  process: 1,
  certificates: 2,
  join: 2,
  node: 2,
  sources: 2,
  pods: 2,
  pleg: 2,
  runtime: 2,
  status: 2,
  volumes: 2,
  csi: 2,
  'plugin-manager': 2,
  devices: 2,
  cpumanager: 2,
  memorymanager: 2,
  topologymanager: 2,
  dra: 2,
  resize: 2,
  userns: 2,
  security: 2,
  prober: 2,
  images: 2,
  'container-logs': 2,
  gc: 2,
  nodeshutdown: 2,
  eviction: 2,
  stats: 2,
  config: 3,
  server: 3,
  kubelet: 4,
  cli: 4,
  hollow: 4,
};

const SRC = join(import.meta.dirname, '../../src');

/** Every non-test source file of src/ with the src/ files it imports (generated code left out). */
function importGraph(): Map<string, string[]> {
  const files = (readdirSync(SRC, { recursive: true }) as string[]).filter(
    (f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.split('/').includes('generated'),
  );
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(join(SRC, file), 'utf8');
    const targets = [...text.matchAll(/^(?:import|export)\s[^;]*?from\s+'(\.[^']+)'/gms)]
      .map((m) => relative(SRC, normalize(join(SRC, dirname(file), m[1]!))))
      .filter((t) => !t.split('/').includes('generated'));
    graph.set(file, targets);
  }
  return graph;
}

/** The import cycles of a graph, each as the files around it (Tarjan's strongly connected components). */
export function cycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || graph.get(v)?.includes(v)) out.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

/** The imports that run up the layers, as "from -> to". */
export function upward(graph: Map<string, string[]>, layers: Record<string, number>): string[] {
  const layer = (file: string) => layers[file.split('/')[0]!];
  const out: string[] = [];
  for (const [from, targets] of graph)
    for (const to of targets) if ((layer(to) ?? Infinity) > (layer(from) ?? -Infinity)) out.push(`${from} -> ${to}`);
  return out;
}

test('cycles and upward: found on a small graph, and none on a clean one', () => {
  const g = new Map([
    ['a/x.ts', ['b/y.ts']],
    ['b/y.ts', ['a/x.ts']],
    ['b/z.ts', ['a/x.ts']],
  ]);
  assert.deepEqual(cycles(g), [['a/x.ts', 'b/y.ts']]);
  assert.deepEqual(upward(g, { a: 0, b: 1 }), ['a/x.ts -> b/y.ts']);
  assert.deepEqual(cycles(new Map([['a/x.ts', ['b/y.ts']]])), []);
  assert.deepEqual(upward(new Map([['b/y.ts', ['a/x.ts']]]), { a: 0, b: 1 }), []);
});

test('every folder of src has a layer', () => {
  const folders = readdirSync(SRC, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);
  assert.deepEqual(
    folders.filter((f) => LAYERS[f] === undefined),
    [],
  );
});

test('src has no import cycle', () => {
  assert.deepEqual(cycles(importGraph()), []);
});

test('every import in src runs down the layers or sideways', () => {
  assert.deepEqual(upward(importGraph(), LAYERS), []);
});
