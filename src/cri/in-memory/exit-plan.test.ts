import { test } from 'node:test';
import assert from 'node:assert/strict';
import { exitPlan, parseDurationMs } from './exit-plan.ts';

test('exitPlan: which containers end on their own, when, and with which code', () => {
  const rows: [string, string[], Record<string, string>, ReturnType<typeof exitPlan>][] = [
    ['no command: the image runs until stopped', [], {}, undefined],
    ['a server runs until stopped', ['nginx', '-g', 'daemon off;'], {}, undefined],
    ['sh -c "exit 3"', ['sh', '-c', 'exit 3'], {}, { afterMs: 0, exitCode: 3 }],
    ['/bin/sh -c "exit 0"', ['/bin/sh', '-c', 'exit 0'], {}, { afterMs: 0, exitCode: 0 }],
    ['bare exit', ['sh', '-c', 'exit'], {}, { afterMs: 0, exitCode: 0 }],
    ['sleep then exit', ['sh', '-c', 'sleep 2; exit 1'], {}, { afterMs: 2000, exitCode: 1 }],
    ['sleep && true', ['sh', '-c', 'sleep 0.5 && true'], {}, { afterMs: 500, exitCode: 0 }],
    ['false', ['/bin/false'], {}, { afterMs: 0, exitCode: 1 }],
    ['true', ['true'], {}, { afterMs: 0, exitCode: 0 }],
    ['true with arguments is not the builtin', ['true', 'x'], {}, undefined],
    ['exit codes wrap as a shell does', ['sh', '-c', 'exit 256'], {}, { afterMs: 0, exitCode: 0 }],
    ['sleep forever runs', ['sh', '-c', 'sleep 3600'], {}, undefined],
    ['any other script runs', ['sh', '-c', 'while true; do sleep 1; done'], {}, undefined],
    ['the annotation', ['nginx'], { 'hollow/exit-after': '3s' }, { afterMs: 3000, exitCode: 0 }],
    ['the annotation with a code', ['nginx'], { 'hollow/exit-after': '250', 'hollow/exit-code': '2' }, { afterMs: 250, exitCode: 2 }],
    ['the annotation wins over the command', ['sh', '-c', 'exit 3'], { 'hollow/exit-after': '1m' }, { afterMs: 60_000, exitCode: 0 }],
    ['a bad annotation falls back to the command', ['sh', '-c', 'exit 3'], { 'hollow/exit-after': 'soon' }, { afterMs: 0, exitCode: 3 }],
  ];
  for (const [name, argv, annotations, want] of rows) assert.deepEqual(exitPlan(argv, annotations), want, name);
});

test('parseDurationMs', () => {
  const rows: [string, number | undefined][] = [
    ['250', 250],
    ['250ms', 250],
    ['2s', 2000],
    ['1.5m', 90_000],
    ['1h', 3_600_000],
    ['', undefined],
    ['2d', undefined],
    ['-1s', undefined],
  ];
  for (const [s, want] of rows) assert.equal(parseDurationMs(s), want, s);
});
