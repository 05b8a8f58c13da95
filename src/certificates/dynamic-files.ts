// Certificate files the kubelet reloads when an operator (or cert-manager, or a node agent)
// replaces them: upstream's dynamiccertificates.DynamicCertKeyPairContent (the serving
// certificate and key, ReloadKubeletServerCertificateFile) and DynamicFileCAContent (the client
// CA bundle). Like them it watches the files' directories for a change and reads them again
// every minute anyway (FileRefreshDuration), hands on only content that parses, and keeps the
// last good content when a new one does not (a half-written file, a key that is not the
// certificate's).
import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { jittered } from '../backoff/backoff.ts';
import type { Logger } from '../log/log.ts';

export interface DynamicFilesOptions<T> {
  /** Upstream's content name, in the log lines ("kubelet-server-cert-files", "client-ca-bundle"). */
  name: string;
  files: readonly string[];
  /** The files' contents into what the listener takes; throws when they are not valid. */
  parse(contents: string[]): T;
  onChange(value: T): void;
  log: Logger;
  /** Upstream's FileRefreshDuration. */
  periodMs?: number;
}

export interface DynamicFiles {
  /** Reads the files now; true when they changed and were taken. */
  check(): boolean;
  stop(): void;
}

/** Starts watching; the first content was read by the caller (a start with unreadable files fails there). */
export function dynamicFiles<T>(o: DynamicFilesOptions<T>): DynamicFiles {
  let last = read(o.files);
  const check = (): boolean => {
    let contents: string[];
    try {
      contents = o.files.map((f) => readFileSync(f, 'utf8'));
    } catch (e) {
      // (A file between its removal and its rename into place: the next event or period reads it.)
      o.log.v(2, 'Cannot read certificate file; keeping the last content', { name: o.name, err: e });
      return false;
    }
    if (!changed(last, contents)) return false;
    let value: T;
    try {
      value = o.parse(contents);
    } catch (e) {
      o.log.error('Invalid certificate content; keeping the last one', { name: o.name, err: e });
      last = contents; // (Not again every minute: the next change is read.)
      return false;
    }
    last = contents;
    o.onChange(value);
    o.log.v(2, o.files.length > 1 ? 'Loaded a new cert/key pair' : 'Loaded a new CA Bundle and Verifier', { name: o.name });
    return true;
  };
  // A replaced file (renamed over, or a symlink swapped as Secrets and cert-manager do) is an
  // event on its directory, not on the file's old inode.
  let timer: NodeJS.Timeout | undefined;
  const soon = () => {
    clearTimeout(timer);
    timer = setTimeout(check, 200);
  };
  const names = new Set(o.files.map((f) => basename(f)));
  const watchers: FSWatcher[] = [];
  for (const dir of new Set(o.files.map((f) => dirname(f)))) {
    try {
      const w = watch(dir, (_e, name) => (!name || names.has(name) || name.startsWith('..') ? soon() : undefined));
      w.on('error', () => w.close()); // (The period remains.)
      watchers.push(w);
    } catch {
      /* not watchable: the period alone */
    }
  }
  let period: NodeJS.Timeout;
  const every = () => {
    check();
    period = setTimeout(every, jittered(o.periodMs ?? 60_000, 0.1));
    period.unref();
  };
  period = setTimeout(every, jittered(o.periodMs ?? 60_000, 0.1));
  period.unref();
  return {
    check,
    stop() {
      clearTimeout(timer);
      clearTimeout(period);
      for (const w of watchers) w.close();
    },
  };
}

function read(files: readonly string[]): string[] | undefined {
  try {
    return files.map((f) => readFileSync(f, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Whether the files' contents differ from the last ones taken (upstream compares the bytes too). */
export function changed(last: readonly string[] | undefined, now: readonly string[]): boolean {
  return !last || last.length !== now.length || last.some((c, i) => c !== now[i]);
}
