import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BlockDeviceOps, loopDeviceOf, mapBlockVolume, unmapBlockVolume } from './block-device.ts';

test("loopDeviceOf: upstream's getLoopDeviceFromSysfs, by each loop's backing_file (also once deleted)", (t) => {
  const root = mkdtempSync(join(tmpdir(), 'kts-loop-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const file = join(root, 'dev-file');
  writeFileSync(file, '');
  const sys = join(root, 'sys');
  for (const [n, backing] of [
    ['loop0', '/elsewhere\n'],
    ['loop4', `${file} (deleted)\n`],
  ] as const) {
    mkdirSync(join(sys, n, 'loop'), { recursive: true });
    writeFileSync(join(sys, n, 'loop', 'backing_file'), backing);
  }
  mkdirSync(join(sys, 'loop1'));
  mkdirSync(join(sys, 'sda'));
  assert.equal(loopDeviceOf(file, sys), '/dev/loop4');
  assert.equal(loopDeviceOf(join(root, 'missing'), sys), undefined);
  assert.equal(loopDeviceOf(join(root, 'sys'), sys), undefined);
});

test('mapBlockVolume and unmapBlockVolume order the bind mount, the link and the loop device as upstream', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'kts-map-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const calls: string[] = [];
  const ops: BlockDeviceOps = {
    bindMountFile: async (s, d) => void calls.push(`bind ${s} ${d}`),
    unmountFile: async (d) => void calls.push(`umount ${d}`),
    attachLoop: async (p) => {
      calls.push(`attach ${p}`);
      return '/dev/loop1';
    },
    detachLoop: async (p) => void calls.push(`detach ${p}`),
  };
  const m = { globalMapPath: join(root, 'g', 'dev'), podMapDir: join(root, 'pod'), name: 'pv', podUID: 'u' };
  const link = await mapBlockVolume(ops, { ...m, devicePath: '/publish/pv/u' });
  assert.equal(link, join(root, 'pod', 'pv'));
  assert.equal(readlinkSync(link), '/publish/pv/u');
  assert.deepEqual(calls, [`bind /publish/pv/u ${root}/g/dev/u`, `attach ${root}/g/dev/u`]);
  calls.length = 0;
  await unmapBlockVolume(ops, m);
  assert.equal(existsSync(link), false);
  assert.deepEqual(calls, [`detach ${root}/g/dev/u`, `umount ${root}/g/dev/u`]);
});
