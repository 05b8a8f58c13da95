// Where a kubelet-ts process's CPU went, from a V8 CPU profile (node --cpu-prof, written when
// the process exits; `make bench` takes one with BENCH_NODE_FLAGS='--cpu-prof --cpu-prof-dir=DIR').
// Prints the self time by package or kubelet-ts folder, then by function, costliest first.
//   node test/bench/cpu-profile.ts FILE.cpuprofile [top] [from-seconds]
import { readFileSync } from 'node:fs';

/** The parts of a .cpuprofile this reads (Chrome DevTools' Profile). */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number; children?: number[] }[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

/** Who owns a frame: V8's own entries, node's internals, an npm package, or a kubelet-ts folder (dist/<folder>). */
export function owner(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node internals';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const ours = /\/dist\/([^/]+)\//.exec(url);
  return ours ? `kubelet-ts ${ours[1]}` : url;
}

const frameName = (c: CpuProfile['nodes'][number]['callFrame']) => {
  const file = c.url.replace(/^.*\/(node_modules|dist)\//, '');
  return `${c.functionName || '(anonymous)'} ${file}${file ? `:${c.lineNumber + 1}` : ''}`;
};

/**
 * Pure: self time in ms by owner and by function, each sorted costliest first; and by the nearest
 * kubelet-ts function up each sample's stack (byOurs: which of our code a library's or node's CPU
 * ran for; '(no kubelet-ts frame)' for GC and callbacks entered from node alone). fromMs: only the
 * samples taken that long after the profile's start (a process's idle minutes, not its start-up).
 */
export function selfTime(
  p: CpuProfile,
  fromMs = 0,
): { totalMs: number; byOwner: [string, number][]; byFunction: [string, number][]; byOurs: [string, number][] } {
  const ms = new Map<number, number>();
  if (p.samples && p.timeDeltas) {
    // timeDeltas[i] is the time from sample i-1 to sample i: charge it to sample i's frame.
    let at = 0;
    for (const [i, id] of p.samples.entries()) {
      at += (p.timeDeltas[i] ?? 0) / 1000;
      if (at >= fromMs) ms.set(id, (ms.get(id) ?? 0) + (p.timeDeltas[i] ?? 0) / 1000);
    }
  } else {
    const hits = p.nodes.reduce((n, x) => n + (x.hitCount ?? 0), 0) || 1;
    for (const x of p.nodes) ms.set(x.id, (((x.hitCount ?? 0) * (p.endTime - p.startTime)) / hits) * 1e-3);
  }
  const byOwner = new Map<string, number>(),
    byFunction = new Map<string, number>(),
    byOurs = new Map<string, number>();
  const parent = new Map<number, number>();
  const byId = new Map(p.nodes.map((x) => [x.id, x]));
  for (const x of p.nodes) for (const c of x.children ?? []) parent.set(c, x.id);
  const ours = (id: number): string => {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const c = byId.get(at)!.callFrame;
      if (owner(c.url, c.functionName).startsWith('kubelet-ts ')) return frameName(c);
    }
    return '(no kubelet-ts frame)';
  };
  let totalMs = 0;
  for (const x of p.nodes) {
    const t = ms.get(x.id) ?? 0;
    if (!t || x.callFrame.functionName === '(idle)') continue;
    totalMs += t;
    const o = owner(x.callFrame.url, x.callFrame.functionName);
    byOwner.set(o, (byOwner.get(o) ?? 0) + t);
    const f = frameName(x.callFrame);
    byFunction.set(f, (byFunction.get(f) ?? 0) + t);
    const u = ours(x.id);
    byOurs.set(u, (byOurs.get(u) ?? 0) + t);
  }
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  return { totalMs, byOwner: sorted(byOwner), byFunction: sorted(byFunction), byOurs: sorted(byOurs) };
}

if (import.meta.main) {
  const [file, top = '30', from = '0'] = process.argv.slice(2);
  if (!file) {
    console.error('usage: node test/bench/cpu-profile.ts FILE.cpuprofile [top] [from-seconds]');
    process.exit(2);
  }
  const { totalMs, byOwner, byFunction, byOurs } = selfTime(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, Number(from) * 1000);
  const line = ([what, t]: [string, number]) => `${t.toFixed(0).padStart(8)} ms ${((100 * t) / totalMs).toFixed(1).padStart(5)}%  ${what}`;
  console.log(`CPU (not idle): ${(totalMs / 1000).toFixed(1)} s\n\nby owner`);
  for (const x of byOwner.slice(0, Number(top))) console.log(line(x));
  console.log('\nby function');
  for (const x of byFunction.slice(0, Number(top))) console.log(line(x));
  console.log('\nby the nearest kubelet-ts function up the stack');
  for (const x of byOurs.slice(0, Number(top))) console.log(line(x));
}
