import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseLogQuery } from './log-options.ts';

const now = Date.parse('2026-11-22T12:00:00Z');
const nowNs = BigInt(now) * 1_000_000n;

test('parseLogQuery decodes and validates as upstream', () => {
  const cases: [query: Record<string, unknown>, want: unknown][] = [
    [{}, { previous: false, options: { follow: false, timestamps: false } }],
    [
      { follow: 'true', timestamps: '1', previous: 'TRUE' },
      { previous: true, options: { follow: true, timestamps: true } },
    ],
    [
      { follow: '', timestamps: 'False', previous: '0' },
      { previous: false, options: { follow: true, timestamps: false } },
    ],
    [
      { tailLines: '10', limitBytes: '+500' },
      { previous: false, options: { follow: false, timestamps: false, tailLines: 10, limitBytes: 500 } },
    ],
    [{ tailLines: ['3', '4'] }, { previous: false, options: { follow: false, timestamps: false, tailLines: 3 } }],
    [{ tail: '7' }, { previous: false, options: { follow: false, timestamps: false, tailLines: 7 } }],
    [
      { tail: 'all', tailLines: '5' },
      { previous: false, options: { follow: false, timestamps: false } },
    ],
    [{ sinceSeconds: '60' }, { previous: false, options: { follow: false, timestamps: false, sinceNs: nowNs - 60_000_000_000n } }],
    [
      { sinceTime: '2026-11-22T11:00:00Z' },
      { previous: false, options: { follow: false, timestamps: false, sinceNs: nowNs - 3_600_000_000_000n } },
    ],
    [{ sinceTime: '' }, { previous: false, options: { follow: false, timestamps: false } }],
    [{ tailLines: 'ten' }, { status: 400, message: 'invalid value "ten" for query parameter tailLines: must be an integer' }],
    [{ limitBytes: '1.5' }, { status: 400, message: 'invalid value "1.5" for query parameter limitBytes: must be an integer' }],
    [
      { sinceSeconds: '99999999999999999999' },
      { status: 400, message: 'invalid value "99999999999999999999" for query parameter sinceSeconds: must be an integer' },
    ],
    [
      { sinceTime: 'yesterday' },
      { status: 400, message: 'invalid value "yesterday" for query parameter sinceTime: must be an RFC3339 time' },
    ],
    [{ tailLines: '-1' }, { status: 422, message: 'tailLines: Invalid value: -1: must be greater than or equal to 0' }],
    [{ limitBytes: '0' }, { status: 422, message: 'limitBytes: Invalid value: 0: must be greater than 0' }],
    [{ sinceSeconds: '0' }, { status: 422, message: 'sinceSeconds: Invalid value: 0: must be greater than 0' }],
    [
      { sinceSeconds: '5', sinceTime: '2026-11-22T11:00:00Z' },
      { status: 422, message: 'sinceSeconds: Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified' },
    ],
  ];
  for (const [query, want] of cases) {
    const got = parseLogQuery(query, now);
    // undefined fields are not part of the expectation
    const clean =
      'options' in got ? { ...got, options: Object.fromEntries(Object.entries(got.options).filter(([, v]) => v !== undefined)) } : got;
    assert.deepEqual(clean, want, JSON.stringify(query));
  }
});
