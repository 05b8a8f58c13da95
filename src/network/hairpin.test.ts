import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEDUP_CHAIN, DEDUP_RECHECK_MS, dedupCommands, dedupDue, dedupRules, effectiveHairpinMode, type HairpinMode } from './hairpin.ts';

test('effectiveHairpinMode: promiscuous-bridge only on the kubenet bridge, else hairpin-veth (upstream effectiveHairpinMode)', () => {
  const rows: [HairpinMode, 'cni' | 'kubenet', HairpinMode][] = [
    ['promiscuous-bridge', 'kubenet', 'promiscuous-bridge'],
    ['promiscuous-bridge', 'cni', 'hairpin-veth'],
    ['hairpin-veth', 'kubenet', 'hairpin-veth'],
    ['hairpin-veth', 'cni', 'hairpin-veth'],
    ['none', 'kubenet', 'none'],
    ['none', 'cni', 'none'],
  ];
  for (const [mode, plugin, want] of rows) assert.equal(effectiveHairpinMode(mode, plugin), want, `${mode} on ${plugin}`);
});

test("dedupRules: the gateway's frames pass, the pod range's copies from the bridge's MAC are dropped (kubenet)", () => {
  assert.deepEqual(dedupRules('0a:58:0a:58:00:01', '10.88.0.1', '10.88.0.0/24'), [
    ['-A', DEDUP_CHAIN, '-p', 'IPv4', '-s', '0a:58:0a:58:00:01', '-o', 'veth+', '--ip-src', '10.88.0.1', '-j', 'ACCEPT'],
    ['-A', DEDUP_CHAIN, '-p', 'IPv4', '-s', '0a:58:0a:58:00:01', '-o', 'veth+', '--ip-src', '10.88.0.0/24', '-j', 'DROP'],
  ]);
  assert.deepEqual(dedupRules('0a:58:0a:58:00:01', 'fd00::1', 'fd00::/64')[1], [
    '-A',
    DEDUP_CHAIN,
    '-p',
    'IPv6',
    '-s',
    '0a:58:0a:58:00:01',
    '-o',
    'veth+',
    '--ip6-src',
    'fd00::/64',
    '-j',
    'DROP',
  ]);
});

test('dedupCommands: written once per bridge, again when its MAC, gateway or range changes or the jump is gone', () => {
  const a = { bridgeMAC: '0a:00:00:00:00:01', gateway: '10.88.0.1', podCIDR: '10.88.0.0/24' };
  const full = (s: typeof a, jump: boolean) => [
    ['-N', DEDUP_CHAIN],
    ...(jump ? [] : [['-A', 'OUTPUT', '-j', DEDUP_CHAIN]]),
    ['-F', DEDUP_CHAIN],
    ...dedupRules(s.bridgeMAC, s.gateway, s.podCIDR),
  ];
  const b = { ...a, bridgeMAC: '0a:00:00:00:00:02' };
  const c = { ...a, podCIDR: '10.88.1.0/24', gateway: '10.88.1.1' };
  const rows: [string, typeof a, typeof a | undefined, boolean, string[][]][] = [
    ['first time', a, undefined, false, full(a, false)],
    ['first time, the jump left by a previous run', a, undefined, true, full(a, true)],
    ['unchanged', a, a, true, []],
    ['the jump was removed', a, a, false, full(a, false)],
    ['the bridge was recreated with another MAC', b, a, true, full(b, true)],
    ['another podCIDR', c, a, true, full(c, true)],
  ];
  for (const [name, now, last, jump, want] of rows) assert.deepEqual(dedupCommands(now, last, jump), want, name);
});

test('dedupDue: ebtables listed for a new bridge or range at once, for the same one only every DEDUP_RECHECK_MS', () => {
  const last = { bridgeMAC: '0a:00:00:00:00:01', gateway: '10.88.0.1', podCIDR: '10.88.0.0/24' };
  const rows: [string, string | undefined, string, typeof last | undefined, number, boolean][] = [
    ['no bridge yet', undefined, last.podCIDR, undefined, 0, false],
    ['the bridge appeared', last.bridgeMAC, last.podCIDR, undefined, 0, true],
    ['unchanged, checked 10 s ago', last.bridgeMAC, last.podCIDR, last, 10_000, false],
    ['unchanged, checked long enough ago', last.bridgeMAC, last.podCIDR, last, DEDUP_RECHECK_MS, true],
    ['the bridge was recreated', '0a:00:00:00:00:02', last.podCIDR, last, 10_000, true],
    ['another podCIDR', last.bridgeMAC, '10.88.1.0/24', last, 10_000, true],
  ];
  for (const [name, mac, podCIDR, l, since, want] of rows) assert.equal(dedupDue(mac, podCIDR, l, since), want, name);
});
