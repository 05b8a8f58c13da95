// Start-up latency against pods per node, for each kubelet of `make bench`'s runs: reads the
// figures test/bench/side-by-side.ts keeps in _output/bench/ and writes an SVG (docs/testing.md
// links docs/startup-latency.svg).
//   node test/bench/plot.ts [out.svg]
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { ROOT } from './lib.ts';

/** One `make bench` run as side-by-side.ts keeps it. */
export interface BenchRun {
  pods: number;
  sequential: boolean;
  date: string;
  kubelets: { label: string; version: string; p50: number; p99: number; rssPeakMB: number }[];
}

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd'];

/** Pure: an SVG line chart, one line per kubelet and percentile, pods per node on x, ms on y. */
export function svg(runs: BenchRun[], title: string): string {
  const W = 640,
    H = 400,
    L = 60,
    R = 190,
    T = 40,
    B = 50;
  const burst = runs.filter((r) => !r.sequential).sort((a, b) => a.pods - b.pods);
  // The kubelets of every run: a variant measured at one size only (BENCH_NODE_FLAGS) makes no line.
  const labels = [...new Set(burst.flatMap((r) => r.kubelets.map((k) => k.label)))].filter((l) =>
    burst.every((r) => r.kubelets.some((k) => k.label === l)),
  );
  const maxX = Math.max(1, ...burst.map((r) => r.pods));
  const maxY = Math.max(1, ...burst.flatMap((r) => r.kubelets.map((k) => k.p99)));
  const x = (v: number) => L + (v / maxX) * (W - L - R);
  const y = (v: number) => H - B - (v / maxY) * (H - T - B);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${L}" y="20" font-size="14">${title}</text>`,
    `<line x1="${L}" y1="${H - B}" x2="${W - R}" y2="${H - B}" stroke="black"/>`,
    `<line x1="${L}" y1="${T}" x2="${L}" y2="${H - B}" stroke="black"/>`,
    `<text x="${(L + W - R) / 2}" y="${H - 10}" text-anchor="middle">pods created at once on the node</text>`,
    `<text x="15" y="${(T + H - B) / 2}" transform="rotate(-90 15 ${(T + H - B) / 2})" text-anchor="middle">create -&gt; Running (ms)</text>`,
  ];
  for (const r of burst) out.push(`<text x="${x(r.pods)}" y="${H - B + 15}" text-anchor="middle">${r.pods}</text>`);
  for (let i = 0; i <= 4; i++) {
    const v = Math.round((maxY * i) / 4);
    out.push(`<text x="${L - 5}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${v}</text>`);
  }
  labels.forEach((label, i) => {
    const color = COLORS[i % COLORS.length]!;
    for (const [p, dash] of [
      ['p50', ''],
      ['p99', ' stroke-dasharray="5,4"'],
    ] as const) {
      const pts = burst.flatMap((r) =>
        r.kubelets.filter((k) => k.label === label).map((k) => `${x(r.pods).toFixed(1)},${y(k[p]).toFixed(1)}`),
      );
      out.push(`<polyline points="${pts.join(' ')}" fill="none" stroke="${color}" stroke-width="2"${dash}/>`);
      const ly = T + 10 + (i * 2 + (p === 'p99' ? 1 : 0)) * 18;
      out.push(`<line x1="${W - R + 10}" y1="${ly}" x2="${W - R + 35}" y2="${ly}" stroke="${color}" stroke-width="2"${dash}/>`);
      out.push(`<text x="${W - R + 40}" y="${ly + 4}">${label} ${p}</text>`);
    }
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

if (import.meta.main) {
  const dir = `${ROOT}/_output/bench`;
  const runs = readdirSync(dir)
    .filter((f) => f.startsWith('side-by-side-') && f.endsWith('.json'))
    .map((f) => JSON.parse(readFileSync(`${dir}/${f}`, 'utf8')) as BenchRun);
  const file = process.argv[2] ?? `${ROOT}/docs/startup-latency.svg`;
  writeFileSync(
    file,
    svg(
      runs,
      `make bench, ${runs
        .map((r) => r.date.slice(0, 10))
        .sort()
        .at(-1)}: start-up latency by pods per node`,
    ),
  );
  console.log(`${file}: ${runs.length} runs`);
}
