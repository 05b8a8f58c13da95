// The logind edge (upstream's nodeshutdown/systemd/inhibit_linux.go): InhibitDelayMaxUSec, the
// drop-in that raises it, the reload, the delay inhibitor lock on shutdown, and the
// PrepareForShutdown signal, on the system bus.
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdirSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { connectBus, DEFAULT_SYSTEM_BUS_ADDRESS } from '../dbus/dbus.ts';

const LOGIND_SERVICE = 'org.freedesktop.login1';
const LOGIND_OBJECT = '/org/freedesktop/login1';
const LOGIND_INTERFACE = 'org.freedesktop.login1.Manager';
export const LOGIND_CONFIG_DIRECTORY = '/etc/systemd/logind.conf.d/';
export const KUBELET_LOGIND_CONF = '99-kubelet.conf';
/** What upstream's InhibitShutdown asks logind for. */
export const INHIBIT = { what: 'shutdown', who: 'kubelet', why: 'Kubelet needs time to handle node shutdown', mode: 'delay' } as const;

export interface InhibitLock {
  /** Lets the shutdown go on; resolves once logind has dropped the lock. */
  release(): Promise<void>;
}

/** What the shutdown manager needs of logind (upstream's dbusInhibiter). */
export interface Logind {
  currentInhibitDelayMs(): Promise<number>;
  overrideInhibitDelay(ms: number): Promise<void>;
  reloadLogindConf(): Promise<void>;
  inhibitShutdown(): Promise<InhibitLock>;
  /** PrepareForShutdown(true) begins a shutdown, (false) cancels it; closed: the bus connection ended. */
  monitorShutdown(onEvent: (shuttingDown: boolean) => void, closed: (err?: Error) => void): Promise<void>;
  close(): void;
}

export interface LogindOptions {
  /** DBUS_SYSTEM_BUS_ADDRESS, or godbus's default. */
  address?: string;
  /** Where the drop-in goes (tests write elsewhere). */
  configDirectory?: string;
  /** The program that takes the lock; default: systemd-inhibit, else elogind-inhibit, on PATH. */
  inhibitCommand?: string;
  /** Extra environment for it (tests point it at their bus). */
  env?: NodeJS.ProcessEnv;
  onError?: (msg: string, err: unknown) => void;
}

/** The first of the names that is an executable on PATH. */
export function findOnPath(names: string[], path = process.env.PATH ?? ''): string | undefined {
  for (const name of names)
    for (const dir of path.split(delimiter).filter(Boolean)) {
      try {
        accessSync(join(dir, name), constants.X_OK);
        return join(dir, name);
      } catch {
        /* not here */
      }
    }
  return undefined;
}

/** upstream's OverrideInhibitDelay file: InhibitDelayMaxSec in whole seconds. */
export const logindOverride = (ms: number) => `# Kubelet logind override\n[Login]\nInhibitDelayMaxSec=${Math.round(ms / 1000)}\n`;

/** Connects to the system bus (upstream's NewDBusCon); fails where there is none. */
export async function connectLogind(o: LogindOptions = {}): Promise<Logind> {
  const address = o.address ?? process.env.DBUS_SYSTEM_BUS_ADDRESS ?? DEFAULT_SYSTEM_BUS_ADDRESS;
  const bus = await connectBus(address);
  const logind = (member: string, signature?: string, body?: unknown[]) =>
    bus.call({ destination: LOGIND_SERVICE, path: LOGIND_OBJECT, interface: LOGIND_INTERFACE, member, signature, body });
  return {
    async currentInhibitDelayMs() {
      let v: unknown;
      try {
        [v] = await bus.call({
          destination: LOGIND_SERVICE,
          path: LOGIND_OBJECT,
          interface: 'org.freedesktop.DBus.Properties',
          member: 'Get',
          signature: 'ss',
          body: [LOGIND_INTERFACE, 'InhibitDelayMaxUSec'],
        });
      } catch (e) {
        throw new Error(`failed reading InhibitDelayMaxUSec property from logind: ${(e as Error).message}`);
      }
      if (typeof v !== 'bigint') throw new Error('InhibitDelayMaxUSec from logind is not a uint64 as expected');
      return Number(v / 1000n);
    },
    async overrideInhibitDelay(ms) {
      const dir = o.configDirectory ?? LOGIND_CONFIG_DIRECTORY;
      try {
        mkdirSync(dir, { recursive: true, mode: 0o755 });
      } catch (e) {
        throw new Error(`failed creating ${dir} directory: ${(e as Error).message}`);
      }
      const path = join(dir, KUBELET_LOGIND_CONF);
      try {
        writeFileSync(path, logindOverride(ms), { mode: 0o644 });
      } catch (e) {
        throw new Error(`failed writing logind shutdown inhibit override file ${path}: ${(e as Error).message}`);
      }
    },
    async reloadLogindConf() {
      // As upstream: SIGHUP to systemd-logind through systemd. Where systemd is not on the bus
      // (elogind), this fails and so does the start: set InhibitDelayMaxSec in elogind's own config.
      try {
        await bus.call({
          destination: 'org.freedesktop.systemd1',
          path: '/org/freedesktop/systemd1',
          interface: 'org.freedesktop.systemd1.Manager',
          member: 'KillUnit',
          signature: 'ssi',
          body: ['systemd-logind.service', 'all', 1],
        });
      } catch (e) {
        throw new Error(`unable to reload logind conf: ${(e as Error).message}`);
      }
    },
    inhibitShutdown: () => inhibitWithChild(o, () => logind('ListInhibitors')),
    async monitorShutdown(onEvent, closed) {
      await bus.call({
        destination: 'org.freedesktop.DBus',
        path: '/org/freedesktop/DBus',
        interface: 'org.freedesktop.DBus',
        member: 'AddMatch',
        signature: 's',
        body: [`type='signal',interface='${LOGIND_INTERFACE}',member='PrepareForShutdown',path='${LOGIND_OBJECT}'`],
      });
      bus.onSignal((s) => {
        if (s.interface !== LOGIND_INTERFACE || s.member !== 'PrepareForShutdown' || s.path !== LOGIND_OBJECT) return;
        if (typeof s.body[0] !== 'boolean') {
          o.onError?.('Failed obtaining shutdown event, PrepareForShutdown event was not bool type as expected', s.body);
          return;
        }
        onEvent(s.body[0]);
      });
      bus.onClose(closed);
    },
    close: () => bus.close(),
  };
}

/**
 * logind's Inhibit returns the lock as a file descriptor, which Node.js cannot receive over a
 * unix socket. So a child holds it: `systemd-inhibit --what=shutdown --mode=delay ... cat`
 * (elogind-inhibit where that is the one), its cat reading a pipe from us. Ending the pipe
 * releases the lock; so does the kubelet dying (the pipe closes), so no lock outlives it.
 * The cost is one small process pair while the lock is held (about 5 MiB PSS, mostly shared
 * library pages). The lock counts as taken once logind lists it for the child's pid.
 */
async function inhibitWithChild(o: LogindOptions, list: () => Promise<unknown[]>): Promise<InhibitLock> {
  const command = o.inhibitCommand ?? findOnPath(['systemd-inhibit', 'elogind-inhibit']);
  if (!command) throw new Error('failed creating systemd inhibitor: neither systemd-inhibit nor elogind-inhibit is on PATH');
  const child: ChildProcess = spawn(
    command,
    [`--what=${INHIBIT.what}`, `--who=${INHIBIT.who}`, `--why=${INHIBIT.why}`, `--mode=${INHIBIT.mode}`, 'cat'],
    { stdio: ['pipe', 'ignore', 'pipe'], env: { ...process.env, ...o.env } },
  );
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => void (stderr = (stderr + d.toString()).slice(-500)));
  child.stdin!.on('error', () => {}); // EPIPE once the child is gone
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', (e) => {
      stderr ||= e.message;
      resolve();
    });
  });
  let gone = false;
  void exited.then(() => (gone = true));
  const release = async () => {
    if (gone) return;
    child.stdin!.end();
    const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(killer);
  };
  // Wait until logind lists the lock for the child (or the child gives up).
  const end = Date.now() + 10_000;
  while (!gone && Date.now() < end) {
    try {
      const [inhibitors] = (await list()) as [[string, string, string, string, number, number][]];
      if (
        inhibitors.some(
          ([what, who, , mode, , pid]) =>
            pid === child.pid && what.split(':').includes(INHIBIT.what) && who === INHIBIT.who && mode === INHIBIT.mode,
        )
      )
        return { release };
    } catch {
      // ListInhibitors is not always allowed: trust the child if it keeps running.
      await new Promise((r) => setTimeout(r, 500));
      if (!gone) return { release };
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  await release();
  throw new Error(`failed creating systemd inhibitor: ${stderr.trim() || 'the lock did not appear within 10 s'}`);
}
