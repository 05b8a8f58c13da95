import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CSI_PLUGIN, DRA_PLUGIN } from './handler.ts';
import { checkPluginInfo } from './validate.ts';

test('plugin info as upstream checks it before the handler', () => {
  const sock = '/var/lib/kubelet/plugins_registry/hostpath.csi.k8s.io-reg.sock';
  const handlers = new Set([CSI_PLUGIN, DRA_PLUGIN]);
  const info = {
    type: CSI_PLUGIN,
    name: 'hostpath.csi.k8s.io',
    endpoint: '/var/lib/kubelet/plugins/hostpath/csi.sock',
    supportedVersions: ['1.0.0'],
  };
  const cases: [string, typeof info, ReturnType<typeof checkPluginInfo>][] = [
    ['accepted', info, { type: CSI_PLUGIN, name: info.name, endpoint: info.endpoint, versions: ['1.0.0'] }],
    [
      'no endpoint: the registration socket',
      { ...info, endpoint: '' },
      { type: CSI_PLUGIN, name: info.name, endpoint: sock, versions: ['1.0.0'] },
    ],
    [
      'DRA',
      { ...info, type: DRA_PLUGIN, supportedVersions: [] },
      { type: DRA_PLUGIN, name: info.name, endpoint: info.endpoint, versions: [] },
    ],
    [
      'no handler for the type',
      { ...info, type: 'DevicePlugin' },
      { error: `RegisterPlugin error -- no handler registered for plugin type: DevicePlugin at socket ${sock}` },
    ],
    ['no type', { ...info, type: '' }, { error: `RegisterPlugin error -- no handler registered for plugin type:  at socket ${sock}` }],
    ['no name', { ...info, name: '' }, { error: `RegisterPlugin error -- plugin of type CSIPlugin at socket ${sock} has no name` }],
  ];
  for (const [name, given, want] of cases)
    assert.deepEqual(
      checkPluginInfo(given, sock, (t) => handlers.has(t)),
      want,
      name,
    );
});
