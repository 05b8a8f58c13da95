import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CSIDriver } from 'kubernetes-types/storage/v1.js';
import { type LifecycleMode, lifecycleModeProblem } from './lifecycle-mode.ts';

const D = 'hostpath.csi.k8s.io';
const driver = (modes?: string[]): CSIDriver => ({ metadata: { name: D }, spec: modes ? { volumeLifecycleModes: modes } : {} });

test('lifecycleModeProblem: upstream supportsVolumeLifecycleMode', () => {
  const rows: [string, CSIDriver | undefined, LifecycleMode, string | undefined][] = [
    ['no CSIDriver, persistent: fine', undefined, 'Persistent', undefined],
    [
      'no CSIDriver, ephemeral: refused',
      undefined,
      'Ephemeral',
      `volume mode "Ephemeral" not supported by driver ${D} (no CSIDriver object)`,
    ],
    ['modes unset default to Persistent', driver(), 'Persistent', undefined],
    [
      'modes unset refuse Ephemeral',
      driver(),
      'Ephemeral',
      `volume mode "Ephemeral" not supported by driver ${D} (only supports ["Persistent"])`,
    ],
    ['both listed', driver(['Persistent', 'Ephemeral']), 'Ephemeral', undefined],
    [
      'only Ephemeral refuses Persistent',
      driver(['Ephemeral']),
      'Persistent',
      `volume mode "Persistent" not supported by driver ${D} (only supports ["Ephemeral"])`,
    ],
    [
      'Go quotes the list with spaces',
      driver(['Persistent', 'Other']),
      'Ephemeral',
      `volume mode "Ephemeral" not supported by driver ${D} (only supports ["Persistent" "Other"])`,
    ],
  ];
  for (const [name, csiDriver, mode, want] of rows) assert.equal(lifecycleModeProblem(D, csiDriver, mode), want, name);
});
