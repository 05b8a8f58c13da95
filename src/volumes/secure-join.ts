// SecureJoin (github.com/cyphar/filepath-securejoin v0.6.1, join.go SecureJoinVFS): a path
// under root joined so that, evaluated, it stays inside root. Symlinks met on the way are
// resolved as if root were "/" (an absolute target starts over at root, ".." stops at root),
// as upstream's kubelet joins a FileKeyRef's path to its volume. Like upstream, it says
// nothing of a symlink swapped in after it returns.
import { lstat, readlink } from 'node:fs/promises';
import { posix } from 'node:path';

/** What SecureJoin asks of the filesystem (tests give a fake). */
export interface JoinFs {
  /** 'symlink', 'other', or 'missing' (ENOENT, ENOTDIR); throws on any other failure. */
  kind(path: string): Promise<'symlink' | 'other' | 'missing'>;
  readlink(path: string): Promise<string>;
}

/** consts.MaxSymlinkLimit */
export const MAX_SYMLINKS = 255;

/** Go's filepath.Join: cleaned, no trailing slash but for "/". */
const join = (...parts: string[]) => {
  const p = posix.join(...parts);
  return p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p;
};

/** Go's (the C library's) texts where libuv words them otherwise. */
const strerror: Record<string, string> = {
  EISDIR: 'is a directory',
  ELOOP: 'too many levels of symbolic links',
  ENAMETOOLONG: 'file name too long',
};

/** Go's error text for a failed system call: "lstat /p: permission denied". */
export function goSyscallError(op: string, path: string, e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  // Node: "EACCES: permission denied, lstat '/p'"; the middle is libuv's text.
  const text =
    (err.code ? strerror[err.code] : undefined) ??
    (err.code && err.message?.startsWith(`${err.code}: `)
      ? err.message.slice(err.code.length + 2).replace(/, \w+( '.*)?$/s, '')
      : err.message);
  return `${op} ${path}: ${text}`;
}

export const osJoinFs: JoinFs = {
  async kind(path) {
    try {
      return (await lstat(path)).isSymbolicLink() ? 'symlink' : 'other';
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return 'missing';
      throw new Error(goSyscallError('lstat', path, e));
    }
  },
  async readlink(path) {
    try {
      return await readlink(path);
    } catch (e) {
      throw new Error(goSyscallError('readlink', path, e));
    }
  },
};

/** root/unsafePath, each symlink on the way resolved inside root. Throws with upstream's messages. */
export async function secureJoin(root: string, unsafePath: string, fs: JoinFs = osJoinFs): Promise<string> {
  if (`/${root}/`.includes('/../')) throw new Error("root path provided to SecureJoin contains '..' components");
  let current = '';
  let remaining = unsafePath;
  let links = 0;
  while (remaining !== '') {
    const slash = remaining.indexOf('/');
    const part = slash < 0 ? remaining : remaining.slice(0, slash);
    remaining = slash < 0 ? '' : remaining.slice(slash + 1);
    // current holds no symlink and part is one component: lexical cleaning is safe here.
    const next = join('/', current, part);
    if (next === '/') {
      current = '';
      continue;
    }
    const full = `${root}/${next}`;
    // A missing component is taken as it is written (nothing better can be done).
    if ((await fs.kind(full)) !== 'symlink') {
      current = next;
      continue;
    }
    if (++links > MAX_SYMLINKS) throw new Error(`SecureJoin ${root}/${unsafePath}: too many levels of symbolic links`);
    const dest = await fs.readlink(full);
    remaining = `${dest}/${remaining}`;
    // An absolute target starts over at root.
    if (dest.startsWith('/')) current = '';
  }
  return join(root, join('/', current));
}
