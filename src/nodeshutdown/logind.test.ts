// The logind edge against a real bus: a dbus-daemon of its own (own config, socket in a temp
// dir, never the host's system bus) and, where it can run, elogind in a private mount
// namespace (its /run and /etc overlaid, so the host's are untouched). The shutdown signal
// is simulated with dbus-send, as upstream's node e2e does; nothing is ever powered off.
// ELOGIND_ROOT names where elogind is installed ("/" for Debian's package, or a directory a
// .deb was extracted into); without it, or without dbus-daemon or root, these tests skip.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectBus, decodeMessage, encodeMessage } from '../dbus/dbus.ts';
import { connectLogind, findOnPath, type Logind } from './logind.ts';
import { nodeShutdownManager } from './manager.ts';
import { stateFile } from './state-file.ts';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { Logger } from '../log/log.ts';

test('D-Bus messages: encoded and decoded back (the wire format the client speaks)', () => {
  const cases: [string, unknown[]][] = [
    ['', []],
    ['ss', ['org.freedesktop.login1.Manager', 'InhibitDelayMaxUSec']],
    ['ssi', ['systemd-logind.service', 'all', 1]],
    ['b', [true]],
    ['t', [5_000_000n]],
    ['a(ssssuu)', [[['shutdown', 'kubelet', 'why', 'delay', 0, 42]]]],
    ['yv', [7, 's']],
  ];
  for (const [sig, body] of cases) {
    const m = decodeMessage(
      encodeMessage(1, 9, { path: '/a/b', member: 'M', destination: 'x.y' }, sig, sig === 'yv' ? [7, ['s', 'hi']] : body),
    );
    assert.equal(m.serial, 9, sig);
    assert.deepEqual(m.fields, { path: '/a/b', member: 'M', destination: 'x.y', ...(sig ? { signature: sig } : {}) }, sig);
    assert.deepEqual(m.body, sig === 'yv' ? [7, 'hi'] : body, sig);
  }
});

const dbusDaemon = findOnPath(['dbus-daemon']);
const isRoot = process.getuid?.() === 0;
const elogindRoot = process.env.ELOGIND_ROOT;
const elogindBin = elogindRoot && ['lib/elogind/elogind', 'usr/lib/elogind/elogind'].map((p) => join(elogindRoot, p)).find(existsSync);
const noBus = !dbusDaemon && 'no dbus-daemon on PATH';
const noElogind =
  noBus || (!isRoot && 'not root (elogind runs in a mount namespace of its own)') || (!elogindBin && 'ELOGIND_ROOT names no elogind');

let dir = '';
let address = '';
const children: ChildProcess[] = [];
const quiet: Logger = { info: () => {}, v: () => {}, warn: () => {}, error: () => {} };
const until = async (what: string, check: () => Promise<boolean>, ms = 10_000) => {
  const end = Date.now() + ms;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};
const libs = () => (elogindRoot ? [join(elogindRoot, 'lib/elogind'), join(elogindRoot, 'lib/x86_64-linux-gnu')].join(':') : '');

before(async () => {
  if (noBus) return;
  dir = mkdtempSync(join(tmpdir(), 'kts-logind-'));
  address = `unix:path=${dir}/system_bus_socket`;
  const policy = elogindRoot ? join(elogindRoot, 'usr/share/dbus-1/system.d/org.freedesktop.login1.conf') : '';
  writeFileSync(
    join(dir, 'bus.conf'),
    `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <auth>EXTERNAL</auth>
  <listen>${address}</listen>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/><allow receive_type="method_return"/><allow receive_type="error"/><allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
  </policy>
  ${existsSync(policy) ? `<include>${policy}</include>` : ''}
</busconfig>
`,
  );
  const bus = spawn(dbusDaemon as string, [`--config-file=${dir}/bus.conf`, '--nofork', '--nosyslog'], { stdio: 'ignore' });
  children.push(bus);
  await until('the bus socket', async () => existsSync(`${dir}/system_bus_socket`));
  if (noElogind) return;
  // elogind reads /etc/elogind and writes /run: both private to its mount namespace.
  mkdirSync(join(dir, 'upper/elogind'), { recursive: true });
  mkdirSync(join(dir, 'work'));
  writeFileSync(join(dir, 'upper/elogind/logind.conf'), '[Login]\nInhibitDelayMaxSec=7\n');
  const script = [
    'set -e',
    'mount --make-rprivate /',
    'mount -t tmpfs tmpfs /run',
    `mount -t overlay overlay -o lowerdir=/etc,upperdir=${dir}/upper,workdir=${dir}/work /etc`,
    `exec ${elogindBin}`,
  ].join('\n');
  const elogind = spawn('unshare', ['-m', 'sh', '-c', script], {
    stdio: 'ignore',
    env: { ...process.env, DBUS_SYSTEM_BUS_ADDRESS: address, LD_LIBRARY_PATH: libs() },
  });
  children.push(elogind);
  await until('elogind on the bus', async () => {
    const l = await connectLogind({ address });
    try {
      return (await l.currentInhibitDelayMs()) > 0;
    } finally {
      l.close();
    }
  });
});

after(() => {
  // Only what this file started, by its own handle.
  for (const c of children.reverse()) c.kill('SIGTERM');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('a bus without logind: start fails with the reason, as upstream logs it', { skip: noBus }, async () => {
  if (!noElogind) return; // logind is there in this run
  const l = await connectLogind({ address });
  await assert.rejects(
    l.currentInhibitDelayMs(),
    /^Error: failed reading InhibitDelayMaxUSec property from logind: The name org.freedesktop.login1 was not provided/,
  );
  l.close();
});

test('no bus at all: the connection error names the socket', async () => {
  await assert.rejects(
    connectLogind({ address: 'unix:path=/nonexistent/kts/system_bus_socket' }),
    /^Error: dial unix \/nonexistent\/kts\/system_bus_socket: /,
  );
});

const inhibitOptions = () => {
  const systemdInhibit = findOnPath(['systemd-inhibit']);
  const elogindInhibit = elogindRoot && join(elogindRoot, 'bin/elogind-inhibit');
  return {
    address,
    inhibitCommand: systemdInhibit ?? elogindInhibit,
    env: { DBUS_SYSTEM_BUS_ADDRESS: address, ...(systemdInhibit ? {} : { LD_LIBRARY_PATH: libs() }) },
  };
};

async function inhibitors(): Promise<string[]> {
  const bus = await connectBus(address);
  try {
    const [list] = (await bus.call({
      destination: 'org.freedesktop.login1',
      path: '/org/freedesktop/login1',
      interface: 'org.freedesktop.login1.Manager',
      member: 'ListInhibitors',
    })) as [[string, string, string, string, number, number][]];
    return list.map(([what, who, why, mode]) => `${what}/${who}/${why}/${mode}`);
  } finally {
    bus.close();
  }
}

const emit = (active: boolean) =>
  spawnSync(
    'dbus-send',
    ['--system', '--type=signal', '/org/freedesktop/login1', 'org.freedesktop.login1.Manager.PrepareForShutdown', `boolean:${active}`],
    {
      env: { ...process.env, DBUS_SYSTEM_BUS_ADDRESS: address },
    },
  ).status;

test('elogind: InhibitDelayMaxUSec, the drop-in, and the reload that needs systemd', { skip: noElogind }, async () => {
  const l: Logind = await connectLogind({ ...inhibitOptions(), configDirectory: join(dir, 'logind.conf.d') });
  try {
    assert.equal(await l.currentInhibitDelayMs(), 7000);
    await l.overrideInhibitDelay(20_000);
    assert.equal(
      readFileSync(join(dir, 'logind.conf.d/99-kubelet.conf'), 'utf8'),
      '# Kubelet logind override\n[Login]\nInhibitDelayMaxSec=20\n',
    );
    // upstream reloads logind through systemd's KillUnit: not there beside elogind.
    await assert.rejects(l.reloadLogindConf(), /^Error: unable to reload logind conf: The name org.freedesktop.systemd1 was not provided/);
  } finally {
    l.close();
  }
});

test('elogind: the delay lock, PrepareForShutdown(true) stops the pods and releases it, (false) takes it again', {
  skip: noElogind,
}, async () => {
  const killed: string[] = [];
  const pods: Pod[] = [
    { metadata: { name: 'normal', namespace: 'ns', uid: '1' }, spec: { containers: [], priority: 0, terminationGracePeriodSeconds: 30 } },
    { metadata: { name: 'critical', namespace: 'ns', uid: '2' }, spec: { containers: [], priority: 2_000_000_000 } },
  ];
  const m = nodeShutdownManager({
    // 4 s in all: under elogind's 7 s, so no override is needed.
    config: {
      shutdownGracePeriodMs: 4000,
      shutdownGracePeriodCriticalPodsMs: 2000,
      shutdownGracePeriodByPodPriority: [],
      featureGates: {},
    },
    connect: () => connectLogind(inhibitOptions()),
    state: stateFile(dir),
    pods: () => pods,
    killPod: async (p, k) => void killed.push(`${p.metadata!.name} ${k.gracePeriodSeconds} ${k.reason}`),
    syncNodeStatus: () => {},
    events: { event: () => {} },
    node: { kind: 'Node', name: 'n' },
    log: quiet,
    observe: { startTime: () => {}, endTime: () => {} },
  });
  try {
    await m.start();
    assert.deepEqual(await inhibitors(), ['shutdown/kubelet/Kubelet needs time to handle node shutdown/delay']);
    assert.equal(emit(true), 0);
    await until('the lock released', async () => (await inhibitors()).length === 0);
    await m.idle();
    assert.deepEqual(killed, ['normal 2 Terminated', 'critical 2 Terminated']);
    assert.equal(m.shutdownStatus(), 'node is shutting down');
    const state = JSON.parse(readFileSync(join(dir, 'graceful_node_shutdown_state'), 'utf8')) as { startTime: string; endTime: string };
    assert.ok(Date.parse(state.endTime) >= Date.parse(state.startTime), JSON.stringify(state));
    assert.equal(emit(false), 0);
    await until('the lock taken again', async () => (await inhibitors()).length === 1);
    await m.idle();
    assert.equal(m.shutdownStatus(), undefined);
  } finally {
    m.stop();
  }
  await until('the lock released on stop', async () => (await inhibitors()).length === 0);
});
