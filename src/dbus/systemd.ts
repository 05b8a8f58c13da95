// systemd's Manager over the system bus (org.freedesktop.systemd1, as go-systemd's dbus package
// that libcontainer uses): the unit calls the systemd cgroup driver makes. The connection is made
// at the first call and made again after it ends (systemd restarted, daemon-reexec).
import { connectBus, type DBusConnection, DEFAULT_SYSTEM_BUS_ADDRESS } from './dbus.ts';

/** A unit property as D-Bus carries it: its name, and a variant [signature, value]. */
export type UnitProperty = [string, [string, unknown]];

/** The calls made to systemd's Manager; errors carry the D-Bus error's name (DBusError.errorName). */
export interface SystemdManager {
  startTransientUnit(name: string, properties: UnitProperty[]): Promise<void>;
  setUnitProperties(name: string, properties: UnitProperty[]): Promise<void>;
  stopUnit(name: string): Promise<void>;
}

/** systemd on the system bus (DBUS_SYSTEM_BUS_ADDRESS, or godbus's default). */
export function systemdOverDBus(address = process.env.DBUS_SYSTEM_BUS_ADDRESS ?? DEFAULT_SYSTEM_BUS_ADDRESS): SystemdManager {
  let conn: Promise<DBusConnection> | undefined;
  const connection = () => {
    if (!conn) {
      const c = connectBus(address);
      conn = c;
      c.then(
        (bus) => bus.onClose(() => conn === c && (conn = undefined)),
        () => conn === c && (conn = undefined),
      );
    }
    return conn;
  };
  const call = async (member: string, signature: string, body: unknown[]) => {
    const bus = await connection();
    await bus.call({
      destination: 'org.freedesktop.systemd1',
      path: '/org/freedesktop/systemd1',
      interface: 'org.freedesktop.systemd1.Manager',
      member,
      signature,
      body,
    });
  };
  return {
    // "replace": a queued stop of the same unit gives way (go-systemd's StartTransientUnitContext as runc calls it).
    startTransientUnit: (name, properties) => call('StartTransientUnit', 'ssa(sv)a(sa(sv))', [name, 'replace', properties, []]),
    // runtime: the change lasts until the next boot, as a transient unit does.
    setUnitProperties: (name, properties) => call('SetUnitProperties', 'sba(sv)', [name, true, properties]),
    stopUnit: (name) => call('StopUnit', 'ss', [name, 'replace']),
  };
}
