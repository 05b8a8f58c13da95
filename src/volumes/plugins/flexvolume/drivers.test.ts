import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../../../log/log.ts';
import { NotSupportedError } from './driver-call.ts';
import { type DriverRunner, discoverDrivers, FlexDrivers } from './drivers.ts';

const quiet: Logger = { info() {}, v() {}, warn() {}, error() {} };

test("discoverDrivers: upstream's probeAll over a listing of volumePluginDir", () => {
  const dir = (name: string) => ({ name, isDirectory: true });
  const { drivers, errors } = discoverDrivers('/exec', [
    dir('k8s~dummy'),
    dir('example.com~nfs-driver'),
    // No vendor: the driver is named for the directory alone.
    dir('plain'),
    // Dot directories (an installer's staging) and files are not drivers.
    dir('.k8s~staging'),
    { name: 'README', isDirectory: false },
    // Not a qualified name: refused, with apimachinery's reason.
    dir('Bad_Vendor~x'),
    dir('a~b~c'),
  ]);
  assert.deepEqual(drivers, [
    { dirName: 'example.com~nfs-driver', name: 'example.com/nfs-driver', executable: '/exec/example.com~nfs-driver/nfs-driver' },
    { dirName: 'k8s~dummy', name: 'k8s/dummy', executable: '/exec/k8s~dummy/dummy' },
    { dirName: 'plain', name: 'plain', executable: '/exec/plain/plain' },
  ]);
  assert.equal(errors.length, 2);
  assert.match(errors[0]!, /^volume plugin has invalid name: "Bad_Vendor\/x": prefix part a lowercase RFC 1123 subdomain/);
  assert.match(errors[1]!, /^volume plugin has invalid name: "a\/b\/c": a qualified name must consist of/);
});

/** A volumePluginDir with drivers whose executables hold `body` (the fake runner answers for them by name). */
function pluginDir(t: { after(fn: () => void): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'flex-drivers-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const install = (vendorDriver: string, body = '#!/bin/sh\n') => {
    const [, driver] = vendorDriver.split('~');
    mkdirSync(join(dir, vendorDriver), { recursive: true });
    writeFileSync(join(dir, vendorDriver, driver!), body, { mode: 0o755 });
  };
  return { dir, install };
}

test('FlexDrivers: init once per driver, again when it changes, none once it is gone; a failed init is the lookup error', async (t) => {
  const { dir, install } = pluginDir(t);
  const calls: string[] = [];
  const answers: Record<string, string> = {
    dummy: '{"status":"Success","capabilities":{"attach":false}}',
    broken: '{"status":"Failure","message":"no backend"}',
  };
  const run: DriverRunner = async (exe, args) => {
    const name = exe.split('/').pop()!;
    calls.push(`${name} ${args.join(' ')}`);
    await new Promise((r) => setTimeout(r, 5));
    return { stdout: answers[name] ?? '{"status":"Success"}', stderr: '', code: 0 };
  };
  install('k8s~dummy');
  install('k8s~broken');
  const fresh = join(`${dir}-fresh`, 'exec');
  t.after(() => rmSync(`${dir}-fresh`, { recursive: true, force: true }));
  const drivers = new FlexDrivers({ dir: fresh, log: quiet, run });
  // The directory is made at start, as upstream's createPluginDir; nothing in it yet.
  await drivers.start();
  assert.ok(existsSync(fresh));
  assert.deepEqual(calls, []);
  assert.match(JSON.stringify(await drivers.lookup('k8s/dummy')), /no driver directory k8s~dummy in .*-fresh\/exec/);

  const drivers2 = new FlexDrivers({ dir, log: quiet, run });
  await drivers2.start();
  assert.deepEqual(calls.sort(), ['broken init', 'dummy init']);
  // Lookups side by side share the one init; an unchanged driver is not initialised again.
  const [a, b] = await Promise.all([drivers2.lookup('k8s/dummy'), drivers2.lookup('k8s/dummy')]);
  assert.ok('driver' in a && 'driver' in b && a.driver === b.driver);
  assert.deepEqual(a.driver.capabilities, {
    attach: false,
    selinuxRelabel: true,
    supportsMetrics: false,
    fsGroup: true,
    requiresFSResize: true,
  });
  assert.deepEqual(await drivers2.lookup('k8s/broken'), {
    error:
      'error creating Flexvolume plugin from directory k8s~broken, skipping. Error: init command failed, status: Failure, reason: no backend',
  });
  assert.equal(calls.length, 2);

  // A new version of the executable is a new driver: init again (upstream's ProbeAddOrUpdate).
  install('k8s~dummy', '#!/bin/sh\n# v2\n');
  const c = await drivers2.lookup('k8s/dummy');
  assert.ok('driver' in c && c.driver !== a.driver);
  assert.deepEqual(calls.slice(2), ['dummy init']);
  // Removed: looked up no more (upstream's ProbeRemove).
  rmSync(join(dir, 'k8s~dummy'), { recursive: true });
  assert.match(JSON.stringify(await drivers2.lookup('k8s/dummy')), /no driver directory k8s~dummy/);
});

test('FlexDriver: a command answered "Not supported" is not run again (upstream\'s unsupportedCommands)', async (t) => {
  const { dir, install } = pluginDir(t);
  install('k8s~dummy');
  const calls: string[] = [];
  const run: DriverRunner = async (_exe, args) => {
    calls.push(args[0]!);
    return { stdout: args[0] === 'init' ? '{"status":"Success"}' : '{"status":"Not supported"}', stderr: '', code: 0 };
  };
  const found = await new FlexDrivers({ dir, log: quiet, run }).lookup('k8s/dummy');
  assert.ok('driver' in found);
  await assert.rejects(found.driver.call('unmountdevice', ['/x']), NotSupportedError);
  await assert.rejects(found.driver.call('unmountdevice', ['/x']), NotSupportedError);
  await assert.rejects(found.driver.call('waitforattach', ['', '{}']), NotSupportedError);
  assert.deepEqual(calls, ['init', 'unmountdevice', 'waitforattach']);
});
