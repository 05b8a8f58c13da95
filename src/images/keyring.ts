// Registry credentials from a pod's image pull secrets, and which of them apply to an
// image: upstream's credentialprovider keyring (keyring.go, config.go, secrets/secrets.go).
import { createHash } from 'node:crypto';
import type { Secret } from 'kubernetes-types/core/v1.js';

/** One credential in the shape of the CRI AuthConfig that PullImage takes. */
export interface RegistryAuth {
  username?: string;
  password?: string;
  auth?: string;
  serverAddress?: string;
  identityToken?: string;
  registryToken?: string;
}

/** Registry keys (host[:port][/path], host parts may be globs), most specific first. */
export type Keyring = readonly { key: string; auths: readonly RegistryAuth[] }[];

const DOCKER_CONFIG_JSON = 'kubernetes.io/dockerconfigjson';
const DOCKERCFG = 'kubernetes.io/dockercfg';
const DEFAULT_REGISTRY_HOST = 'index.docker.io';

/**
 * Builds the keyring from the secrets of type kubernetes.io/dockerconfigjson and
 * kubernetes.io/dockercfg (others are ignored). Throws on a malformed one: upstream then
 * fails the pull with that error rather than pull without the credentials the user meant.
 * Entries whose key does not parse are skipped, as upstream logs and skips them.
 */
export function makeKeyring(secrets: readonly Secret[]): Keyring {
  const sources: DockerConfigSource[] = [];
  for (const s of secrets) {
    const config = dockerConfigOf(s);
    if (!config) continue;
    const secret = { uid: s.metadata?.uid ?? '', namespace: s.metadata?.namespace ?? '', name: s.metadata?.name ?? '' };
    sources.push({ where: `secret ${s.metadata?.namespace}/${s.metadata?.name}`, config, source: { secret } });
  }
  return keyringOf(sources);
}

/**
 * Whose credentials these are (upstream's CredentialSource), for the pulled-image records
 * (src/images/pulled): a pod's secret, or the service account a credential provider was given
 * the token of. None: node-wide (the node's docker config, a provider without token mode).
 */
export interface CredentialSource {
  secret?: { uid: string; namespace: string; name: string };
  serviceAccount?: { uid: string; namespace: string; name: string };
}

/** One docker config ({registry: entry}), where it came from for error messages, and whose it is. */
export interface DockerConfigSource {
  where: string;
  config: Record<string, unknown>;
  source?: CredentialSource;
}

/** A keyring credential's source and hash (upstream's TrackedAuthConfig beside its AuthConfig). */
export interface Tracking {
  source?: CredentialSource;
  /** Upstream's hashAuthConfig: hex sha256 of the entry's username, password and email as Go's JSON. */
  hash: string;
}

// Kept beside the credentials rather than in them: the credentials go to the CRI as they are.
const tracking = new WeakMap<RegistryAuth, Tracking>();

/** The source and hash of a credential a keyring lookup returned; undefined for one made elsewhere. */
export function trackingOf(auth: RegistryAuth): Tracking | undefined {
  return tracking.get(auth);
}

/** Pure: upstream's hashAuthConfig over the AuthConfig its keyring makes of an entry (username, password, email; omitempty). */
export function credentialHash(username: string, password: string, email: string): string {
  const json = JSON.stringify({
    ...(username ? { username } : {}),
    ...(password ? { password } : {}),
    ...(email ? { email } : {}),
  }).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return createHash('sha256').update(json).digest('hex');
}

/**
 * Upstream's BasicDockerKeyring.Add over several configs: entries indexed by registryKey
 * (keys that do not parse are skipped, as upstream logs and skips them). Throws on a
 * malformed entry.
 */
export function keyringOf(sources: readonly DockerConfigSource[]): Keyring {
  const byKey = new Map<string, RegistryAuth[]>();
  for (const { where, config, source } of sources) {
    for (const [loc, entry] of Object.entries(config)) {
      const key = registryKey(loc);
      if (key === undefined) continue;
      const auth = parseEntry(entry, where, loc);
      const email = fieldOf(entry as Record<string, unknown>, 'email');
      tracking.set(auth, {
        ...(source ? { source } : {}),
        hash: credentialHash(auth.username ?? '', auth.password ?? '', typeof email === 'string' ? email : ''),
      });
      byKey.set(key, [...(byKey.get(key) ?? []), auth]);
    }
  }
  // Reverse byte order puts "quay.io/coreos" before "quay.io" and a literal host before a
  // glob on the same suffix ("*" sorts low), so the most specific credentials are tried first.
  return [...byKey.keys()]
    .sort(byBytes)
    .reverse()
    .map((key) => ({ key, auths: byKey.get(key)! }));
}

/**
 * A config.json's "auths" (upstream's readDockerConfigJSONFileFromBytes) or a .dockercfg's
 * whole object (ReadDockerConfigFileFromBytes); throws when it is not such JSON.
 */
export function parseDockerConfigFile(text: string, kind: 'config.json' | '.dockercfg', where: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${where}: error occurred while trying to unmarshal json`);
  }
  const config = kind === 'config.json' ? fieldOf(asObject(parsed, where), 'auths') : parsed;
  if (config === undefined || config === null) return {};
  return asObject(config, where);
}

/** The credentials to try for an image, in order; empty when none match (pull anonymously). */
export function lookup(keyring: Keyring, image: string): RegistryAuth[] {
  const repo = repositoryOf(image);
  const matched = keyring.filter((k) => urlsMatch(k.key, repo)).flatMap((k) => k.auths);
  if (matched.length) return matched;
  // Docker Hub credentials are conventionally stored under https://index.docker.io/v1/,
  // while images name it docker.io: the fallback that makes them meet.
  if (isDefaultRegistry(repo)) return [...(keyring.find((k) => k.key === DEFAULT_REGISTRY_HOST)?.auths ?? [])];
  return [];
}

/**
 * The image's repository as the docker reference library normalises it (no tag or
 * digest): "busybox" is "docker.io/library/busybox", index.docker.io is docker.io.
 */
export function repositoryOf(image: string): string {
  let name = image.split('@')[0]!;
  const lastSlash = name.lastIndexOf('/');
  const colon = name.lastIndexOf(':');
  if (colon > lastSlash) name = name.slice(0, colon);
  const i = name.indexOf('/');
  const first = i < 0 ? '' : name.slice(0, i);
  const hasDomain = i >= 0 && (/[.:]/.test(first) || first === 'localhost' || first.toLowerCase() !== first);
  let domain = hasDomain ? first : 'docker.io';
  let rest = hasDomain ? name.slice(i + 1) : name;
  if (domain === 'index.docker.io') domain = 'docker.io';
  if (domain === 'docker.io' && !rest.includes('/')) rest = `library/${rest}`;
  return `${domain}/${rest}`;
}

function dockerConfigOf(s: Secret): Record<string, unknown> | undefined {
  const field = s.type === DOCKER_CONFIG_JSON ? '.dockerconfigjson' : s.type === DOCKERCFG ? '.dockercfg' : undefined;
  const data = field ? s.data?.[field] : undefined;
  if (!field || !data) return undefined;
  const where = `secret ${s.metadata?.namespace}/${s.metadata?.name}`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(data, 'base64').toString('utf8'));
  } catch (e) {
    throw new Error(`${where}: ${field} is not valid JSON: ${(e as Error).message}`);
  }
  const config = field === '.dockerconfigjson' ? fieldOf(asObject(parsed, where), 'auths') : parsed;
  if (config === undefined || config === null) return {};
  return asObject(config, where);
}

function asObject(v: unknown, where: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`${where}: expected a JSON object`);
  return v as Record<string, unknown>;
}

// Go's encoding/json matches struct fields case-insensitively, so "Username" counts too.
function fieldOf(o: Record<string, unknown>, name: string): unknown {
  let found: unknown;
  for (const [k, v] of Object.entries(o)) if (k.toLowerCase() === name) found = v;
  return found;
}

function parseEntry(entry: unknown, source: string, loc: string): RegistryAuth {
  const where = `${source}, registry ${JSON.stringify(loc)}`;
  const o = asObject(entry, where);
  const str = (name: string): string => {
    const v = fieldOf(o, name);
    if (v === undefined || v === null) return '';
    if (typeof v !== 'string') throw new Error(`${where}: ${name} must be a string`);
    return v;
  };
  let username = str('username');
  let password = str('password');
  const auth = str('auth');
  // As upstream, "auth" (base64 user:password) wins over username/password and is sent decoded.
  if (auth) [username, password] = decodeAuthField(auth, where);
  const out: RegistryAuth = {};
  if (username) out.username = username;
  if (password) out.password = password;
  // Upstream's keyring drops these two; they are kept so that token-only entries reach the
  // runtime (containerd uses identitytoken as an OAuth refresh token).
  const identityToken = str('identitytoken');
  const registryToken = str('registrytoken');
  if (identityToken) out.identityToken = identityToken;
  if (registryToken) out.registryToken = registryToken;
  return out;
}

// Go decodes a length multiple of 4 as padded base64, any other length as unpadded.
function decodeAuthField(field: string, where: string): [string, string] {
  const s = field.replace(/[\r\n]/g, '');
  const ok =
    s.length % 4 === 0
      ? /^[A-Za-z0-9+/]*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s)
      : /^[A-Za-z0-9+/]*$/.test(s) && s.length % 4 !== 1;
  if (!ok) throw new Error(`${where}: auth is not valid base64`);
  const decoded = Buffer.from(s, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw new Error(`${where}: unable to parse auth field`);
  return [decoded.slice(0, colon), decoded.slice(colon + 1)];
}

/**
 * A config key as upstream indexes it: scheme dropped, host[:port] plus path, where a
 * /v1/ or /v2/ path prefix means the host itself. Undefined for a key Go's url.Parse rejects.
 */
export function registryKey(loc: string): string | undefined {
  const u = parseSchemeless(loc.replace(/^https?:\/\//, ''));
  if (!u) return undefined;
  let path = u.path;
  if (path.startsWith('/v2/') || path.startsWith('/v1/')) path = path.slice(3);
  return path && path !== '/' ? u.host + path : u.host;
}

function parseSchemeless(s: string): { host: string; path: string } | undefined {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: a URL with control characters or spaces is refused, as Go's url.Parse does
  if (/[\x00-\x20\x7f]/.test(s)) return undefined;
  const rest = s.replace(/[?#].*$/, '');
  const slash = rest.indexOf('/');
  const authority = slash < 0 ? rest : rest.slice(0, slash);
  const host = authority.slice(authority.lastIndexOf('@') + 1);
  const port =
    /^\[[^\]]*\](?::(.*))?$/.exec(host)?.[1] ??
    (host.startsWith('[') ? undefined : host.includes(':') ? host.slice(host.lastIndexOf(':') + 1) : '');
  if (port === undefined || !/^\d*$/.test(port)) return undefined;
  return { host, path: slash < 0 ? '' : rest.slice(slash) };
}

// Go's net.SplitHostPort; a host without a (single) port is all host.
function splitHostPort(host: string): [string[], string] {
  const bracket = /^\[([^\]]*)\]:(\d*)$/.exec(host);
  if (bracket) return [bracket[1]!.split('.'), bracket[2]!];
  const colons = host.split(':').length - 1;
  if (colons === 1 && !host.startsWith('[')) {
    const [h, p] = host.split(':') as [string, string];
    return [h.split('.'), p];
  }
  return [host.split('.'), ''];
}

/**
 * Upstream's URLsMatch: same port, same number of host labels each matching its glob
 * (*.k8s.io, k8s.*.io, app*.io; a glob never spans a dot), and the key's path a string
 * prefix of the image's path. No globs in ports or paths.
 */
export function urlsMatch(key: string, target: string): boolean {
  const k = parseSchemeless(key);
  const t = parseSchemeless(target);
  if (!k || !t) return false;
  const [kParts, kPort] = splitHostPort(k.host);
  const [tParts, tPort] = splitHostPort(t.host);
  if (kPort !== tPort || kParts.length !== tParts.length || !t.path.startsWith(k.path)) return false;
  return kParts.every((glob, i) => globMatch(glob, tParts[i]!));
}

/** Upstream's isDefaultRegistryMatch, on a normalised repository. */
function isDefaultRegistry(repo: string): boolean {
  const slash = repo.indexOf('/');
  const first = slash < 0 ? repo : repo.slice(0, slash);
  if (!first) return false;
  if (slash < 0 || first === 'docker.io' || first === 'index.docker.io') return true;
  return !/[.:]/.test(first);
}

/** Go's filepath.Match on one host label: * and ? (not /), [classes], \ escapes; a bad pattern matches nothing. */
export function globMatch(pattern: string, name: string): boolean {
  let re = '^';
  let i = 0;
  // One possibly escaped character of a class; undefined for what Go calls ErrBadPattern.
  const classChar = (): string | undefined => {
    let c = pattern[i];
    if (c === undefined || c === '-' || c === ']') return undefined;
    if (c === '\\' && (c = pattern[++i]) === undefined) return undefined;
    i++;
    return i < pattern.length ? escapeRe(c) : undefined;
  };
  while (i < pattern.length) {
    const c = pattern[i++]!;
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '\\') {
      if (i >= pattern.length) return false;
      re += escapeRe(pattern[i++]!);
    } else if (c === '[') {
      let cls = '';
      if (pattern[i] === '^') {
        cls = '^/';
        i++;
      }
      for (let n = 0; pattern[i] !== ']' || n === 0; n++) {
        const lo = classChar();
        if (lo === undefined) return false;
        if (pattern[i] === '-') {
          i++;
          const hi = classChar();
          if (hi === undefined) return false;
          cls += `${lo}-${hi}`;
        } else cls += lo;
      }
      i++;
      re += `[${cls}]`;
    } else re += escapeRe(c);
  }
  try {
    return new RegExp(re + '$').test(name);
  } catch {
    return false;
  }
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
