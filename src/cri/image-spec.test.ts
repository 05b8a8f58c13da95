import assert from 'node:assert/strict';
import { test } from 'node:test';
import { listedImage } from './image-spec.ts';

test("listedImage: the pod's name for the image, never the bare ID", () => {
  const id = 'sha256:0123456789abcdef';
  const cases: [Parameters<typeof listedImage>[0], string][] = [
    [{ image: id, userSpecifiedImage: 'busybox:1.36' }, 'busybox:1.36'],
    [{ image: 'docker.io/library/busybox:1.36', userSpecifiedImage: '' }, 'docker.io/library/busybox:1.36'],
    [{ image: id }, ''],
    [{ image: id, userSpecifiedImage: '' }, ''],
    [{}, ''],
    [null, ''],
    [undefined, ''],
  ];
  for (const [spec, want] of cases) assert.equal(listedImage(spec), want, JSON.stringify(spec));
});
