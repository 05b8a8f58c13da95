// Pods' user namespaces on this node, as upstream's UsernsManager (pkg/kubelet/userns): the
// kubelet's ID range from /etc at start, each hostUsers: false pod's IDs (userNamespaces.idsPerPod) kept in
// ROOT/pods/UID/userns (upstream's path and JSON, so either kubelet reads the other's), the
// allocations rebuilt from those files at start, released when the pod is terminated or its
// directory goes. The decisions are in id-range.ts, allocator.ts and mappings.ts; this is the I/O.
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { UserNamespace } from '../cri/generated/runtime/v1/UserNamespace.ts';
import type { Logger } from '../log/log.ts';
import { podUsernsMappingsPath, podsDir } from '../podutil/pod-dirs.ts';
import { UsernsAllocator } from './allocator.ts';
import { allocatorSlots, IDS_PER_POD, kubeletIdRange } from './id-range.ts';
import {
  type HandlerFeatures,
  mappingsFileContent,
  NODE_USER_NAMESPACE,
  parseMappingsFile,
  podUserNamespace,
  userNamespacesRefusal,
  wantsUserNamespace,
} from './mappings.ts';

/** The runtime handler a pod's sandbox runs with, and the handlers CRI Status lists. */
export type HandlerLookup = () => Promise<{ handler: string; handlers: readonly HandlerFeatures[] }>;

const readIfThere = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
};

/** upstream's FileStore.Write and the fsync of the directory after it: the file is whole, and there after a crash. */
function writeDurably(path: string, text: string): void {
  const dir = dirname(path),
    name = basename(path);
  mkdirSync(dir, { recursive: true, mode: 0o750 });
  const tmp = join(dir, `.${name}.tmp`);
  try {
    const fd = openSync(tmp, 'w', 0o644);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, join(dir, name));
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
  const d = openSync(dir, 'r');
  try {
    fsyncSync(d);
  } finally {
    closeSync(d);
  }
}

export class UserNamespaces {
  readonly #rootDir: string;
  readonly #allocator: UsernsAllocator;
  readonly #log: Logger;
  readonly #idsPerPod: number;

  private constructor(rootDir: string, allocator: UsernsAllocator, log: Logger, idsPerPod: number) {
    this.#rootDir = rootDir;
    this.#allocator = allocator;
    this.#log = log;
    this.#idsPerPod = idsPerPod;
  }

  /**
   * MakeUserNsManager: the kubelet's range from etcDir's passwd, subuid and subgid, checked against
   * maxPods, and every pod directory's userns file recorded. Throws as upstream fails the kubelet's
   * start ("create user namespace manager: ..."). idsPerPod: userNamespaces.idsPerPod (unset: 65536).
   * random: the allocator's, for tests.
   */
  static load(d: {
    rootDir: string;
    maxPods: number;
    log: Logger;
    idsPerPod?: number;
    etcDir?: string;
    random?: () => number;
  }): UserNamespaces {
    const etc = d.etcDir ?? '/etc';
    const idsPerPod = d.idsPerPod ?? IDS_PER_POD;
    try {
      let range: ReturnType<typeof kubeletIdRange>;
      try {
        range = kubeletIdRange(
          {
            passwd: readIfThere(join(etc, 'passwd')),
            subuid: readIfThere(join(etc, 'subuid')),
            subgid: readIfThere(join(etc, 'subgid')),
          },
          idsPerPod,
        );
      } catch (e) {
        throw new Error(`kubelet mappings: ${(e as Error).message}`);
      }
      const slots = allocatorSlots(range, d.maxPods, idsPerPod);
      d.log.v(5, 'User namespace manager mapping', { offset: slots.offset, length: slots.count, idsPerPod });
      const m = new UserNamespaces(d.rootDir, new UsernsAllocator(slots, d.random), d.log, idsPerPod);
      for (const uid of m.#podsOnDisk()) {
        try {
          m.#recordFromFile(uid);
        } catch (e) {
          throw new Error(`record pod mappings for existing pod "${uid}": ${(e as Error).message}`);
        }
      }
      return m;
    } catch (e) {
      throw new Error(`create user namespace manager: ${(e as Error).message}`);
    }
  }

  /**
   * GetOrCreateUserNamespaceMappings, for the sandbox's and the containers' namespace options: the
   * node's user namespace, or for hostUsers: false the pod's own range, allocated and written on
   * first use. Throws with upstream's words when the handler lacks user namespaces or the range is
   * exhausted. The handler is asked before a range is allocated; a pod that holds one keeps it.
   */
  async forPod(pod: Pod, lookup: HandlerLookup): Promise<UserNamespace> {
    if (!wantsUserNamespace(pod)) return NODE_USER_NAMESPACE;
    const uid = pod.metadata!.uid!;
    let firstID = this.#allocator.get(uid);
    if (firstID === undefined) {
      const { handler, handlers } = await lookup();
      const refused = userNamespacesRefusal(handler, handlers);
      if (refused) throw new Error(refused);
      firstID = this.#create(uid);
    }
    return podUserNamespace(firstID, this.#idsPerPod);
  }

  /** Release: the pod's range is free again and its file removed; nothing when it has none. */
  release(uid: string): void {
    if (!this.#allocator.release(uid)) return;
    rmSync(podUsernsMappingsPath(this.#rootDir, uid), { force: true });
    this.#log.v(5, 'Released pod user namespace allocation', { podUID: uid });
  }

  /** createUserNs: a free range, written to the pod's file; released again if it cannot be written. */
  #create(uid: string): number {
    let firstID: number;
    try {
      firstID = this.#allocator.allocate(uid);
      writeDurably(podUsernsMappingsPath(this.#rootDir, uid), mappingsFileContent(firstID, this.#idsPerPod));
    } catch (e) {
      this.release(uid);
      throw new Error(`create user namespace: ${(e as Error).message}`);
    }
    this.#log.v(5, 'New pod user namespace allocation', { podUID: uid, firstID });
    return firstID;
  }

  /** recordPodMappings: the range in the pod's file, if it has one (an empty file is none). */
  #recordFromFile(uid: string): void {
    const text = readIfThere(podUsernsMappingsPath(this.#rootDir, uid));
    if (!text) return;
    const { hostId, length } = parseMappingsFile(text);
    this.#allocator.record(uid, hostId, length);
  }

  /** listPodsFromDisk: the directories under ROOT/pods (none when it does not exist yet). */
  #podsOnDisk(): string[] {
    try {
      return readdirSync(podsDir(this.#rootDir), { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw e;
    }
  }
}
