// The sockets under <root-dir>/plugins_registry (upstream's pluginwatcher traversePluginDir and
// handleCreateEvent): the tree is walked, names starting with "." are skipped, and only unix
// sockets count. The directories are returned too, to be watched.
import { type Dirent, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

export interface SocketScan {
  /** Socket path -> the file's identity: a socket removed and created again gets a new one. */
  sockets: Map<string, string>;
  dirs: string[];
}

/** Throws when root cannot be read; anything below that vanishes meanwhile is skipped. */
export function scanSockets(root: string): SocketScan {
  const scan: SocketScan = { sockets: new Map(), dirs: [] };
  const walk = (dir: string) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch (e) {
      if (dir === root) throw e;
      return;
    }
    scan.dirs.push(dir);
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (e.name.startsWith('.')) continue;
      const path = join(dir, e.name);
      // As upstream, a symlink to a socket counts (stat follows it); a symlinked directory is not walked.
      const st = statSync(path, { bigint: true, throwIfNoEntry: false });
      if (!st) continue;
      if (st.isDirectory()) {
        if (!e.isSymbolicLink()) walk(path);
      } else if (st.isSocket()) scan.sockets.set(path, `${st.dev}:${st.ino}:${st.mtimeNs}`);
    }
  };
  walk(root);
  return scan;
}
