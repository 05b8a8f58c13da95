import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseJUnit, parseRules, render } from './report.ts';

const xml = `<?xml version="1.0"?><testsuites><testsuite>
<testcase name="[SynchronizedBeforeSuite]" classname="Kubernetes e2e suite" status="passed" time="1.5"></testcase>
<testcase name="[It] [sig-node] Pods should be updated [NodeConformance] [Conformance] [sig-node, NodeConformance, Conformance]" status="passed" time="6.2"></testcase>
<testcase name="[It] [sig-node] Secrets should work [Conformance] [sig-node, Conformance]" status="failed" time="3"><failure message="expected &#34;data-1=value-1&#34;&#xA;second line" type="failed">x</failure></testcase>
<testcase name="[It] [sig-apps] Other" status="skipped" time="0"><skipped message="skipped"></skipped></testcase>
</testsuite></testsuites>`;

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
  const md = render(parseJUnit(xml), {
    excluded: '# comment\n\\[sig-node\\] ImageVolume  # no image volumes here\n',
    known: 'Secrets should work  # image lacked X; fixed in Y\n',
    wallSeconds: 125,
    procs: 4,
    release: 'v1.36.3',
    date: '2026-11-22',
    missing: [],
  });
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
