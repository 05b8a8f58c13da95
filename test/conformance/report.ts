// Turns the ginkgo JUnit report of `make conformance` into docs/conformance.md: the command,
// release, date, commit, counts (per SIG for the full suite, against the release's conformance
// list), wall time, every failure with its known cause, and the exclusions.
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

/** The test names ("codename") of the release's conformance list, conformance.yaml. */
export function parseConformanceList(yaml: string): string[] {
  // Each codename is a single-quoted scalar, folded over indented lines; '' is a quote.
  return [...yaml.matchAll(/^ {2}codename: '((?:[^']|'')*)'/gm)].map((m) => m[1].replace(/\s*\n\s*/g, ' ').replace(/''/g, "'"));
}

/** The JUnit report without the specs the selection skipped and the captured output of passed
 *  ones (together nearly all of the file). */
export function trimJUnit(xml: string): string {
  return xml
    .replace(/\s*<testcase\b[^>]*status="skipped"[^>]*>[\s\S]*?<\/testcase>/g, '')
    .replace(/(<testcase\b[^>]*status="passed"[^>]*>)[\s\S]*?(<\/testcase>)/g, '$1$2');
}

const sigOf = (name: string) => /^\[(sig-[a-z-]+)\]/.exec(name)?.[1] ?? 'other';

export interface ReportOptions {
  /** full, node or sig-node (hack/conformance.sh's SUITE). */
  suite: string;
  excluded: string;
  known: string;
  wallSeconds: number;
  procs: number;
  nodes: number;
  /** On a kind cluster (CLUSTER=kind): how many of its nodes run kubelet-ts (the others the upstream kubelet). */
  kind?: { kubeletTs: number };
  release: string;
  commit: string;
  date: string;
  missing: string[];
  /** The release's conformance list (the full suite): what was expected to run. */
  list?: string[];
  notes?: string;
}

export function render(cases: Case[], opts: ReportOptions): string {
  const specs = cases.filter((c) => c.outcome !== 'skipped' && (!isSuiteNode(c) || c.outcome === 'failed'));
  const failed = specs.filter((c) => c.outcome === 'failed');
  const passed = specs.filter((c) => c.outcome === 'passed');
  const excluded = parseRules(opts.excluded);
  const known = parseRules(opts.known);
  const cause = (name: string) => known.find((k) => k.re.test(name))?.text ?? 'cause not yet known';
  const min = (s: number) => `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, '0')}s`;
  const ran = new Set(specs.map((c) => specName(c.name)));
  const list = opts.list ?? [];
  const excludedNames = list.filter((n) => !ran.has(n) && excluded.some((e) => e.re.test(n)));
  const notRun = list.filter((n) => !ran.has(n) && !excluded.some((e) => e.re.test(n)));
  const full = opts.suite === 'full';
  const cluster = opts.kind
    ? `a kind cluster of ${opts.nodes} nodes (one control plane, ${opts.nodes - 1} workers; ${opts.kind.kubeletTs === opts.nodes ? 'kubelet-ts on every node' : `kubelet-ts on ${opts.kind.kubeletTs}, the upstream kubelet on the others`}) on one machine: kind on podman, with kube-proxy, CoreDNS and flannel (docs/kind.md)`
    : `a kubeadm cluster of ${opts.nodes} kubelet-ts nodes (one control plane, ${opts.nodes - 1} workers) on one machine, with kube-proxy, CoreDNS and flannel`;
  const suites: Record<string, { title: string; about: string; command: string; selection: string }> = {
    full: {
      title: 'Conformance',
      about: `The whole [Conformance] suite of Kubernetes ${opts.release}, against ${cluster}.`,
      command: 'make conformance',
      selection: `every test of the release's conformance list (test/conformance/testdata/conformance.yaml, ${list.length} tests), but the exclusions below`,
    },
    node: {
      title: 'Conformance: sig-node and the kubelet-facing sig-storage tests',
      about: `The [Conformance] tests that exercise the kubelet most, against ${cluster}.`,
      command: 'make conformance-node',
      selection:
        'the [Conformance] tests of sig-node, and of sig-storage ConfigMap, Secrets, Downward API, Projected, EmptyDir, HostPath and Subpath; without [Serial], [Disruptive], [Flaky] and the exclusions below',
    },
    'sig-node': {
      title: 'The other sig-node tests',
      about: `The sig-node tests of e2e.test ${opts.release} that are not [Conformance], against ${cluster}.`,
      command: 'make conformance-sig-node',
      selection:
        'the [sig-node] tests without [Conformance], [Serial], [Disruptive], [Flaky], [Alpha], [Feature:OffByDefault] and the exclusions below',
    },
    storage: {
      title: 'Storage: the CSI hostpath driver and CSI Mock specs',
      about: `The \`[Driver: csi-hostpath]\` and \`CSI Mock\` specs of e2e.test ${opts.release}: upstream's storage test suites on the CSI hostpath driver and its sidecars (built here, docs/csi.md), which each spec deploys into its own namespace, against ${cluster}.`,
      command: 'make conformance-storage',
      selection:
        'the [Driver: csi-hostpath] and CSI Mock specs without [Serial], [Disruptive], [Flaky], [Alpha], [Feature:OffByDefault], [Feature:SELinux] (no SELinux on these nodes) and the exclusions below',
    },
  };
  const about = suites[opts.suite] ?? suites.node;
  // The kind cluster's runs: make conformance-kind for the whole suite, hack/conformance.sh for the others.
  const command = !opts.kind ? about.command : full ? 'make conformance-kind' : `CLUSTER=kind SUITE=${opts.suite} bash hack/conformance.sh`;
  // The suites run on both clusters: each report points to the other's.
  const twin = ({ full: 'conformance', storage: 'conformance-storage' } as Record<string, string>)[opts.suite];
  const lines = [
    `# ${about.title}${opts.kind ? ' on kind' : ''}`,
    '',
    about.about,
    '',
    `- Command: \`${command}\` (hack/conformance.sh: e2e.test ${opts.release}, --provider=skeleton, ${opts.procs} ginkgo processes, [Serial] specs after the others, alone)`,
    `- Selection: ${about.selection}`,
    `- Date: ${opts.date}; commit ${opts.commit}; wall time ${min(opts.wallSeconds)}`,
    `- **${passed.length} passed, ${failed.length} failed, ${full ? excludedNames.length : excluded.length} excluded**${full ? `, ${notRun.length} not run` : ''} (of ${specs.length} run)`,
    ...(twin
      ? [`- The same suite ${opts.kind ? `on the local cluster: [${twin}.md](${twin}.md)` : `on kind: [${twin}-kind.md](${twin}-kind.md)`}`]
      : []),
    '',
  ];
  if (full) {
    const sigs = [...new Set([...list, ...specs.map((c) => specName(c.name))].map(sigOf))].sort();
    const count = (sig: string, names: string[]) => names.filter((n) => sigOf(n) === sig).length;
    const names = (cs: Case[]) => cs.map((c) => specName(c.name));
    lines.push('| SIG | passed | failed | excluded | not run |', '|---|---|---|---|---|');
    for (const sig of sigs) {
      lines.push(
        `| ${sig} | ${count(sig, names(passed))} | ${count(sig, names(failed))} | ${count(sig, excludedNames)} | ${count(sig, notRun)} |`,
      );
    }
    lines.push('');
  }
  lines.push(
    '## Failures',
    '',
    ...(failed.length
      ? failed.map((c) => `- ${specName(c.name)}: ${cause(c.name)}\n  - \`${firstLine(c.message).replace(/`/g, "'")}\``)
      : ['None.']),
    '',
    '## Excluded',
    '',
    ...(excluded.length ? excluded.map((e) => `- \`${e.re.source}\`: ${e.text}`) : ['None.']),
    '',
  );
  if (notRun.length) lines.push('## In the conformance list but not run', '', ...notRun.map((n) => `- ${n}`), '');
  if (opts.notes) lines.push(opts.notes.trim(), '');
  // The events name a failed pull twice: "Failed to pull image X: why", then "Error: ErrImagePull".
  const pulls = [...new Set(opts.missing.filter((m) => !m.startsWith('Error: ')))];
  if (pulls.length) {
    lines.push(
      '## Pulls that failed',
      '',
      'Some tests pull images that do not exist on purpose (an invalid registry, a :404 or :nonexistent tag); any other image named here is one the run lacked.',
      '',
      ...pulls.map((m) => `- ${m}`),
      '',
    );
  }
  lines.push('## Passed', '', ...passed.map((c) => `- ${specName(c.name)} (${c.seconds.toFixed(0)} s)`), '');
  return lines.join('\n');
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      junit: { type: 'string' },
      'trim-junit': { type: 'string' },
      excluded: { type: 'string' },
      known: { type: 'string' },
      wall: { type: 'string' },
      procs: { type: 'string' },
      nodes: { type: 'string' },
      'kind-kubelet-ts': { type: 'string' },
      release: { type: 'string' },
      suite: { type: 'string' },
      commit: { type: 'string' },
      list: { type: 'string' },
      missing: { type: 'string' },
      notes: { type: 'string' },
    },
  });
  const read = (p?: string) => (p && existsSync(p) ? readFileSync(p, 'utf8') : '');
  const junit = values.junit ?? values['trim-junit'];
  if (!junit || !existsSync(junit)) {
    console.error(`error: no JUnit report at ${junit}`);
    process.exit(1);
  }
  if (values['trim-junit']) {
    process.stdout.write(trimJUnit(read(junit)));
  } else {
    process.stdout.write(
      render(parseJUnit(read(junit)), {
        suite: values.suite ?? 'node',
        excluded: read(values.excluded),
        known: read(values.known),
        wallSeconds: Number(values.wall ?? 0),
        procs: Number(values.procs ?? 1),
        nodes: Number(values.nodes ?? 1),
        kind: values['kind-kubelet-ts'] === undefined ? undefined : { kubeletTs: Number(values['kind-kubelet-ts']) },
        release: values.release ?? '',
        commit: values.commit ?? '',
        date: new Date().toISOString().slice(0, 10),
        missing: read(values.missing).split('\n').filter(Boolean),
        list: values.list ? parseConformanceList(read(values.list)) : undefined,
        notes: read(values.notes),
      }),
    );
  }
}
