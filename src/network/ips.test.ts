import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalIP, nodeIPs, parseNodeIPArgument, sandboxIPs, sortPodIPs } from './ips.ts';

test('canonicalIP: the text upstream re-stringifies', () => {
  const rows: [string, string | undefined][] = [
    ['10.0.0.1', '10.0.0.1'],
    ['fd00:0:0:0:0:0:0:1', 'fd00::1'],
    ['FD00::A', 'fd00::a'],
    ['not-an-ip', undefined],
    ['', undefined],
  ];
  for (const [ip, want] of rows) assert.equal(canonicalIP(ip), want, ip);
});

test('parseNodeIPArgument: one IP or a dual-stack pair; junk left out; pairs refused as upstream', () => {
  const rows: [string | undefined, { ips: string[]; invalid: string[] } | RegExp][] = [
    [undefined, { ips: [], invalid: [] }],
    ['10.0.0.1', { ips: ['10.0.0.1'], invalid: [] }],
    ['10.0.0.1,fd00::1', { ips: ['10.0.0.1', 'fd00::1'], invalid: [] }],
    ['fd00::1, 10.0.0.1', { ips: ['fd00::1', '10.0.0.1'], invalid: [] }],
    ['::', { ips: ['::'], invalid: [] }],
    ['0.0.0.0', { ips: ['0.0.0.0'], invalid: [] }],
    ['10.0.0.1,bogus', { ips: ['10.0.0.1'], invalid: ['bogus'] }],
    ['10.0.0.1,10.0.0.2', /must contain either a single IP or a dual-stack pair of IPs/],
    ['10.0.0.1,fd00::1,10.0.0.2', /must contain either a single IP or a dual-stack pair of IPs/],
    ['0.0.0.0,fd00::1', /dual-stack node IP cannot include '0.0.0.0' or '::'/],
  ];
  for (const [arg, want] of rows) {
    if (want instanceof RegExp) assert.throws(() => parseNodeIPArgument(arg), want, String(arg));
    else assert.deepEqual(parseNodeIPArgument(arg), want, String(arg));
  }
});

test("nodeIPs: the host's address of the family asked for, IPv4 first when none is given", () => {
  const host = ['192.0.2.2', 'fe80::1', 'fd00::2', '10.1.0.1'];
  const rows: [string, string[], readonly string[], string[] | RegExp][] = [
    ['nothing given: the first IPv4', [], host, ['192.0.2.2']],
    ['nothing given, IPv6-only host', [], ['fe80::1', 'fd00::2'], ['fd00::2']],
    ['given as is', ['10.1.0.1', 'fd00::2'], host, ['10.1.0.1', 'fd00::2']],
    ['"::": the first global IPv6', ['::'], host, ['fd00::2']],
    ['"0.0.0.0": the first IPv4', ['0.0.0.0'], host, ['192.0.2.2']],
    ['"::" on an IPv4-only host', ['::'], ['192.0.2.2'], /no non-loopback IPv6 address/],
    ['no address at all', [], [], /no --node-ip given/],
  ];
  for (const [name, given, addrs, want] of rows) {
    if (want instanceof RegExp) assert.throws(() => nodeIPs(given, addrs), want, name);
    else assert.deepEqual(nodeIPs(given, addrs), want, name);
  }
});

test('sandboxIPs: the primary and every additional IP; none when one does not parse', () => {
  const rows: [string, Parameters<typeof sandboxIPs>[0], string[]][] = [
    ['no network (host network)', undefined, []],
    ['primary only', { ip: '10.244.1.5' }, ['10.244.1.5']],
    ['dual-stack', { ip: '10.244.1.5', additionalIps: [{ ip: 'fd00:10:244:1::5' }] }, ['10.244.1.5', 'fd00:10:244:1::5']],
    ['no primary', { ip: '', additionalIps: [] }, []],
    ['an unparseable additional IP', { ip: '10.244.1.5', additionalIps: [{ ip: 'x' }] }, []],
  ];
  for (const [name, network, want] of rows) assert.deepEqual(sandboxIPs(network), want, name);
});

test("sortPodIPs: one of each family, the node's primary family first", () => {
  const rows: [string, string[], string[], string[]][] = [
    ['IPv4 node, dual-stack pod given v6 first', ['fd00::5', '10.0.0.5'], ['10.0.0.1'], ['10.0.0.5', 'fd00::5']],
    ['IPv6-primary node', ['10.0.0.5', 'fd00::5'], ['fd00::1', '10.0.0.1'], ['fd00::5', '10.0.0.5']],
    ['single-stack pod', ['10.0.0.5'], ['10.0.0.1'], ['10.0.0.5']],
    ['two of a family: the first', ['10.0.0.5', '10.0.0.6'], ['10.0.0.1'], ['10.0.0.5']],
    ['no node IP known: IPv4 first', ['fd00::5', '10.0.0.5'], [], ['10.0.0.5', 'fd00::5']],
  ];
  for (const [name, ips, node, want] of rows) assert.deepEqual(sortPodIPs(ips, node), want, name);
});
