// The edge of EnvFiles: reads the files a container's fileKeyRefs name, from the host
// directories of the pod's volumes, when the container is about to be created (as
// upstream's makeEnvironmentVariables does each time). What the values mean, and which
// failures are errors, is decided in makeEnvironment (env.ts).
import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import type { Logger } from '../log/log.ts';
import { goQuote } from '../log/go-quote.ts';
import { goSyscallError, secureJoin } from '../volumes/secure-join.ts';
import { type FileKeyRead, type ParseResult, fileKeyId, fileKeyRefs, parseEnv, scanLines } from './env-file.ts';
import type { EnvSource } from './env-sources.ts';
import { featureEnabled } from '../features/gates.ts';
import { podKey } from '../podutil/podutil.ts';

/** The host directory of a pod's volume as set up (the volume manager's), or undefined. */
export type VolumeHostPath = (podUID: string, volumeName: string) => string | undefined;

async function* chunks(fh: FileHandle, file: string): AsyncGenerator<Uint8Array> {
  const buf = Buffer.alloc(64 * 1024);
  for (;;) {
    let n: number;
    try {
      ({ bytesRead: n } = await fh.read(buf, 0, buf.length, null));
    } catch (e) {
      throw new Error(goSyscallError('read', file, e));
    }
    if (n === 0) return;
    yield Buffer.from(buf.subarray(0, n));
  }
}

/**
 * ParseEnv(file, key), reading no further than the key. Non-blocking open: a FIFO a pod
 * left in its volume reads as empty instead of holding the kubelet (upstream's open
 * would wait for a writer).
 */
export async function readFileKey(file: string, key: string): Promise<ParseResult> {
  let fh: FileHandle;
  try {
    fh = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    return { error: `failed to open environment variable file ${goQuote(file)}: ${goSyscallError('open', file, e)}` };
  }
  try {
    return await parseEnv(scanLines(chunks(fh, file)), key, file);
  } finally {
    await fh.close().catch(() => {});
  }
}

/** Every fileKeyRef of the container, read: by fileKeyId. */
export async function readFileKeys(pod: Pod, c: Container, hostPath: VolumeHostPath, log?: Logger): Promise<Map<string, FileKeyRead>> {
  const uid = pod.metadata?.uid ?? '';
  const refs = new Map(fileKeyRefs(c).map((f) => [fileKeyId(f), f]));
  const reads = await Promise.all(
    [...refs].map(async ([id, f]): Promise<[string, FileKeyRead]> => {
      const dir = hostPath(uid, f.volumeName);
      if (dir === undefined) return [id, { noVolume: true }];
      let path: string;
      try {
        path = await secureJoin(dir, f.path);
      } catch (e) {
        return [id, { error: (e as Error).message }];
      }
      const r = await readFileKey(path, f.key);
      if ('value' in r) return [id, { path, value: r.value }];
      log?.error('Failed to parse env file', { pod: podKey(pod), err: r.error });
      return [id, { path, parseError: r.error }];
    }),
  );
  return new Map(reads);
}

/**
 * The source with the container's env files read too, unless featureGates turn EnvFiles (beta, on
 * by default) off: then the source as it is, and fileKeyRef ignored (upstream's
 * makeEnvironmentVariables reads it only when the gate is enabled).
 */
export function withEnvFiles(source: EnvSource, hostPath: VolumeHostPath, featureGates: Record<string, boolean>, log?: Logger): EnvSource {
  if (!featureEnabled(featureGates, 'EnvFiles')) return source;
  return {
    session() {
      const reads = source.session();
      return async (pod, c) => {
        const [objects, fileKeys] = await Promise.all([reads(pod, c), readFileKeys(pod, c, hostPath, log)]);
        return { ...objects, fileKeys };
      };
    },
  };
}
