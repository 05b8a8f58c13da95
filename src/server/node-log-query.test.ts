import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  aggregate,
  atoi,
  journalDate,
  journalctlArgs,
  parseNodeLogQuery,
  parseRFC3339,
  rfc3339Nano,
  serviceLogFiles,
  splitLoggers,
  validateNodeLogQuery,
  validateServices,
  type NodeLogQuery,
} from './node-log-query.ts';

// What statting the one queried file under /var/log says (the edge computes it: node-logs.ts).
const statErrors: Record<string, string> = {
  '/dpkg.log': 'statat /dpkg.log: path escapes from parent',
  'x/missing.log': 'statat x/missing.log: no such file or directory',
};

type Outcome = { status: 0 } | { status: 400 | 406; message: string } | { status: 200; args: string[] };

function outcome(raw: string): Outcome {
  const { query, errors } = parseNodeLogQuery(new URLSearchParams(raw));
  if (errors.length > 0) return { status: 400, message: aggregate(errors) };
  if (!query) return { status: 0 };
  const invalid = validateNodeLogQuery(query, query.files.length === 1 ? statErrors[query.files[0]!] : undefined);
  if (invalid.length > 0) return { status: 406, message: aggregate(invalid) };
  return { status: 200, args: journalctlArgs(query, query.services) };
}

// Each query with what upstream v1.36.3 answered (newNodeLogQuery, validate and getLoggingCmd run
// in Go on the same query): 0 is "not a query" (the file server answers), 200 lists
// journalctl's arguments.
test('the node log query: parsed (400), validated (406) and turned into journalctl arguments as upstream', () => {
  const cases: [raw: string, want: Outcome][] = [
    ['', { status: 0 }],
    ['unknown=true', { status: 0 }],
    ['query', { status: 400, message: 'query: Invalid value: [""]: may not be empty' }],
    ['query=', { status: 400, message: 'query: Invalid value: [""]: may not be empty' }],
    ['query=%20%20&query=%20', { status: 400, message: 'query: Invalid value: ["  "," "]: may not be empty' }],
    ['query=kubelet', { status: 200, args: ['--utc', '--no-pager', '--output=short-precise', '--unit=kubelet'] }],
    ['query=foo&query=bar', { status: 200, args: ['--utc', '--no-pager', '--output=short-precise', '--unit=foo', '--unit=bar'] }],
    ['query=kubelet&query=/foo', { status: 406, message: 'query: Invalid value: "[/foo], [kubelet]": cannot specify a file and service' }],
    ['query=/a&query=%5Cb', { status: 406, message: 'query: Invalid value: ["/a","\\\\b"]: cannot specify more than one file' }],
    ['query=/a&query=/b&query=c', { status: 406, message: 'query: Invalid value: "[/a /b], [c]": cannot specify a file and service' }],
    ['query=apt/history.log', { status: 200, args: ['--utc', '--no-pager', '--output=short-precise'] }],
    [
      'query=apt/history.log&tailLines=3',
      { status: 406, message: 'query: Invalid value: ["apt/history.log"]: cannot specify file with options' },
    ],
    ['query=/dpkg.log', { status: 406, message: 'query: Invalid value: ["/dpkg.log"]: statat /dpkg.log: path escapes from parent' }],
    [
      'query=x/missing.log',
      { status: 406, message: 'query: Invalid value: ["x/missing.log"]: statat x/missing.log: no such file or directory' },
    ],
    [
      'query=kubelet&tailLines=3',
      { status: 200, args: ['--utc', '--no-pager', '--output=short-precise', '--pager-end', '--lines=3', '--unit=kubelet'] },
    ],
    [
      'query=kubelet&tailLines=0',
      { status: 200, args: ['--utc', '--no-pager', '--output=short-precise', '--pager-end', '--lines=0', '--unit=kubelet'] },
    ],
    [
      'query=kubelet&tailLines=100000',
      { status: 200, args: ['--utc', '--no-pager', '--output=short-precise', '--pager-end', '--lines=100000', '--unit=kubelet'] },
    ],
    [
      'query=kubelet&tailLines=100001',
      { status: 406, message: 'tailLines: Invalid value: 100001: must be between 0 and 100000, inclusive' },
    ],
    ['query=kubelet&tailLines=-1', { status: 406, message: 'tailLines: Invalid value: -1: must be between 0 and 100000, inclusive' }],
    [
      'query=kubelet&tailLines=%2B7',
      { status: 200, args: ['--utc', '--no-pager', '--output=short-precise', '--pager-end', '--lines=7', '--unit=kubelet'] },
    ],
    [
      'query=kubelet&tailLines=99999999999999999999',
      {
        status: 400,
        message: 'tailLines: Invalid value: "99999999999999999999": strconv.Atoi: parsing "99999999999999999999": value out of range',
      },
    ],
    ['query=kubelet&boot=0', { status: 200, args: ['--utc', '--no-pager', '--output=short-precise', '--unit=kubelet', '--boot', '0'] }],
    ['query=kubelet&boot=1', { status: 406, message: 'boot: Invalid value: 1: must be less than 1' }],
    ['query=kubelet&boot=-23', { status: 200, args: ['--utc', '--no-pager', '--output=short-precise', '--unit=kubelet', '--boot', '-23'] }],
    [
      'query=kubelet&pattern=container',
      { status: 200, args: ['--utc', '--no-pager', '--output=short-precise', '--unit=kubelet', '--grep=container'] },
    ],
    [
      'query=kubelet&pattern=foo%5C',
      { status: 406, message: 'pattern: Invalid value: "foo\\\\": error parsing regexp: trailing backslash at end of expression: ``' },
    ],
    ['query=kubelet&pattern=a(', { status: 406, message: 'pattern: Invalid value: "a(": error parsing regexp: missing closing ): `a(`' }],
    [
      'query=kubelet&sinceTime=2023-02-04T02:00:00Z&untilTime=2023-01-04T02:00:00Z',
      { status: 406, message: 'untilTime: Invalid value: "2023-01-04T02:00:00Z": must be after `sinceTime`' },
    ],
    [
      'query=kubelet&sinceTime=2023-01-04T02:00:00.5Z&untilTime=2023-01-04T02:00:00.25%2B00:00',
      { status: 406, message: 'untilTime: Invalid value: "2023-01-04T02:00:00.25Z": must be after `sinceTime`' },
    ],
    [
      'query=kubelet&sinceTime=2023-01-04T02:00:00Z&untilTime=2023-01-04T02:00:00Z',
      {
        status: 200,
        args: ['--utc', '--no-pager', '--output=short-precise', '--since=2023-1-4 02:0:0', '--until=2023-1-4 02:0:0', '--unit=kubelet'],
      },
    ],
    ['sinceTime=', { status: 0 }],
    ['sinceTime=2019-12-04%2002:00:00', { status: 400, message: 'sinceTime: Invalid value: "2019-12-04 02:00:00": invalid time format' }],
    [
      'sinceTime=2019-12-04%2002:00:00.000',
      { status: 400, message: 'sinceTime: Invalid value: "2019-12-04 02:00:00.000": invalid time format' },
    ],
    ['sinceTime=2019-12-04%2002', { status: 400, message: 'sinceTime: Invalid value: "2019-12-04 02": invalid time format' }],
    ['sinceTime=2019-12-04%2002:00', { status: 400, message: 'sinceTime: Invalid value: "2019-12-04 02:00": invalid time format' }],
    ['sinceTime=2019-12-04T02:00:00Z', { status: 406, message: 'query: Required value: cannot be empty with options' }],
    ['untilTime=2019-12-04T02:00:00Z', { status: 406, message: 'query: Required value: cannot be empty with options' }],
    ['untilTime=2019-12-04%2002:00', { status: 400, message: 'untilTime: Invalid value: "2019-12-04 02:00": invalid time format' }],
    ['tailLines=100', { status: 406, message: 'query: Required value: cannot be empty with options' }],
    ['tailLines=foo', { status: 400, message: 'tailLines: Invalid value: "foo": strconv.Atoi: parsing "foo": invalid syntax' }],
    ['tailLines=%20', { status: 400, message: 'tailLines: Invalid value: " ": strconv.Atoi: parsing " ": invalid syntax' }],
    ['pattern=foo', { status: 406, message: 'query: Required value: cannot be empty with options' }],
    ['boot=', { status: 0 }],
    ['boot=0', { status: 406, message: 'query: Required value: cannot be empty with options' }],
    ['boot=-23', { status: 406, message: 'query: Required value: cannot be empty with options' }],
    ['boot=foo', { status: 400, message: 'boot: Invalid value: "foo": strconv.Atoi: parsing "foo": invalid syntax' }],
    ['boot=%20', { status: 400, message: 'boot: Invalid value: " ": strconv.Atoi: parsing " ": invalid syntax' }],
    ['query=a%0A', { status: 406, message: 'query: Invalid value: "a\\n": input contains unsupported characters' }],
    [
      'query=svc.foo&query=svc_foo&query=svc@foo&query=svc:foo',
      {
        status: 200,
        args: ['--utc', '--no-pager', '--output=short-precise', '--unit=svc.foo', '--unit=svc_foo', '--unit=svc@foo', '--unit=svc:foo'],
      },
    ],
    ['query=a&query=b&query=c&query=d&query=e', { status: 406, message: 'query: Too many: 5: must have at most 4 items' }],
    [
      'query=svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1',
      {
        status: 406,
        message:
          'query: Invalid value: "svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1svc1": length must be less than 256',
      },
    ],
    [
      'query=kubelet&sinceTime=2023-01-04T02:03:04%2B02:00&untilTime=2023-01-05T12:13:14.5Z&pattern=container&boot=0&tailLines=3',
      {
        status: 200,
        args: [
          '--utc',
          '--no-pager',
          '--output=short-precise',
          '--since=2023-1-4 02:3:4',
          '--until=2023-1-5 12:13:14',
          '--pager-end',
          '--lines=3',
          '--unit=kubelet',
          '--grep=container',
          '--boot',
          '0',
        ],
      },
    ],
    [
      'query=kubelet&sinceTime=2023-01-04T9:03:04-05:30',
      { status: 200, args: ['--utc', '--no-pager', '--output=short-precise', '--since=2023-1-4 09:3:4', '--unit=kubelet'] },
    ],
    [
      'query=kubelet&query=containerd&pattern=%3Cx%3E',
      { status: 200, args: ['--utc', '--no-pager', '--output=short-precise', '--unit=kubelet', '--unit=containerd', '--grep=<x>'] },
    ],
    [
      'query=svc/foo&query=a%0A',
      {
        status: 406,
        message:
          '[query: Invalid value: "a\\n": input contains unsupported characters, query: Invalid value: "[svc/foo], [a\\n]": cannot specify a file and service]',
      },
    ],
    [
      'query=a/b&query=kubelet&tailLines=x&boot=y',
      {
        status: 400,
        message:
          '[boot: Invalid value: "y": strconv.Atoi: parsing "y": invalid syntax, tailLines: Invalid value: "x": strconv.Atoi: parsing "x": invalid syntax]',
      },
    ],
    [
      'sinceTime=x&untilTime=x',
      { status: 400, message: '[sinceTime: Invalid value: "x": invalid time format, untilTime: Invalid value: "x": invalid time format]' },
    ],
    [
      'query=a&sinceTime=2019-12-04t02:00:00Z',
      { status: 400, message: 'sinceTime: Invalid value: "2019-12-04t02:00:00Z": invalid time format' },
    ],
    [
      'query=kubelet&tailLines=3&tailLines=x',
      { status: 200, args: ['--utc', '--no-pager', '--output=short-precise', '--pager-end', '--lines=3', '--unit=kubelet'] },
    ],
    ['query=%3Cb%3E/x&query=y', { status: 406, message: 'query: Invalid value: "[<b>/x], [y]": cannot specify a file and service' }],
  ];
  for (const [raw, want] of cases) assert.deepEqual(outcome(raw), want, raw);
});

const T = (s: string) => parseRFC3339(s)!;
const q = (over: Partial<NodeLogQuery> = {}): NodeLogQuery => ({ services: [], files: [], pattern: '', ...over });

// Upstream's Test_newNodeLogQuery.
test('parseNodeLogQuery: the cases of upstream Test_newNodeLogQuery', () => {
  const valid = '2019-12-04T02:00:00Z';
  const cases: [params: Record<string, string[]>, want: NodeLogQuery | undefined | 'error'][] = [
    [{}, undefined],
    [{ unknown: ['true'] }, undefined],
    [{ sinceTime: [''] }, undefined],
    [{ sinceTime: ['2019-12-04 02:00:00'] }, 'error'],
    [{ sinceTime: ['2019-12-04 02:00:00.000'] }, 'error'],
    [{ sinceTime: ['2019-12-04 02'] }, 'error'],
    [{ sinceTime: ['2019-12-04 02:00'] }, 'error'],
    [{ sinceTime: [valid] }, q({ sinceTime: T(valid) })],
    [{ untilTime: [''] }, undefined],
    [{ untilTime: ['2019-12-04 02:00:00'] }, 'error'],
    [{ untilTime: ['2019-12-04 02:00:00.000'] }, 'error'],
    [{ untilTime: ['2019-12-04 02'] }, 'error'],
    [{ untilTime: ['2019-12-04 02:00'] }, 'error'],
    [{ untilTime: [valid] }, q({ untilTime: T(valid) })],
    [{ tailLines: ['100'] }, q({ tailLines: 100n })],
    [{ tailLines: ['foo'] }, 'error'],
    [{ tailLines: [' '] }, 'error'],
    [{ pattern: ['foo'] }, q({ pattern: 'foo' })],
    [{ boot: [''] }, undefined],
    [{ boot: ['0'] }, q({ boot: 0n })],
    [{ boot: ['-23'] }, q({ boot: -23n })],
    [{ boot: ['foo'] }, 'error'],
    [{ boot: [' '] }, 'error'],
    [{ query: [''] }, 'error'],
    [{ query: ['   ', '    '] }, 'error'],
    [{ query: ['foo'] }, q({ services: ['foo'] })],
    [{ query: ['foo', 'bar'] }, q({ services: ['foo', 'bar'] })],
    [{ query: ['foo', '/bar'] }, q({ services: ['foo'], files: ['/bar'] })],
    [{ query: ['/foo', '\\bar'] }, q({ files: ['/foo', '\\bar'] })],
  ];
  for (const [params, want] of cases) {
    const sp = new URLSearchParams();
    for (const [k, vs] of Object.entries(params)) for (const v of vs) sp.append(k, v);
    const got = parseNodeLogQuery(sp);
    if (want === 'error') assert.ok(got.errors.length > 0 && !got.query, sp.toString());
    else assert.deepEqual([got.query, got.errors], [want, []], sp.toString());
  }
});

// Upstream's Test_validateServices.
test('validateServices: the cases of upstream Test_validateServices', () => {
  const cases: [services: string[], wantErr: boolean][] = [
    [['svc1'], false],
    [['svc1', 'svc2'], false],
    [['svc.foo'], false],
    [['svc_foo'], false],
    [['svc@foo'], false],
    [['svc:foo'], false],
    [['svc\n'], true],
    [['svc.foo\n'], true],
    [['svc/foo'], true],
    [['svc1'.repeat(100)], true],
    [['svc1', 'svc2', 'svc.foo', 'svc_foo', 'svc@foo'], true],
  ];
  for (const [services, wantErr] of cases) assert.equal(validateServices(services).length > 0, wantErr, JSON.stringify(services));
});

// Upstream's Test_nodeLogQuery_validate (the one file's stat error is the edge's; none here).
test('validateNodeLogQuery: the cases of upstream Test_nodeLogQuery_validate', () => {
  const since = T('2023-01-04T02:00:00Z');
  const until = T('2023-02-04T02:00:00Z');
  const cases: [name: string, query: NodeLogQuery, wantErr: boolean][] = [
    ['empty', q(), true],
    ['empty with options', q({ sinceTime: since }), true],
    ['one service', q({ services: ['svc1'] }), false],
    ['two services', q({ services: ['svc1', 'svc2'] }), false],
    ['one service one file', q({ services: ['svc1'], files: ['/test1.log'] }), true],
    ['two files', q({ files: ['/test1.log', '/test2.log'] }), true],
    ['one file options', q({ files: ['/test1.log'], pattern: 'foo' }), true],
    ['invalid pattern', q({ services: ['svc1'], pattern: 'foo\\' }), true],
    ['since', q({ services: ['svc1'], sinceTime: since }), false],
    ['until', q({ services: ['svc1'], untilTime: until }), false],
    ['since until', q({ services: ['svc1'], sinceTime: until, untilTime: since }), true],
    ['boot', q({ services: ['svc1'], boot: -1n }), false],
    ['boot out of range', q({ services: ['svc1'], boot: 1n }), true],
    ['tailLines', q({ services: ['svc1'], tailLines: 100n }), false],
    ['tailLines out of range', q({ services: ['svc1'], tailLines: 100000n }), false],
  ];
  for (const [name, query, wantErr] of cases) assert.equal(validateNodeLogQuery(query).length > 0, wantErr, name);
  assert.deepEqual(validateNodeLogQuery(q({ files: ['a/b.log'] }), 'statat a/b.log: no such file or directory'), [
    'query: Invalid value: ["a/b.log"]: statat a/b.log: no such file or directory',
  ]);
});

// Upstream's Test_getLoggingCmd (Linux).
test('journalctlArgs: the cases of upstream Test_getLoggingCmd, and every option', () => {
  const base = ['--utc', '--no-pager', '--output=short-precise'];
  assert.deepEqual(journalctlArgs(q(), []), base);
  assert.deepEqual(journalctlArgs(q(), ['p1', 'p2']), [...base, '--unit=p1', '--unit=p2']);
  assert.deepEqual(journalctlArgs(q(), ['p1', '', 'p2']), [...base, '--unit=p1', '--unit=p2']);
  assert.deepEqual(
    journalctlArgs(
      q({ sinceTime: T('2024-03-05T06:07:08Z'), untilTime: T('2024-11-25T16:00:09.9Z'), tailLines: 3n, pattern: 'container', boot: -1n }),
      ['kubelet'],
    ),
    [
      ...base,
      '--since=2024-3-5 06:7:8',
      '--until=2024-11-25 16:0:9',
      '--pager-end',
      '--lines=3',
      '--unit=kubelet',
      '--grep=container',
      '--boot',
      '-1',
    ],
  );
});

test("parseRFC3339 and the formats of Go's time", () => {
  const ok: [s: string, json: string, journal: string][] = [
    ['2019-12-04T02:00:00Z', '2019-12-04T02:00:00Z', '2019-12-4 02:0:0'],
    ['2019-12-04T2:00:00Z', '2019-12-04T02:00:00Z', '2019-12-4 02:0:0'],
    ['2019-12-04T02:00:00,5Z', '2019-12-04T02:00:00.5Z', '2019-12-4 02:0:0'],
    ['2020-02-29T02:00:00Z', '2020-02-29T02:00:00Z', '2020-2-29 02:0:0'],
    ['2019-12-04T02:00:00+23:59', '2019-12-04T02:00:00+23:59', '2019-12-4 02:0:0'],
    ['2019-12-04T02:00:00.123456789123Z', '2019-12-04T02:00:00.123456789Z', '2019-12-4 02:0:0'],
    ['2019-12-04T02:00:00.000+00:00', '2019-12-04T02:00:00Z', '2019-12-4 02:0:0'],
    ['2019-12-04T02:00:00-00:00', '2019-12-04T02:00:00Z', '2019-12-4 02:0:0'],
    ['0000-01-01T00:00:00Z', '0000-01-01T00:00:00Z', '0000-1-1 00:0:0'],
    ['2023-01-04T23:30:00-05:30', '2023-01-04T23:30:00-05:30', '2023-1-4 23:30:0'],
  ];
  for (const [s, json, journal] of ok) {
    const t = parseRFC3339(s);
    assert.ok(t, s);
    assert.equal(rfc3339Nano(t), json, s);
    assert.equal(journalDate(t), journal, s);
  }
  assert.equal(T('2023-01-04T23:30:00-05:30').unix, Date.UTC(2023, 0, 5, 5, 0, 0) / 1000);
  for (const s of [
    '2019-12-04t02:00:00Z',
    '2019-12-04T02:00:00z',
    '2019-02-29T02:00:00Z',
    '2019-12-04T24:00:00Z',
    '2019-12-04T02:00:60Z',
    '2019-12-04T02:00:00+0200',
    '2019-12-04T02:00:00',
    ' 2019-12-04T02:00:00Z',
    '2019-12-04T02:00:00.Z',
    '2019-1-04T02:00:00Z',
  ])
    assert.equal(parseRFC3339(s), undefined, s);
});

test('atoi as Go parses', () => {
  assert.equal(atoi('+7'), 7n);
  assert.equal(atoi('-0'), 0n);
  assert.equal(atoi(' 1'), 'strconv.Atoi: parsing " 1": invalid syntax');
  assert.equal(atoi('1_000'), 'strconv.Atoi: parsing "1_000": invalid syntax');
  assert.equal(atoi('9223372036854775808'), 'strconv.Atoi: parsing "9223372036854775808": value out of range');
});

test('splitLoggers: services the journal lists are read from it, the others from /var/log', () => {
  const units = 'containerd.service\nkubelet.service\nsshd.service\n';
  assert.deepEqual(splitLoggers(['kubelet', 'syslog', 'sshd'], units), { journal: ['kubelet', 'sshd'], files: ['syslog'] });
  assert.deepEqual(splitLoggers(['kubelet'], undefined), { journal: [], files: ['kubelet'] }, 'journalctl failed');
  assert.deepEqual(splitLoggers(['kubelet'], 'No journal files were found.\n'), { journal: [], files: ['kubelet'] });
  assert.deepEqual(serviceLogFiles('kubelet'), ['kubelet', 'kubelet.log', 'kubelet/kubelet.log']);
});
