// Turns the ginkgo JUnit report of `make conformance` into docs/conformance.md: the command,
// release, date, counts, wall time, every failure with its known cause, and the exclusions.
import { readFileSync, existsSync } from 'node:fs';
import { parseArgs } from 'node:util';

export interface Case {
  name: string;
  seconds: number;
  outcome: 'passed' | 'failed' | 'skipped';
  message: string;
}

const NAMED: Record<string, string> = { lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' };
const decodeEntities = (s: string) =>
  s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);/g, (m, e: string) =>
    e.startsWith('#x')
      ? String.fromCodePoint(parseInt(e.slice(2), 16))
      : e.startsWith('#')
        ? String.fromCodePoint(Number(e.slice(1)))
        : (NAMED[e] ?? m),
  );

/** The test cases of a ginkgo JUnit report (the suite's own setup nodes included). */
export function parseJUnit(xml: string): Case[] {
  const cases: Case[] = [];
  for (const m of xml.matchAll(/<testcase\b([^>]*?)(\/>|>([\s\S]*?)<\/testcase>)/g)) {
    const attr = (k: string) => decodeEntities(new RegExp(`\\b${k}="([^"]*)"`).exec(m[1])?.[1] ?? '');
    const body = m[3] ?? '';
    const failure = /<(failure|error)\b([^>]*)>/.exec(body);
    const outcome = failure ? 'failed' : /<skipped\b/.test(body) || attr('status') === 'skipped' ? 'skipped' : 'passed';
    const message = failure ? decodeEntities(/\bmessage="([^"]*)"/.exec(failure[2])?.[1] ?? '') : '';
    cases.push({ name: attr('name'), seconds: Number(attr('time')) || 0, outcome, message });
  }
  return cases;
}

/** "regex  # text" lines (comments and blanks ignored). */
export function parseRules(text: string): { re: RegExp; text: string }[] {
  return text
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('#'))
    .map((l) => {
      const i = l.indexOf('  # ');
      return { re: new RegExp(i < 0 ? l : l.slice(0, i)), text: i < 0 ? '' : l.slice(i + 4) };
    });
}

// "[sig-node] Pods should ... [Conformance]": the spec names, without ginkgo's "[It] " prefix.
// ginkgo appends the labels ("[sig-node, Conformance]"); the name already carries them.
const specName = (n: string) => n.replace(/^\[It\] /, '').replace(/ \[[^\]]*, [^\]]*\]$/, '');
// The suite's own nodes ([SynchronizedBeforeSuite], [ReportAfterSuite], ...) count only when they fail.
const isSuiteNode = (c: Case) => /^\[(Synchronized)?(Before|After|ReportBefore|ReportAfter)Suite\]/.test(c.name);
const firstLine = (s: string) =>
  s
    .split('\n')
    .find((l) => l.trim())
    ?.trim()
    .slice(0, 200) ?? '';

export function render(
  cases: Case[],
  opts: {
    excluded: string;
    known: string;
    wallSeconds: number;
    procs: number;
    release: string;
    date: string;
    missing: string[];
    notes?: string;
  },
): string {
  const specs = cases.filter((c) => c.outcome !== 'skipped' && (!isSuiteNode(c) || c.outcome === 'failed'));
  const failed = specs.filter((c) => c.outcome === 'failed');
  const passed = specs.filter((c) => c.outcome === 'passed');
  const excluded = parseRules(opts.excluded);
  const known = parseRules(opts.known);
  const cause = (name: string) => known.find((k) => k.re.test(name))?.text ?? 'cause not yet known';
  const min = (s: number) => `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, '0')}s`;
  const lines = [
    '# Conformance',
    '',
    `The upstream conformance tests that exercise the kubelet, run against kubelet-ts on the local stack.`,
    '',
    `- Command: \`make conformance\` (hack/conformance.sh: e2e.test ${opts.release}, --provider=skeleton, ${opts.procs} ginkgo processes)`,
    `- Selection: the [Conformance] tests of sig-node, and of sig-storage ConfigMap, Secrets, Downward API, Projected, EmptyDir, HostPath and Subpath; without [Serial], [Disruptive], [Flaky] and the exclusions below`,
    `- Date: ${opts.date}; wall time ${min(opts.wallSeconds)}`,
    `- **${passed.length} passed, ${failed.length} failed, ${excluded.length} excluded** (of ${specs.length} run)`,
    '',
    '## Failures',
    '',
    ...(failed.length
      ? failed.map((c) => `- ${specName(c.name)}: ${cause(c.name)}\n  - \`${firstLine(c.message).replace(/`/g, "'")}\``)
      : ['None.']),
    '',
    '## Excluded',
    '',
    ...excluded.map((e) => `- \`${e.re.source}\`: ${e.text}`),
    '',
  ];
  if (opts.notes) lines.push(opts.notes.trim(), '');
  if (opts.missing.length) lines.push('## Images that could not be pulled', '', ...[...new Set(opts.missing)].map((m) => `- ${m}`), '');
  lines.push('## Passed', '', ...passed.map((c) => `- ${specName(c.name)} (${c.seconds.toFixed(0)} s)`), '');
  return lines.join('\n');
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      junit: { type: 'string' },
      excluded: { type: 'string' },
      known: { type: 'string' },
      wall: { type: 'string' },
      procs: { type: 'string' },
      release: { type: 'string' },
      missing: { type: 'string' },
      notes: { type: 'string' },
    },
  });
  if (!values.junit || !existsSync(values.junit)) {
    console.error(`error: no JUnit report at ${values.junit}`);
    process.exit(1);
  }
  const read = (p?: string) => (p && existsSync(p) ? readFileSync(p, 'utf8') : '');
  process.stdout.write(
    render(parseJUnit(read(values.junit)), {
      excluded: read(values.excluded),
      known: read(values.known),
      wallSeconds: Number(values.wall ?? 0),
      procs: Number(values.procs ?? 1),
      release: values.release ?? '',
      date: new Date().toISOString().slice(0, 10),
      missing: read(values.missing).split('\n').filter(Boolean),
      notes: read(values.notes),
    }),
  );
}
