// Certificate files in the kubelet's cert dir (--cert-dir, default ROOT/pki), in
// upstream's layout: PREFIX-<timestamp>.pem holding certificate and key, and
// PREFIX-current.pem, a symlink switched atomically to the newest.
import { existsSync, readFileSync, renameSync, symlinkSync, unlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { join, basename } from 'node:path';

export function currentPath(certDir: string, prefix: string): string {
  return join(certDir, `${prefix}-current.pem`);
}

/** Reads PREFIX-current.pem: certificate(s) and key, or undefined when absent. */
export function loadCurrent(certDir: string, prefix: string): { pem: string; path: string } | undefined {
  const path = currentPath(certDir, prefix);
  if (!existsSync(path)) return undefined;
  return { pem: readFileSync(path, 'utf8'), path };
}

/** Writes a new PREFIX-<timestamp>.pem and points PREFIX-current.pem at it. */
export function storeCurrent(certDir: string, prefix: string, certPem: string, keyPem: string, now = new Date()): string {
  mkdirSync(certDir, { recursive: true, mode: 0o700 });
  const stamp = now
    .toISOString()
    .replace(/\.\d+Z$/, '')
    .replace(/[T:]/g, '-');
  const file = join(certDir, `${prefix}-${stamp}.pem`);
  writeFileSync(file, certPem.trimEnd() + '\n' + keyPem.trimEnd() + '\n', { mode: 0o600 });
  const link = currentPath(certDir, prefix);
  const tmp = `${link}.tmp`;
  try {
    unlinkSync(tmp);
  } catch {
    /* none */
  }
  symlinkSync(basename(file), tmp);
  renameSync(tmp, link);
  return link;
}
