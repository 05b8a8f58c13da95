// ROOT/graceful_node_shutdown_state (upstream's storage.go): when the last graceful shutdown
// began and ended, as JSON with Go's time encoding, written whole through a rename. Read at
// start so the start/end time metrics survive the reboot.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';

export const STATE_FILE = 'graceful_node_shutdown_state';
/** Go's zero time.Time as JSON writes it. */
const GO_ZERO_TIME = '0001-01-01T00:00:00Z';

export interface ShutdownState {
  startTime?: Date;
  endTime?: Date;
}

/** Go's RFC3339Nano for a UTC time: fractional seconds without trailing zeros. */
export function goTime(d: Date | undefined): string {
  if (!d) return GO_ZERO_TIME;
  return d.toISOString().replace(/\.(\d*?)0*Z$/, (_, f: string) => (f ? `.${f}Z` : 'Z'));
}

const parseGoTime = (v: unknown): Date | undefined => {
  if (typeof v !== 'string') return undefined;
  const d = new Date(v);
  // Go's zero time (year 1) is "never".
  return Number.isNaN(d.getTime()) || d.getUTCFullYear() <= 1 ? undefined : d;
};

export const encodeState = (s: ShutdownState) => JSON.stringify({ startTime: goTime(s.startTime), endTime: goTime(s.endTime) });

export function decodeState(text: string): ShutdownState {
  const raw = JSON.parse(text) as Record<string, unknown>;
  return { startTime: parseGoTime(raw.startTime), endTime: parseGoTime(raw.endTime) };
}

export interface StateStore {
  load(): ShutdownState;
  store(s: ShutdownState): void;
}

export function stateFile(rootDir: string): StateStore {
  const path = join(rootDir, STATE_FILE);
  return {
    load() {
      try {
        return decodeState(readFileSync(path, 'utf8'));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return {};
        throw e;
      }
    },
    store(s) {
      mkdirSync(dirname(path), { recursive: true });
      const tmp = join(dirname(path), `.tmp-${basename(path)}${randomBytes(4).toString('hex')}`);
      writeFileSync(tmp, encodeState(s), { mode: 0o644, flush: true });
      renameSync(tmp, path);
    },
  };
}
