// Wakes a log follower when something in the log's directory changes (a write, a
// rotation), and at least every pollMs anyway, as upstream polls every second in case an
// inotify event is missed.
import { watch, type FSWatcher } from 'node:fs';

export interface FileChanges {
  /** Resolves on the next change (at once if one came since the last wait), after ms, or on abort. */
  wait(ms: number, signal: AbortSignal): Promise<void>;
  close(): void;
}

export function fileChanges(dir: string): FileChanges {
  let changed = false;
  let wake: (() => void) | undefined;
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dir, () => {
      changed = true;
      wake?.();
    });
    watcher.on('error', () => watcher?.close()); // e.g. the directory was removed: polling remains
  } catch {
    /* not watchable: polling only */
  }
  return {
    wait(ms, signal) {
      if (changed || signal.aborted) {
        changed = false;
        return Promise.resolve();
      }
      return new Promise((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          wake = undefined;
          changed = false;
          resolve();
        };
        const timer = setTimeout(done, ms);
        signal.addEventListener('abort', done);
        wake = done;
      });
    },
    close: () => watcher?.close(),
  };
}
