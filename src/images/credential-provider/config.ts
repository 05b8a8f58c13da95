// The CredentialProviderConfig file of --image-credential-provider-config: decoded strictly and
// validated as upstream's plugin/config.go (readCredentialProviderConfig, decode,
// validateCredentialProviderConfig). Any error refuses the start, as upstream exits.
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { parseDocument } from 'yaml';
import { goDuration, parseDuration } from '../../apiserver/duration.ts';
import { parseSchemelessURL } from './match.ts';
import { qualifiedNameErrors } from '../../podutil/qualified-name.ts';

export const CONFIG_GROUP = 'kubelet.config.k8s.io';
/** The exec protocol's versions (upstream's apiVersions map). */
export const PLUGIN_API_VERSIONS = [
  'credentialprovider.kubelet.k8s.io/v1',
  'credentialprovider.kubelet.k8s.io/v1alpha1',
  'credentialprovider.kubelet.k8s.io/v1beta1',
];
export const PLUGIN_API_V1 = 'credentialprovider.kubelet.k8s.io/v1';
const CACHE_TYPES = ['ServiceAccount', 'Token'];

export interface TokenAttributes {
  serviceAccountTokenAudience: string;
  cacheType: string;
  requireServiceAccount?: boolean;
  requiredServiceAccountAnnotationKeys: string[];
  optionalServiceAccountAnnotationKeys: string[];
}

export interface CredentialProvider {
  name: string;
  matchImages: string[];
  /** Milliseconds; undefined when the file does not set it (which validation refuses). */
  defaultCacheDurationMs?: number;
  apiVersion: string;
  args: string[];
  env: { name: string; value: string }[];
  tokenAttributes?: TokenAttributes;
}

export interface CredentialProviderConfig {
  providers: CredentialProvider[];
}

// The fields each version of kubelet.config.k8s.io knows (strict decoding refuses others);
// tokenAttributes is v1's only.
const PROVIDER_FIELDS = ['name', 'matchImages', 'defaultCacheDuration', 'apiVersion', 'args', 'env'];
const TOKEN_FIELDS = [
  'serviceAccountTokenAudience',
  'cacheType',
  'requireServiceAccount',
  'requiredServiceAccountAnnotationKeys',
  'optionalServiceAccountAnnotationKeys',
];
const VERSIONS = ['v1', 'v1beta1', 'v1alpha1'];

/**
 * Upstream's decode: YAML or JSON, apiVersion kubelet.config.k8s.io/{v1,v1beta1,v1alpha1},
 * kind CredentialProviderConfig, unknown or duplicate fields refused (a strict decoder).
 */
export function decodeConfig(text: string): CredentialProviderConfig {
  const doc = parseDocument(text, { uniqueKeys: true });
  if (doc.errors.length) throw new Error(`strict decoding error: ${doc.errors[0]!.message.split('\n')[0]}`);
  const o = doc.toJS() as unknown;
  if (!isObject(o)) throw new Error("Object 'Kind' is missing in config");
  const kind = o.kind;
  const apiVersion = o.apiVersion;
  if (typeof kind !== 'string' || !kind) throw new Error(`Object 'Kind' is missing in '${text.trim().slice(0, 200)}'`);
  if (typeof apiVersion !== 'string' || !apiVersion) throw new Error(`Object 'apiVersion' is missing in '${text.trim().slice(0, 200)}'`);
  const slash = apiVersion.lastIndexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = apiVersion.slice(slash + 1);
  if (group !== CONFIG_GROUP || !VERSIONS.includes(version))
    throw new Error(`no kind "${kind}" is registered for version "${apiVersion}" in scheme`);
  if (kind !== 'CredentialProviderConfig') throw new Error(`failed to decode "${kind}" (wrong Kind)`);
  const unknown: string[] = [];
  const known = (obj: Record<string, unknown>, fields: string[], path: string) => {
    for (const k of Object.keys(obj)) if (!fields.includes(k)) unknown.push(`unknown field "${path}${k}"`);
  };
  known(o, ['apiVersion', 'kind', 'providers'], '');
  const providers = arrayOf(o.providers, 'providers').map((p, i): CredentialProvider => {
    const at = `providers[${i}]`;
    if (!isObject(p)) throw new Error(`${at}: expected an object`);
    known(p, version === 'v1' ? [...PROVIDER_FIELDS, 'tokenAttributes'] : PROVIDER_FIELDS, `${at}.`);
    const out: CredentialProvider = {
      name: str(p.name, `${at}.name`),
      matchImages: arrayOf(p.matchImages, `${at}.matchImages`).map((m, j) => str(m, `${at}.matchImages[${j}]`)),
      apiVersion: str(p.apiVersion, `${at}.apiVersion`),
      args: arrayOf(p.args, `${at}.args`).map((a, j) => str(a, `${at}.args[${j}]`)),
      env: arrayOf(p.env, `${at}.env`).map((e, j) => {
        if (!isObject(e)) throw new Error(`${at}.env[${j}]: expected an object`);
        known(e, ['name', 'value'], `${at}.env[${j}].`);
        return { name: str(e.name, `${at}.env[${j}].name`), value: str(e.value, `${at}.env[${j}].value`) };
      }),
    };
    if (p.defaultCacheDuration !== undefined && p.defaultCacheDuration !== null) {
      const ms = typeof p.defaultCacheDuration === 'string' ? parseDuration(p.defaultCacheDuration) : undefined;
      if (ms === undefined) throw new Error(`${at}.defaultCacheDuration: time: invalid duration ${JSON.stringify(p.defaultCacheDuration)}`);
      out.defaultCacheDurationMs = ms;
    }
    if (p.tokenAttributes !== undefined && p.tokenAttributes !== null) {
      const t = p.tokenAttributes;
      const tat = `${at}.tokenAttributes`;
      if (!isObject(t)) throw new Error(`${tat}: expected an object`);
      known(t, TOKEN_FIELDS, `${tat}.`);
      out.tokenAttributes = {
        serviceAccountTokenAudience: str(t.serviceAccountTokenAudience, `${tat}.serviceAccountTokenAudience`),
        cacheType: str(t.cacheType, `${tat}.cacheType`),
        requiredServiceAccountAnnotationKeys: arrayOf(
          t.requiredServiceAccountAnnotationKeys,
          `${tat}.requiredServiceAccountAnnotationKeys`,
        ).map((k, j) => str(k, `${tat}.requiredServiceAccountAnnotationKeys[${j}]`)),
        optionalServiceAccountAnnotationKeys: arrayOf(
          t.optionalServiceAccountAnnotationKeys,
          `${tat}.optionalServiceAccountAnnotationKeys`,
        ).map((k, j) => str(k, `${tat}.optionalServiceAccountAnnotationKeys[${j}]`)),
      };
      if (t.requireServiceAccount !== undefined && t.requireServiceAccount !== null) {
        if (typeof t.requireServiceAccount !== 'boolean') throw new Error(`${tat}.requireServiceAccount: expected a boolean`);
        out.tokenAttributes.requireServiceAccount = t.requireServiceAccount;
      }
    }
    return out;
  });
  if (unknown.length) throw new Error(`strict decoding error: ${unknown.join(', ')}`);
  return { providers };
}

/**
 * Upstream's validateCredentialProviderConfig, its field errors in apimachinery's words;
 * tokenGate: KubeletServiceAccountTokenForCredentialProviders.
 */
export function validateConfig(config: CredentialProviderConfig, tokenGate: boolean): string[] {
  const errs: string[] = [];
  const f = 'providers';
  if (config.providers.length === 0) errs.push(`${f}: Required value: at least 1 item in plugins is required`);
  const seen = new Set<string>();
  for (const p of config.providers) {
    const name = JSON.stringify(p.name);
    if (p.name.includes('/')) errs.push(`${f}.name: Invalid value: ${name}: provider name cannot contain '/'`);
    if (p.name.includes(' ')) errs.push(`${f}.name: Invalid value: ${name}: provider name cannot contain spaces`);
    if (p.name === '.') errs.push(`${f}.name: Invalid value: ${name}: provider name cannot be '.'`);
    if (p.name === '..') errs.push(`${f}.name: Invalid value: ${name}: provider name cannot be '..'`);
    if (seen.has(p.name)) errs.push(`${f}.name: Duplicate value: ${name}`);
    seen.add(p.name);
    if (!p.apiVersion) errs.push(`${f}.apiVersion: Required value`);
    else if (!PLUGIN_API_VERSIONS.includes(p.apiVersion))
      errs.push(
        `${f}.apiVersion: Unsupported value: ${JSON.stringify(p.apiVersion)}: supported values: ${quoted([...PLUGIN_API_VERSIONS].sort())}`,
      );
    if (p.matchImages.length === 0) errs.push(`${f}.matchImages: Required value: at least 1 item in matchImages is required`);
    for (const m of p.matchImages) {
      const err = parseSchemelessURL(m).error;
      if (err) errs.push(`${f}.matchImages: Invalid value: ${JSON.stringify(m)}: match image is invalid: ${err}`);
    }
    if (p.defaultCacheDurationMs === undefined) errs.push(`${f}.defaultCacheDuration: Required value`);
    else if (p.defaultCacheDurationMs < 0)
      errs.push(`${f}.defaultCacheDuration: Invalid value: "${goDuration(p.defaultCacheDurationMs)}": must be greater than or equal to 0`);
    const t = p.tokenAttributes;
    if (!t) continue;
    const tf = `${f}.tokenAttributes`;
    if (!tokenGate)
      errs.push(
        `${tf}: Forbidden: tokenAttributes is not supported when KubeletServiceAccountTokenForCredentialProviders feature gate is disabled`,
      );
    if (!t.serviceAccountTokenAudience) errs.push(`${tf}.serviceAccountTokenAudience: Required value`);
    if (t.requireServiceAccount === undefined) errs.push(`${tf}.requireServiceAccount: Required value`);
    if (p.apiVersion !== PLUGIN_API_V1) errs.push(`${tf}: Forbidden: tokenAttributes is only supported for ${PLUGIN_API_V1} API version`);
    if (t.requireServiceAccount === false && t.requiredServiceAccountAnnotationKeys.length)
      errs.push(
        `${tf}.requiredServiceAccountAnnotationKeys: Forbidden: requireServiceAccount cannot be false when requiredServiceAccountAnnotationKeys is set`,
      );
    errs.push(...annotationKeyErrors(`${tf}.requiredServiceAccountAnnotationKeys`, t.requiredServiceAccountAnnotationKeys));
    errs.push(...annotationKeyErrors(`${tf}.optionalServiceAccountAnnotationKeys`, t.optionalServiceAccountAnnotationKeys));
    const both = [...new Set(t.requiredServiceAccountAnnotationKeys)]
      .filter((k) => t.optionalServiceAccountAnnotationKeys.includes(k))
      .sort();
    if (both.length) errs.push(`${tf}: Invalid value: [${both.join(' ')}]: annotation keys cannot be both required and optional`);
    if (!t.cacheType)
      errs.push(
        `${tf}.cacheType: Required value: cacheType is required to be set when tokenAttributes is specified. Supported values are: ${CACHE_TYPES.join(', ')}`,
      );
    else if (!CACHE_TYPES.includes(t.cacheType))
      errs.push(`${tf}.cacheType: Unsupported value: ${JSON.stringify(t.cacheType)}: supported values: ${quoted(CACHE_TYPES)}`);
  }
  return errs;
}

/** utilerrors.NewAggregate's text: one error as is, several as [a, b]. */
export function aggregate(errs: string[]): string {
  return errs.length === 1 ? errs[0]! : `[${errs.join(', ')}]`;
}

/** What readConfig read: the merged providers and upstream's hash of the files (its config_info metric). */
export interface ReadConfig {
  config: CredentialProviderConfig;
  hash: string;
}

/**
 * Upstream's readCredentialProviderConfig: a file, or a directory's *.json, *.yaml and *.yml
 * files in lexical order, merged (a provider name twice is an error). The hash is sha256 over
 * each file's length (8 bytes, big endian) and contents.
 */
export function readConfig(path: string): ReadConfig {
  if (!path) throw new Error('credential provider config path is empty');
  let isDir: boolean;
  try {
    isDir = statSync(path).isDirectory();
  } catch (e) {
    throw new Error(`unable to access path "${path}": ${(e as Error).message}`);
  }
  let files = [path];
  if (isDir) {
    files = readdirSync(path, { withFileTypes: true })
      .filter((d) => !d.isDirectory() && ['.json', '.yaml', '.yml'].includes(extname(d.name)))
      .map((d) => join(path, d.name))
      .sort();
    if (!files.length) throw new Error(`no configuration files found in directory "${path}"`);
  }
  const hash = createHash('sha256');
  const providers: CredentialProvider[] = [];
  const names = new Set<string>();
  for (const file of files) {
    let data: Buffer;
    try {
      data = readFileSync(file);
    } catch (e) {
      throw new Error(`unable to read file "${file}": ${(e as Error).message}`);
    }
    const len = Buffer.alloc(8);
    len.writeBigUInt64BE(BigInt(data.length));
    hash.update(len).update(data);
    let config: CredentialProviderConfig;
    try {
      config = decodeConfig(data.toString('utf8'));
    } catch (e) {
      throw new Error(`error decoding config "${file}": ${(e as Error).message}`);
    }
    for (const p of config.providers) {
      if (names.has(p.name)) throw new Error(`duplicate provider name "${p.name}" found in configuration file(s)`);
      names.add(p.name);
      providers.push(p);
    }
  }
  return { config: { providers }, hash: `sha256:${hash.digest('hex')}` };
}

// apimachinery's validation.IsQualifiedName on the lower-cased key, and Duplicate.
function annotationKeyErrors(path: string, keys: string[]): string[] {
  const errs: string[] = [];
  const seen = new Set<string>();
  for (const k of keys) {
    for (const msg of qualifiedNameErrors(k.toLowerCase())) errs.push(`${path}: Invalid value: ${JSON.stringify(k)}: ${msg}`);
    if (seen.has(k)) errs.push(`${path}: Duplicate value: ${JSON.stringify(k)}`);
    seen.add(k);
  }
  return errs;
}

const quoted = (vs: string[]) => vs.map((v) => JSON.stringify(v)).join(', ');

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function arrayOf(v: unknown, path: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new Error(`${path}: expected an array`);
  return v;
}

function str(v: unknown, path: string): string {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw new Error(`${path}: expected a string`);
  return v;
}
