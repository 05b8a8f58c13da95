import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bootTimeMs, hugepageCapacity, infoFromFiles, parseCpuList, systemUUID, thermalThrottlePaths } from './host.ts';

test('parseCpuList: the kernel CPU list format', () => {
  const cases: [text: string, want: number[] | undefined][] = [
    ['0\n', [0]],
    ['0-3\n', [0, 1, 2, 3]],
    ['0-1,4,6-7', [0, 1, 4, 6, 7]],
    ['', undefined],
    ['3-1', undefined],
    ['0-x', undefined],
  ];
  for (const [text, want] of cases) assert.deepEqual(parseCpuList(text), want, JSON.stringify(text));
});

test("thermalThrottlePaths: each possible CPU's thermal_throttle directory that exists", (t) => {
  const sys = mkdtempSync(join(tmpdir(), 'cpu-'));
  t.after(() => rmSync(sys, { recursive: true, force: true }));
  writeFileSync(join(sys, 'possible'), '0-2\n');
  mkdirSync(join(sys, 'cpu0', 'thermal_throttle'), { recursive: true });
  mkdirSync(join(sys, 'cpu2', 'thermal_throttle'), { recursive: true });
  mkdirSync(join(sys, 'cpu3', 'thermal_throttle'), { recursive: true });
  assert.deepEqual(
    thermalThrottlePaths(sys),
    [`${sys}/cpu0/thermal_throttle`, `${sys}/cpu2/thermal_throttle`],
    'cpu1 has none, cpu3 is not possible',
  );
});

test("hugepages capacity as upstream's: every page size the kernel has, 0 when it has no pages", () => {
  assert.deepEqual(
    hugepageCapacity([
      { sizeKb: 1048576, pages: 0 },
      { sizeKb: 2048, pages: 3 },
      { sizeKb: 64, pages: 1 },
    ]),
    { 'hugepages-1Gi': 0, 'hugepages-2Mi': 3 * 2048 * 1024, 'hugepages-64Ki': 64 * 1024 },
  );
  assert.deepEqual(hugepageCapacity([]), {});
});

test("--machine-id-file / --boot-id-file: cadvisor's getInfoFromFiles, the first file that reads", () => {
  const files: Record<string, string> = { '/etc/machine-id': 'abc\n', '/var/lib/dbus/machine-id': 'def\n', '/empty': '' };
  const read = (p: string) => files[p];
  const cases: [string, string, string][] = [
    ['the first exists', '/etc/machine-id,/var/lib/dbus/machine-id', 'abc'],
    ['the first is missing', '/nope,/var/lib/dbus/machine-id', 'def'],
    ['an empty file that exists wins', '/empty,/etc/machine-id', ''],
    ['none exists', '/nope,/nope2', ''],
    ['an empty list', '', ''],
  ];
  for (const [name, list, want] of cases) assert.equal(infoFromFiles(list, read), want, name);
});

test("bootTimeMs: /proc/stat's btime line, in ms", () => {
  const cases: [text: string, want: number | undefined][] = [
    ['cpu  1 2 3\nintr 5\nctxt 9\nbtime 1764979200\nprocesses 7\n', 1764979200_000],
    ['cpu  1 2 3\nprocesses 7\n', undefined],
    ['btime x\n', undefined],
    ['', undefined],
  ];
  for (const [text, want] of cases) assert.equal(bootTimeMs(text), want, JSON.stringify(text));
});

test("systemUUID: cadvisor's GetSystemUUID, DMI first, then a device tree's, then /etc/machine-id; as read", () => {
  const cases: [string, Record<string, string>, string][] = [
    ['DMI, kept in its case', { '/sys/class/dmi/id/product_uuid': 'EC2A-1\n', '/etc/machine-id': 'm\n' }, 'EC2A-1'],
    ['a POWER device tree, NULs trimmed', { '/proc/device-tree/system-id': 'IBM,1\0\0', '/etc/machine-id': 'm\n' }, 'IBM,1'],
    ['a POWER guest', { '/proc/device-tree/vm,uuid': 'u-1\0' }, 'u-1'],
    ['no DMI nor device tree (s390, Firecracker): the machine id', { '/etc/machine-id': '3d12\n' }, '3d12'],
    ['nothing', {}, ''],
  ];
  for (const [name, files, want] of cases)
    assert.equal(
      systemUUID((p) => files[p]),
      want,
      name,
    );
});
