// hostPath volumes: upstream's type checks, with its error texts. The path is the
// volume; DirectoryOrCreate and FileOrCreate make it (0755 / 0644) when it is missing.
import { closeSync, mkdirSync, openSync, statSync, type Stats } from 'node:fs';
import type { HostPathVolumeSource } from 'kubernetes-types/core/v1.js';

function stat(p: string): Stats | undefined {
  try {
    return statSync(p);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** Sets up the hostPath volume; throws as upstream's SetUp does. */
export function setUpHostPath(src: HostPathVolumeSource): void {
  const path = src.path;
  if (path.split('/').includes('..')) throw new Error(`invalid HostPath \`${path}\`: must not contain '..'`);
  const type = src.type ?? '';
  if (type === '') return;
  const st = stat(path);
  if (type === 'DirectoryOrCreate' && !st) {
    mkdirSync(path, { recursive: true, mode: 0o755 });
    return;
  }
  if (type === 'FileOrCreate' && !st) {
    try {
      closeSync(openSync(path, 'a', 0o644));
    } catch (e) {
      throw new Error(
        `open ${path}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : (e as Error).message}`,
      );
    }
    return;
  }
  const check = checks[type];
  if (!check) throw new Error(`${type} is an invalid volume type`);
  if (!st || !check[0](st)) throw new Error(`hostPath type check failed: ${path} is not ${check[1]}`);
}

const checks: Record<string, [(s: Stats) => boolean, string]> = {
  DirectoryOrCreate: [(s) => s.isDirectory(), 'a directory'],
  Directory: [(s) => s.isDirectory(), 'a directory'],
  FileOrCreate: [(s) => s.isFile(), 'a file'],
  File: [(s) => s.isFile(), 'a file'],
  Socket: [(s) => s.isSocket(), 'a socket file'],
  CharDevice: [(s) => s.isCharacterDevice(), 'a character device'],
  BlockDevice: [(s) => s.isBlockDevice(), 'a block device'],
};
