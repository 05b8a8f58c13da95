import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CHECKPOINT_FILE,
  type CheckpointData,
  marshalCheckpoint,
  readCheckpoint,
  spewCheckpointData,
  unmarshalCheckpoint,
  writeCheckpoint,
} from './checkpoint.ts';

// Written by upstream's code (checkpoint.Data marshalled with go-spew
// v1.1.2-0.20180830191138-d8f796af33cc's dump.ForHash and encoding/json), with the spew dump
// it hashed: nil and empty slices and maps, NUMA keys, bytes and a quote in an id.
const fromGo: [name: string, json: string, spew: string][] = [
  [
    'entries, registered devices, nil and empty',
    '{"Data":{"PodDeviceEntries":[{"PodUID":"uid-1","ContainerName":"c","ResourceName":"example.com/resource","DeviceIDs":{"-1":["dev-1","dev-0"],"0":["x\\"y"]},"AllocResp":"CgX/"},{"PodUID":"uid-2","ContainerName":"d","ResourceName":"example.com/resource","DeviceIDs":{},"AllocResp":""}],"RegisteredDevices":{"a.b/c":[],"example.com/resource":["dev-1","dev-0"],"z.b/c":null}},"Checksum":1635625027}',
    '(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)[{PodUID:(string)uid-1 ContainerName:(string)c ResourceName:(string)example.com/resource DeviceIDs:(checkpoint.DevicesPerNUMA)map[-1:[dev-1 dev-0] 0:[x"y]] AllocResp:([]uint8)[10 5 255]} {PodUID:(string)uid-2 ContainerName:(string)d ResourceName:(string)example.com/resource DeviceIDs:(checkpoint.DevicesPerNUMA)map[] AllocResp:([]uint8)[]}] RegisteredDevices:(map[string][]string)map[a.b/c:[] example.com/resource:[dev-1 dev-0] z.b/c:<nil>]}',
  ],
  [
    'no entries (nil), no devices',
    '{"Data":{"PodDeviceEntries":null,"RegisteredDevices":{}},"Checksum":3467439661}',
    '(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)<nil> RegisteredDevices:(map[string][]string)map[]}',
  ],
  [
    'empty entries, nil devices',
    '{"Data":{"PodDeviceEntries":[],"RegisteredDevices":null},"Checksum":3252601439}',
    '(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)[] RegisteredDevices:(map[string][]string)<nil>}',
  ],
];

test("upstream's checkpoints: same dump, checksum verified, written back byte for byte", () => {
  for (const [name, json, spew] of fromGo) {
    const data = unmarshalCheckpoint(json);
    assert.equal(spewCheckpointData(data), spew, name);
    assert.equal(marshalCheckpoint(data), json, name);
  }
});

test('a changed checkpoint fails its checksum', () => {
  const tampered = fromGo[0]![1].replace('"dev-0"]', '"dev-9"]');
  assert.throws(() => unmarshalCheckpoint(tampered), /checksum/);
});

test('written and read back from the device plugin directory', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devcp-'));
  try {
    assert.equal(readCheckpoint(dir), undefined);
    const data: CheckpointData = {
      PodDeviceEntries: [
        { PodUID: 'u', ContainerName: 'c', ResourceName: 'example.com/resource', DeviceIDs: { '-1': ['a'] }, AllocResp: 'CgA=' },
      ],
      RegisteredDevices: { 'example.com/resource': ['a', 'b'] },
    };
    writeCheckpoint(dir, data);
    assert.deepEqual(readCheckpoint(dir), data);
    assert.match(readFileSync(join(dir, CHECKPOINT_FILE), 'utf8'), /^\{"Data":\{"PodDeviceEntries":\[/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
