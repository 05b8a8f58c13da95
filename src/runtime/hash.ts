// A container's spec hash, stored as a label so a changed spec is noticed after a
// kubelet restart. Only fields that require a new container when changed count.
import { createHash } from 'node:crypto';
import type { Container } from 'kubernetes-types/core/v1.js';

export function containerHash(c: Container): string {
  const { name, image, command, args, workingDir, ports, env, envFrom, volumeMounts, securityContext, stdin, tty } = c;
  const text = JSON.stringify({ name, image, command, args, workingDir, ports, env, envFrom, volumeMounts, securityContext, stdin, tty });
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}
