import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConformanceList, parseJUnit, parseRules, render, trimJUnit } from './report.ts';

const xml = `<?xml version="1.0"?><testsuites><testsuite>
<testcase name="[SynchronizedBeforeSuite]" classname="Kubernetes e2e suite" status="passed" time="1.5"></testcase>
<testcase name="[It] [sig-node] Pods should be updated [NodeConformance] [Conformance] [sig-node, NodeConformance, Conformance]" status="passed" time="6.2"></testcase>
<testcase name="[It] [sig-node] Secrets should work [Conformance] [sig-node, Conformance]" status="failed" time="3"><failure message="expected &#34;data-1=value-1&#34;&#xA;second line" type="failed">x</failure></testcase>
<testcase name="[It] [sig-apps] Other" status="skipped" time="0"><skipped message="skipped"></skipped></testcase>
</testsuite></testsuites>`;

const opts = {
  excluded: '# comment\n\\[sig-node\\] ImageVolume  # no image volumes here\n',
  known: 'Secrets should work  # image lacked X; fixed in Y\n',
  wallSeconds: 125,
  procs: 4,
  nodes: 4,
  release: 'v1.36.3',
  commit: 'abc1234',
  date: '2026-11-22',
  missing: [],
};

test('JUnit cases: outcome, time, and the failure message with XML entities decoded', () => {
  assert.deepEqual(
    parseJUnit(xml).map((c) => [c.outcome, c.seconds, c.message]),
    [
      ['passed', 1.5, ''],
      ['passed', 6.2, ''],
      ['failed', 3, 'expected "data-1=value-1"\nsecond line'],
      ['skipped', 0, ''],
    ],
  );
});

test('the report counts run specs (not suite nodes or skipped ones) and quotes known causes', () => {
  const md = render(parseJUnit(xml), { ...opts, suite: 'node' });
  assert.match(md, /\*\*1 passed, 1 failed, 1 excluded\*\* \(of 2 run\)/);
  assert.match(md, /wall time 2m05s/);
  assert.match(md, /- \[sig-node\] Secrets should work \[Conformance\]: image lacked X; fixed in Y\n {2}- `expected "data-1=value-1"`/);
  assert.match(md, /- \[sig-node\] Pods should be updated \[NodeConformance\] \[Conformance\] \(6 s\)/);
  assert.deepEqual(
    parseRules('a  # why\n#c\n\nb').map((r) => [r.re.source, r.text]),
    [
      ['a', 'why'],
      ['b', ''],
    ],
  );
});

const yaml = `- testname: Pods, update
  codename: '[sig-node] Pods should be updated [NodeConformance] [Conformance]'
  description: x
- testname: Secrets
  codename: '[sig-node] Secrets should work
    [Conformance]'
- testname: Image volume
  codename: '[sig-node] ImageVolume should mount [Conformance]'
- testname: Quoted
  codename: '[sig-apps] Deployment shouldn''t stop [Conformance]'
`;

test('the conformance list: codenames, folded lines joined and quotes unescaped', () => {
  assert.deepEqual(parseConformanceList(yaml), [
    '[sig-node] Pods should be updated [NodeConformance] [Conformance]',
    '[sig-node] Secrets should work [Conformance]',
    '[sig-node] ImageVolume should mount [Conformance]',
    "[sig-apps] Deployment shouldn't stop [Conformance]",
  ]);
});

test('the full suite: per-SIG counts against the list; a listed test neither run nor excluded is named', () => {
  const md = render(parseJUnit(xml), { ...opts, suite: 'full', list: parseConformanceList(yaml) });
  assert.match(md, /\*\*1 passed, 1 failed, 1 excluded\*\*, 1 not run \(of 2 run\)/);
  assert.match(md, /\| sig-apps \| 0 \| 0 \| 0 \| 1 \|/);
  assert.match(md, /\| sig-node \| 1 \| 1 \| 1 \| 0 \|/);
  assert.match(md, /## In the conformance list but not run\n\n- \[sig-apps\] Deployment shouldn't stop \[Conformance\]/);
  assert.match(md, /4 kubelet-ts nodes \(one control plane, 3 workers\)/);
  assert.match(md, /- The same suite on kind: \[conformance-kind.md\]\(conformance-kind.md\)/);
});

test('a kind cluster: its title, command and which nodes run kubelet-ts', () => {
  const cases: [number, RegExp][] = [
    [2, /kubelet-ts on 2, the upstream kubelet on the others/],
    [3, /kubelet-ts on every node/],
  ];
  for (const [kubeletTs, want] of cases) {
    const md = render(parseJUnit(xml), { ...opts, nodes: 3, suite: 'full', list: parseConformanceList(yaml), kind: { kubeletTs } });
    assert.match(md, /^# Conformance on kind\n/);
    assert.match(md, /a kind cluster of 3 nodes \(one control plane, 2 workers; /);
    assert.match(md, want);
    assert.match(md, /- Command: `make conformance-kind`/);
    assert.match(md, /- The same suite on the local cluster: \[conformance.md\]\(conformance.md\)/);
  }
  const node = render(parseJUnit(xml), { ...opts, suite: 'node', kind: { kubeletTs: 2 } });
  assert.match(node, /- Command: `CLUSTER=kind SUITE=node bash hack\/conformance.sh`/);
});

test('the kept JUnit report drops skipped specs and the output of passed ones', () => {
  const trimmed = trimJUnit(
    '<testcase name="a" status="passed" time="1"><system-err>long</system-err></testcase>\n' +
      '<testcase name="s" status="skipped" time="0"><skipped message="skipped"></skipped></testcase>\n' +
      '<testcase name="b" status="failed" time="1"><failure message="m">x</failure><system-err>why</system-err></testcase>',
  );
  assert.equal(
    trimmed,
    '<testcase name="a" status="passed" time="1"></testcase>\n' +
      '<testcase name="b" status="failed" time="1"><failure message="m">x</failure><system-err>why</system-err></testcase>',
  );
  assert.deepEqual(
    parseJUnit(trimmed).map((c) => c.outcome),
    ['passed', 'failed'],
  );
});
