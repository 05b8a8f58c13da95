import { test } from 'node:test';
import assert from 'node:assert/strict';
import { csiAccessMode, volumeCapability } from './volume-capability.ts';

const modes: [string | undefined, boolean, string][] = [
  ['ReadWriteOnce', false, 'SINGLE_NODE_WRITER'],
  ['ReadWriteOnce', true, 'SINGLE_NODE_MULTI_WRITER'],
  ['ReadOnlyMany', false, 'MULTI_NODE_READER_ONLY'],
  ['ReadOnlyMany', true, 'MULTI_NODE_READER_ONLY'],
  ['ReadWriteMany', false, 'MULTI_NODE_MULTI_WRITER'],
  ['ReadWriteMany', true, 'MULTI_NODE_MULTI_WRITER'],
  ['ReadWriteOncePod', false, 'SINGLE_NODE_WRITER'],
  ['ReadWriteOncePod', true, 'SINGLE_NODE_SINGLE_WRITER'],
  ['Bogus', true, 'UNKNOWN'],
  [undefined, false, 'UNKNOWN'],
];
for (const [mode, snmw, want] of modes)
  test(`access mode ${mode}${snmw ? ' (SINGLE_NODE_MULTI_WRITER driver)' : ''} -> ${want}`, () =>
    assert.equal(csiAccessMode(mode, snmw), want));

const caps: [string, Parameters<typeof volumeCapability>[0], object][] = [
  [
    'a mount with flags and no fsGroup',
    { fsType: 'ext4', accessMode: 'ReadWriteOnce', singleNodeMultiWriter: false, mountFlags: ['noatime'] },
    { mount: { fsType: 'ext4', mountFlags: ['noatime'] }, accessMode: { mode: 'SINGLE_NODE_WRITER' } },
  ],
  [
    'a mount whose driver applies the fsGroup',
    { fsType: '', accessMode: 'ReadWriteMany', singleNodeMultiWriter: false, fsGroup: 2000 },
    { mount: { fsType: '', mountFlags: [], volumeMountGroup: '2000' }, accessMode: { mode: 'MULTI_NODE_MULTI_WRITER' } },
  ],
  [
    'raw block: no mount, no flags',
    { fsType: 'block', accessMode: 'ReadWriteOncePod', singleNodeMultiWriter: true, mountFlags: ['ignored'], fsGroup: 1 },
    { block: {}, accessMode: { mode: 'SINGLE_NODE_SINGLE_WRITER' } },
  ],
];
for (const [name, input, want] of caps) test(`volume capability: ${name}`, () => assert.deepEqual(volumeCapability(input), want));
