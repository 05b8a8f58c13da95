// The records' files under <rootDir>/image_manager/{pulling,pulled}, as upstream's
// fsPullRecordsAccessor: one file per image or image ref, written to a .tmp file and renamed,
// files not named sha256-* (or ending .tmp) ignored. Synchronous: the files are small and a
// write then cannot interleave with a read of the same record.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../log/log.ts';
import {
  cacheFilename,
  decodeIntent,
  decodePulledRecord,
  encodeIntent,
  encodePulledRecord,
  type Decoded,
  type ImagePullIntent,
  type ImagePulledRecord,
} from './records.ts';

/** What the manager reads and writes; tests give a map. */
export interface PullRecords {
  writeIntent(image: string): void;
  intentExists(image: string): boolean;
  deleteIntent(image: string): void;
  listIntents(): ImagePullIntent[];
  /** Undefined when there is none (or it names another ref); throws when it cannot be read. */
  getPulled(imageRef: string): ImagePulledRecord | undefined;
  writePulled(r: ImagePulledRecord): void;
  deletePulled(imageRef: string): void;
  listPulled(): ImagePulledRecord[];
}

const isCacheFile = (name: string) => name.startsWith('sha256-') && !name.endsWith('.tmp');

/** The records' files on disk after each write or delete (upstream's meteringRecordsAccessor). */
export interface RecordsObserver {
  onDisk?(kind: 'pullintents' | 'pulledrecords', files: number): void;
}

export class FsPullRecords implements PullRecords {
  readonly pullingDir: string;
  readonly pulledDir: string;
  readonly #log: Logger | undefined;
  readonly #observe: RecordsObserver;

  /** Makes the directories (0700) and rewrites records of an older version, as upstream's NewFSPullRecordsAccessor. */
  constructor(rootDir: string, log?: Logger, observe: RecordsObserver = {}) {
    this.pullingDir = join(rootDir, 'image_manager', 'pulling');
    this.pulledDir = join(rootDir, 'image_manager', 'pulled');
    this.#log = log;
    this.#observe = observe;
    mkdirSync(this.pullingDir, { recursive: true, mode: 0o700 });
    mkdirSync(this.pulledDir, { recursive: true, mode: 0o700 });
    this.#migrate();
  }

  writeIntent(image: string) {
    writeAtomically(this.pullingDir, cacheFilename(image), encodeIntent({ image }));
    this.#counted('pullintents', this.pullingDir);
  }

  intentExists(image: string): boolean {
    const text = readIfExists(join(this.pullingDir, cacheFilename(image)));
    return text !== undefined && decodeIntent(text).value.image === image;
  }

  deleteIntent(image: string) {
    rmSync(join(this.pullingDir, cacheFilename(image)), { force: true });
    this.#counted('pullintents', this.pullingDir);
  }

  listIntents(): ImagePullIntent[] {
    return this.#each(this.pullingDir, decodeIntent, 'ImagePullIntent').map((d) => d.value);
  }

  getPulled(imageRef: string): ImagePulledRecord | undefined {
    const text = readIfExists(join(this.pulledDir, cacheFilename(imageRef)));
    if (text === undefined) return undefined;
    const r = decodePulledRecord(text).value;
    return r.imageRef === imageRef ? r : undefined;
  }

  writePulled(r: ImagePulledRecord) {
    writeAtomically(this.pulledDir, cacheFilename(r.imageRef), encodePulledRecord(r));
    this.#counted('pulledrecords', this.pulledDir);
  }

  deletePulled(imageRef: string) {
    rmSync(join(this.pulledDir, cacheFilename(imageRef)), { force: true });
    this.#counted('pulledrecords', this.pulledDir);
  }

  // upstream's countCacheFiles: a count that cannot be read is left as it was.
  #counted(kind: 'pullintents' | 'pulledrecords', dir: string) {
    if (!this.#observe.onDisk) return;
    try {
      this.#observe.onDisk(kind, readdirSync(dir, { withFileTypes: true }).filter((e) => e.isFile() && isCacheFile(e.name)).length);
    } catch (e) {
      this.#log?.v(4, 'Failed to count the records, cannot update the metric', { dir, err: e });
    }
  }

  listPulled(): ImagePulledRecord[] {
    return this.#each(this.pulledDir, decodePulledRecord, 'ImagePulledRecord').map((d) => d.value);
  }

  // A file that cannot be read or decoded is logged and skipped, as upstream's processDirFiles
  // goes on with an incomplete list.
  #each<T>(dir: string, decode: (text: string) => Decoded<T>, kind: string): (Decoded<T> & { file: string })[] {
    const out: (Decoded<T> & { file: string })[] = [];
    let names: string[];
    try {
      names = readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.isFile() && isCacheFile(e.name))
        .map((e) => e.name);
    } catch (e) {
      this.#log?.error(`Failed to list ${kind} files`, { dir, err: e });
      return out;
    }
    for (const name of names) {
      const file = join(dir, name);
      try {
        out.push({ ...decode(readFileSync(file, 'utf8')), file });
      } catch (e) {
        this.#log?.error(`Failed to decode ${kind} file`, { file, err: (e as Error).message });
      }
    }
    return out;
  }

  // upstream's recordsVersionMigration: files of an older version are rewritten in the current one.
  #migrate() {
    for (const d of this.#each(this.pullingDir, decodeIntent, 'ImagePullIntent')) if (!d.current) this.writeIntent(d.value.image);
    for (const d of this.#each(this.pulledDir, decodePulledRecord, 'ImagePulledRecord')) if (!d.current) this.writePulled(d.value);
  }
}

function readIfExists(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

// Upstream's writeFile: a .tmp file (0600) renamed over the target.
function writeAtomically(dir: string, name: string, text: string) {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const target = join(dir, name);
  const tmp = `${target}.tmp`;
  try {
    writeFileSync(tmp, text, { mode: 0o600 });
    renameSync(tmp, target);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}
