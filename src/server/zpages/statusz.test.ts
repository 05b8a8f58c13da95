import { test } from 'node:test';
import assert from 'node:assert/strict';
import { aggregatePaths, htmlEscape, registeredHandlePaths, statuszDocument, statuszText, unixDate, uptimeText } from './statusz.ts';

const facts = {
  startTime: new Date('2026-12-04T09:05:07Z'),
  goVersion: 'v24.11.1',
  binaryVersion: '1.36.3',
  emulationVersion: '1.36',
  listedPaths: registeredHandlePaths({ enableSystemLogHandler: true, enableProfilingHandler: true, flagz: true }),
};
const now = new Date('2026-12-04T10:07:09.900Z');
const utc = { offsetMinutes: 0, name: 'UTC' };

test('aggregatePaths: first segments, once, sorted, without the apiserver-only ones', () => {
  const cases: [listed: string[], want: string[]][] = [
    [
      ['/metrics', '/metrics/cadvisor', '/healthz/ping', '/configz'],
      ['/configz', '/healthz', '/metrics'],
    ],
    [['/', '', 'x', '/api', '/apis/apps', '/openapi/v2', '/.well-known/openid', '/openid/v1', '/livez'], ['/livez']],
    [[], []],
  ];
  for (const [listed, want] of cases) assert.deepEqual(aggregatePaths(listed), want, listed.join(' '));
});

test("the kubelet's listed paths: its Handle registrations (not its web services), by its settings", () => {
  const cases: [settings: Parameters<typeof registeredHandlePaths>[0], want: string[]][] = [
    [{ enableSystemLogHandler: true, enableProfilingHandler: true, flagz: true }, ['/configz', '/debug', '/flagz', '/healthz', '/metrics']],
    [{ enableSystemLogHandler: true, enableProfilingHandler: true, flagz: false }, ['/configz', '/debug', '/healthz', '/metrics']],
    [
      { enableSystemLogHandler: false, enableProfilingHandler: false, flagz: true },
      ['/configz', '/debug', '/flagz', '/healthz', '/logs', '/metrics'],
    ],
  ];
  for (const [settings, want] of cases) assert.deepEqual(aggregatePaths(registeredHandlePaths(settings)), want, JSON.stringify(settings));
});

test("statuszDocument: the types' fields in their order, metav1.Time in whole UTC seconds", () => {
  assert.equal(
    JSON.stringify(statuszDocument('kubelet', facts, 'v1beta1', now)),
    '{"kind":"Statusz","apiVersion":"config.k8s.io/v1beta1","metadata":{"name":"kubelet"},"startTime":"2026-12-04T09:05:07Z",' +
      '"uptimeSeconds":3722,"goVersion":"v24.11.1","binaryVersion":"1.36.3","emulationVersion":"1.36",' +
      '"paths":["/configz","/debug","/flagz","/healthz","/metrics"]}',
  );
  const bare = statuszDocument('kubelet', { ...facts, emulationVersion: '', listedPaths: [] }, 'v1alpha1', new Date(0));
  assert.equal(bare.apiVersion, 'config.k8s.io/v1alpha1');
  assert.equal('emulationVersion' in bare, false, 'omitempty');
  assert.equal(bare.paths, null, 'a nil slice');
  assert.equal(bare.uptimeSeconds, 0, 'never negative');
});

test('unixDate and uptimeText as Go prints them', () => {
  const cases: [t: string, zone: typeof utc, want: string][] = [
    ['2026-12-04T09:05:07Z', utc, 'Fri Dec  4 09:05:07 UTC 2026'],
    ['2026-01-31T23:59:59Z', { offsetMinutes: 60, name: 'CET' }, 'Sun Feb  1 00:59:59 CET 2026'],
    ['2026-07-14T12:00:00Z', { offsetMinutes: -420, name: 'PDT' }, 'Tue Jul 14 05:00:00 PDT 2026'],
  ];
  for (const [t, zone, want] of cases) assert.equal(unixDate(new Date(t), zone), want);
  assert.equal(uptimeText(facts.startTime, now), '1 hr 02 min 02 sec');
  assert.equal(uptimeText(facts.startTime, new Date('2026-12-09T09:05:08Z')), '120 hr 00 min 01 sec');
  assert.equal(htmlEscape(`<a href="x">&'`), '&lt;a href=&#34;x&#34;&gt;&amp;&#39;');
});

test('statuszText: the header, the fields with the delimiter drawn, escaped', () => {
  assert.equal(
    statuszText('kubelet', facts, now, ':', utc),
    [
      '',
      'kubelet statusz',
      'Warning: This endpoint is not meant to be machine parseable, has no formatting compatibility guarantees and is for debugging purposes only.',
      '',
      'Started: Fri Dec  4 09:05:07 UTC 2026',
      'Up: 1 hr 02 min 02 sec',
      'Go version: v24.11.1',
      'Binary version: 1.36.3',
      'Emulation version: 1.36',
      'Paths: /configz /debug /flagz /healthz /metrics',
      '',
    ].join('\n'),
  );
  // Empty emulation version and paths leave their lines empty, as upstream's format does.
  assert.match(
    statuszText('kubelet', { ...facts, emulationVersion: '', listedPaths: [] }, now, ' ', utc),
    /\nBinary version {2}1\.36\.3\n\n\n$/,
  );
  assert.match(statuszText('kubelet', facts, now, ': ', utc), /\nUp: {2}1 hr 02 min 02 sec\n/);
});
