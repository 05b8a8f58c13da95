import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cniAction, cniConfigLogFields, bridgeConflist, outsideSubnet, CONFLIST_NAME } from './cni-config.ts';

test('cniAction: writes into an empty dir, keeps an identical file, never overrides another network', () => {
  const ours = bridgeConflist('10.88.0.0/24', 'promiscuous-bridge');
  const h = 'promiscuous-bridge';
  assert.equal(cniAction([], undefined, '10.88.0.0/24', h), 'write');
  assert.equal(cniAction([CONFLIST_NAME], ours, '10.88.0.0/24', h), 'keep');
  assert.equal(cniAction([CONFLIST_NAME], ours, '10.88.1.0/24', h), 'write', 'the podCIDR changed');
  assert.equal(cniAction([CONFLIST_NAME], ours, '10.88.0.0/24', 'hairpin-veth'), 'write', 'the hairpin mode changed');
  assert.equal(cniAction(['05-calico.conflist'], undefined, '10.88.0.0/24', h), 'foreign');
  assert.equal(cniAction(['README'], undefined, '10.88.0.0/24', h), 'write', 'non-config files do not count');
  assert.equal(cniAction([CONFLIST_NAME, '99-loopback.conf'], ours, '10.88.0.0/24', h), 'keep', 'ours sorts first, so it is in effect');
});

test('the conflist has a bridge with host-local IPAM on the podCIDR and portmap', () => {
  const c = JSON.parse(bridgeConflist('10.88.3.0/24', 'hairpin-veth'));
  assert.deepEqual(
    c.plugins.map((p: { type: string }) => p.type),
    ['bridge', 'portmap', 'loopback'],
  );
  assert.equal(c.plugins[0].ipam.ranges[0][0].subnet, '10.88.3.0/24');
});

test('a bridge address from another podCIDR is stale', () => {
  assert.equal(outsideSubnet('10.88.2.1', 24, '10.88.2.0/24'), false);
  assert.equal(outsideSubnet('10.88.0.1', 24, '10.88.2.0/24'), true);
  assert.equal(outsideSubnet('10.88.2.1', 16, '10.88.2.0/24'), true, 'another prefix length');
});

test('cniConfigLogFields: what the kubenet log line says of each action', () => {
  for (const [action, said] of [
    ['write', 'written'],
    ['keep', 'unchanged'],
    ['foreign', 'left to the installed network add-on'],
  ] as const)
    assert.deepEqual(cniConfigLogFields('10.1.0.0/24', action), { podCIDR: '10.1.0.0/24', cniConfig: said });
});

test("the bridge plugin's hairpin settings follow the hairpin mode", () => {
  const rows = [
    ['promiscuous-bridge', { hairpinMode: false, promiscMode: true }],
    ['hairpin-veth', { hairpinMode: true, promiscMode: false }],
    ['none', { hairpinMode: false, promiscMode: false }],
  ] as const;
  for (const [mode, want] of rows) {
    const bridge = JSON.parse(bridgeConflist('10.88.3.0/24', mode)).plugins[0];
    assert.deepEqual({ hairpinMode: bridge.hairpinMode, promiscMode: bridge.promiscMode }, want, mode);
  }
});
