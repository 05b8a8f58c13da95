// The plugin manager against fake plugins: grpc-js Registration servers on unix sockets in a
// temporary plugins_registry, as CSI's node-driver-registrar and DRA drivers serve it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server, ServerCredentials } from '@grpc/grpc-js';
import type { Logger } from '../log/log.ts';
import type { PluginInfo } from './generated/pluginregistration/PluginInfo.ts';
import type { RegistrationStatus__Output } from './generated/pluginregistration/RegistrationStatus.ts';
import { CSI_PLUGIN, DRA_PLUGIN, type PluginHandler } from './handler.ts';
import { PluginManager } from './manager.ts';
import { registrationService } from './proto.ts';

const quiet: Logger = { info() {}, v() {}, warn() {}, error() {} };
const until = async (cond: () => boolean, what: string) => {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(cond(), what);
};

/** A plugin's registration socket: it answers GetInfo with info and records the statuses it is told. */
async function fakePlugin(socket: string, info: PluginInfo) {
  const statuses: RegistrationStatus__Output[] = [];
  const server = new Server();
  server.addService(registrationService(), {
    GetInfo: (_c: unknown, cb: (e: null, r: PluginInfo) => void) => cb(null, info),
    NotifyRegistrationStatus(call: { request: RegistrationStatus__Output }, cb: (e: null, r: object) => void) {
      statuses.push(call.request);
      cb(null, {});
    },
  });
  await new Promise<void>((res, rej) =>
    server.bindAsync(`unix://${socket}`, ServerCredentials.createInsecure(), (e) => (e ? rej(e) : res())),
  );
  return {
    statuses,
    stop() {
      server.forceShutdown();
      rmSync(socket, { force: true });
    },
  };
}

/** A handler that records its calls and refuses plugins named "refused". */
function recordingHandler() {
  const calls: string[] = [];
  const handler: PluginHandler = {
    validatePlugin(name, endpoint, versions) {
      calls.push(`validate ${name} ${endpoint} ${versions.join(',')}`);
      if (name === 'refused') throw new Error('no supported version');
    },
    async registerPlugin(name, endpoint) {
      calls.push(`register ${name} ${endpoint}`);
    },
    deRegisterPlugin(name, endpoint) {
      calls.push(`deregister ${name} ${endpoint}`);
    },
  };
  return { calls, handler };
}

test('plugins registered, refused with the reason, deregistered when their socket goes', async () => {
  const root = mkdtempSync(join(tmpdir(), 'plugin-manager-'));
  const registry = join(root, 'plugins_registry');
  const csi = recordingHandler();
  let state = { desired: [] as string[], actual: [] as string[] };
  const m = new PluginManager({ rootDir: root, log: quiet, observe: { state: (desired, actual) => (state = { desired, actual }) } });
  m.addHandler(CSI_PLUGIN, csi.handler);
  m.addHandler(DRA_PLUGIN, recordingHandler().handler);
  const plugins: Awaited<ReturnType<typeof fakePlugin>>[] = [];
  try {
    m.start();
    assert.equal(statSync(registry).mode & 0o777, 0o750);
    assert.equal(statSync(join(root, 'plugins')).mode & 0o777, 0o750);

    // Created after start, in a subdirectory made after start: the watch or the rescan finds it.
    mkdirSync(join(registry, 'csi'));
    const goodSock = join(registry, 'csi', 'good-reg.sock');
    const good = await fakePlugin(goodSock, {
      type: CSI_PLUGIN,
      name: 'good',
      endpoint: '/var/lib/kubelet/plugins/good/csi.sock',
      supportedVersions: ['1.0.0'],
    });
    plugins.push(good);
    await until(() => good.statuses.length > 0, 'good plugin told its status');
    assert.deepEqual(good.statuses, [{ pluginRegistered: true, error: '' }]);
    assert.deepEqual(csi.calls, [
      'validate good /var/lib/kubelet/plugins/good/csi.sock 1.0.0',
      'register good /var/lib/kubelet/plugins/good/csi.sock',
    ]);

    const refusedSock = join(registry, 'refused-reg.sock');
    const refused = await fakePlugin(refusedSock, { type: CSI_PLUGIN, name: 'refused', supportedVersions: ['9.0.0'] });
    const unknownSock = join(registry, 'unknown-reg.sock');
    const unknown = await fakePlugin(unknownSock, { type: 'DevicePlugin', name: 'x', supportedVersions: ['v1beta1'] });
    plugins.push(refused, unknown);
    await until(() => refused.statuses.length > 0 && unknown.statuses.length > 0, 'refused plugins told why');
    assert.deepEqual(refused.statuses[0], {
      pluginRegistered: false,
      error: 'RegisterPlugin error -- plugin validation failed with err: no supported version',
    });
    assert.deepEqual(unknown.statuses[0], {
      pluginRegistered: false,
      error: `RegisterPlugin error -- no handler registered for plugin type: DevicePlugin at socket ${unknownSock}`,
    });
    // Refused without an endpoint: the handler saw the registration socket; it never registered it.
    assert.ok(csi.calls.includes(`validate refused ${refusedSock} 9.0.0`));
    assert.ok(!csi.calls.some((c) => c.startsWith('register refused')));
    await until(() => state.actual.length === 1 && state.desired.length === 3, 'metrics state');
    assert.deepEqual(state, { desired: [goodSock, refusedSock, unknownSock].sort(), actual: [goodSock] });

    // The same plugin restarted at the same path: deregistered, then registered again.
    csi.calls.length = 0;
    good.stop();
    const again = await fakePlugin(goodSock, { type: CSI_PLUGIN, name: 'good', supportedVersions: ['1.0.0'] });
    plugins.push(again);
    await until(() => again.statuses.length > 0, 'restarted plugin registered');
    assert.deepEqual(again.statuses, [{ pluginRegistered: true, error: '' }]);
    assert.deepEqual(csi.calls.slice(0, 1), ['deregister good /var/lib/kubelet/plugins/good/csi.sock']);
    assert.ok(csi.calls.includes(`register good ${goodSock}`), csi.calls.join('\n'));

    // Its socket removed: deregistered.
    csi.calls.length = 0;
    again.stop();
    await until(() => csi.calls.includes(`deregister good ${goodSock}`), 'deregistered when the socket went');
    await until(() => state.actual.length === 0, 'nothing registered');
  } finally {
    m.stop();
    for (const p of plugins) p.stop();
    rmSync(root, { recursive: true, force: true });
  }
});
