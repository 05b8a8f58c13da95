import { test } from 'node:test';
import assert from 'node:assert/strict';
import { memcgNotificationRefused } from './memcg-notification.ts';

test('kernelMemcgNotification: refused only when set on a cgroup v1 host (on v2 upstream’s notifier is disabled too)', () => {
  const rows: [boolean, boolean, boolean][] = [
    [false, true, false],
    [false, false, false],
    [true, true, false],
    [true, false, true],
  ];
  for (const [enabled, v2, refused] of rows) {
    const got = memcgNotificationRefused(enabled, v2);
    assert.equal(got !== undefined, refused, `enabled ${enabled}, cgroup v2 ${v2}`);
    if (got) assert.match(got, /^kernelMemcgNotification: /);
  }
});
