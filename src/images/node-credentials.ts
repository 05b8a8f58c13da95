// Node-wide registry credentials: the docker config files upstream's default keyring reads
// (credentialprovider/config.go ReadDockerConfigFile, provider.go NewDefaultDockerKeyring),
// used for every pull after the pod's own secrets and before the credential providers.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import type { Logger } from '../log/log.ts';
import { type Keyring, keyringOf, parseDockerConfigFile } from './keyring.ts';

/**
 * The files in upstream's order: config.json in the kubelet's root dir (SetPreferredDockercfgPath),
 * the working dir, ~/.docker and /.docker; only when none is valid, .dockercfg in the root dir,
 * the working dir, ~ and /.
 */
export function dockerConfigPaths(rootDir: string, cwd: string, home: string): { path: string; kind: 'config.json' | '.dockercfg' }[] {
  // filepath.Abs of "" + name is the working dir's file; an unset home dir reads as "" too.
  const abs = (dir: string, name: string) => resolve(cwd, dir, name);
  return [
    ...[rootDir, '', home ? `${home}/.docker` : '.docker', '/.docker'].map((d) => ({
      path: abs(d, 'config.json'),
      kind: 'config.json' as const,
    })),
    ...[rootDir, '', home, '/'].map((d) => ({ path: abs(d, '.dockercfg'), kind: '.dockercfg' as const })),
  ];
}

/**
 * The first valid file's keyring (upstream's ReadDockerConfigJSONFile then ReadDockercfgFile):
 * a missing, unreadable or malformed file is skipped; none gives an empty keyring.
 */
export function readNodeKeyring(
  paths: readonly { path: string; kind: 'config.json' | '.dockercfg' }[],
  read: (path: string) => string = (p) => readFileSync(p, 'utf8'),
  log?: Logger,
): { keyring: Keyring; path?: string } {
  for (const { path, kind } of paths) {
    let text: string;
    try {
      text = read(path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
        log?.v(4, 'Cannot read a docker config file', { path, err: (e as Error).message });
      continue;
    }
    try {
      const keyring = keyringOf([{ where: path, config: parseDockerConfigFile(text, kind, path) }]);
      log?.v(4, 'Found a docker config file', { path });
      return { keyring, path };
    } catch (e) {
      log?.v(4, "Couldn't get the config from a docker config file", { path, err: (e as Error).message });
    }
  }
  return { keyring: [] };
}

// Upstream's CachingDockerConfigProvider lifetime: the files are read again at most every 5 minutes.
const LIFETIME_MS = 5 * 60_000;

/** The node keyring, read when first needed and again once 5 minutes have passed. */
export class NodeKeyring {
  readonly #paths: ReturnType<typeof dockerConfigPaths>;
  readonly #read: ((path: string) => string) | undefined;
  readonly #now: () => number;
  readonly #log: Logger | undefined;
  #cached: Keyring = [];
  #expires = Number.NEGATIVE_INFINITY;

  constructor(o: { rootDir: string; cwd?: string; home?: string; read?: (path: string) => string; now?: () => number; log?: Logger }) {
    this.#paths = dockerConfigPaths(o.rootDir, o.cwd ?? process.cwd(), o.home ?? homedirOrEmpty());
    this.#read = o.read;
    this.#now = o.now ?? Date.now;
    this.#log = o.log;
  }

  get(): Keyring {
    const now = this.#now();
    if (now < this.#expires) return this.#cached;
    this.#cached = readNodeKeyring(this.#paths, this.#read, this.#log).keyring;
    this.#expires = now + LIFETIME_MS;
    return this.#cached;
  }
}

function homedirOrEmpty(): string {
  try {
    return homedir();
  } catch {
    return '';
  }
}
