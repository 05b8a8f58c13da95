import { test } from 'node:test';
import assert from 'node:assert/strict';
import { plannedStreams, translatedStatus } from './remotecommand.ts';

const internal = (message: string) => ({
  metadata: {},
  status: 'Failure',
  message: `Internal error occurred: ${message}`,
  reason: 'InternalError',
  details: { causes: [{ message }] },
  code: 500,
});
const exit = (rc: string) =>
  JSON.stringify({
    metadata: {},
    status: 'Failure',
    message: 'x',
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: rc }] },
  });

// What the runtime writes on the error stream (v4), and the status the v5 client then reads.
const statuses: [string, string, object][] = [
  ['nothing: success', '', { metadata: {}, status: 'Success' }],
  ['a Success status', '{"metadata":{},"status":"Success"}', { metadata: {}, status: 'Success' }],
  [
    'exit code 7',
    exit('7'),
    {
      metadata: {},
      status: 'Failure',
      message: 'command terminated with non-zero exit code: command terminated with exit code 7',
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: '7' }] },
    },
  ],
  ['an exit code past 8 bits', exit('256'), internal('error stream protocol error: invalid exit code value "256"')],
  [
    "a failure with the runtime's words",
    '{"status":"Failure","message":"executable file not found"}',
    internal('executable file not found'),
  ],
  [
    'NonZeroExitCode without details',
    '{"status":"Failure","reason":"NonZeroExitCode"}',
    internal('error stream protocol error: details must be set'),
  ],
  [
    'NonZeroExitCode without an ExitCode cause',
    '{"status":"Failure","reason":"NonZeroExitCode","details":{"causes":[]}}',
    internal('error stream protocol error: no ExitCode cause given'),
  ],
  ['another status', '{"status":"Pending"}', internal('error stream protocol error: unknown error')],
];
for (const [name, stream, want] of statuses)
  test(`translatedStatus: ${name}`, () => assert.deepEqual(translatedStatus(Buffer.from(stream)), want));

test('translatedStatus: not JSON is a protocol error naming what came', () => {
  assert.match(
    String(translatedStatus(Buffer.from('oops')).message),
    /^Internal error occurred: error stream protocol error: .* in "oops"$/,
  );
});

// type:id/channel
const plans: [string, Parameters<typeof plannedStreams>[0], string][] = [
  ['output only', { stdin: false, stdout: true, stderr: true, tty: false }, 'error:1/3 stdout:3/1 stderr:5/2'],
  ['stdin too', { stdin: true, stdout: true, stderr: true, tty: false }, 'error:1/3 stdin:3/0 stdout:5/1 stderr:7/2'],
  [
    'a TTY: no stderr, a resize stream',
    { stdin: true, stdout: true, stderr: true, tty: true },
    'error:1/3 stdin:3/0 stdout:5/1 resize:7/4',
  ],
  ['nothing asked: the error stream alone', { stdin: false, stdout: false, stderr: false, tty: false }, 'error:1/3'],
];
for (const [name, o, want] of plans)
  test(`plannedStreams: ${name}`, () =>
    assert.equal(
      plannedStreams(o)
        .map((s) => `${s.type}:${s.id}/${s.channel}`)
        .join(' '),
      want,
    ));
