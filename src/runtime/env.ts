// A container's environment and its expanded command and args, as upstream's
// makeEnvironmentVariables (pkg/kubelet/kubelet_pods.go), envvars.FromServices and
// ExpandContainerCommandAndArgs build them. Pure: every object the environment reads
// (ConfigMaps, Secrets, Services, the node's allocatable, the files fileKeyRef names) is
// fetched before, at the edge (env-sources.ts, env-file-source.ts), and handed in here.
import type { ConfigMap, Container, Pod, Secret, Service } from 'kubernetes-types/core/v1.js';
import { fieldRefValue, resourceFieldRefValue } from '../resources/downward.ts';
import { isStaticPod } from '../podutil/podutil.ts';
import { goQuote } from '../log/go-quote.ts';
import { type FileKeyRead, type FileKeySelector, fileKeyId, fileKeyRefOf } from './env-file.ts';

/** The result of reading one object: found, absent (404), or failed otherwise. */
export type Fetched<T> = { found: T } | { notFound: true } | { error: string };

export interface EnvInputs {
  /** The ConfigMaps and Secrets the container refers to (envReferences), by name, in the pod's namespace. */
  configMaps: ReadonlyMap<string, Fetched<ConfigMap>>;
  secrets: ReadonlyMap<string, Fetched<Secret>>;
  /** The pod's namespace's services and default/kubernetes, or why they could not be read. */
  services: Service[] | { error: string };
  podIPs: string[];
  hostIPs: string[];
  /** node.status.allocatable: the limits resourceFieldRef reports for a container that sets none. */
  allocatable?: Record<string, string>;
  /**
   * The fileKeyRefs' files, read (EnvFiles, beta, on by default), by fileKeyId. Absent
   * when the gate is off: then a fileKeyRef gives '', as upstream's switch falls through.
   */
  fileKeys?: ReadonlyMap<string, FileKeyRead>;
}

export interface EnvEntry {
  name: string;
  value: string;
}
export type EnvResult = { env: EnvEntry[] } | { error: string };

/** Which ConfigMaps and Secrets a container's env and envFrom name: what the edge must fetch. */
export function envReferences(c: Container): { configMaps: string[]; secrets: string[] } {
  const configMaps = new Set<string>(),
    secrets = new Set<string>();
  for (const f of c.envFrom ?? []) {
    if (f.configMapRef) configMaps.add(f.configMapRef.name ?? '');
    else if (f.secretRef) secrets.add(f.secretRef.name ?? '');
  }
  for (const e of c.env ?? []) {
    if (e.value || !e.valueFrom) continue;
    if (e.valueFrom.configMapKeyRef) configMaps.add(e.valueFrom.configMapKeyRef.name ?? '');
    else if (e.valueFrom.secretKeyRef) secrets.add(e.valueFrom.secretKeyRef.name ?? '');
  }
  return { configMaps: [...configMaps], secrets: [...secrets] };
}

const notFound = { configMap: (name: string) => `configmap "${name}" not found`, secret: (name: string) => `secret "${name}" not found` };

/**
 * Upstream's order and precedence: env overrides envFrom, which overrides the service
 * variables; $(VAR) in a literal value sees envFrom, the env vars declared before it and
 * the service variables. Service variables come first in the list, then the rest.
 */
export function makeEnvironment(pod: Pod, c: Container, inputs: EnvInputs): EnvResult {
  const ns = pod.metadata?.namespace ?? 'default';
  let serviceEnv: Map<string, string>;
  if (Array.isArray(inputs.services)) {
    serviceEnv = servicesEnv(selectServices(inputs.services, ns, pod.spec?.enableServiceLinks ?? true));
  } else if (isStaticPod(pod)) {
    // Static pods run without an apiserver (it may be one of them): no service variables then.
    serviceEnv = new Map();
  } else {
    return { error: inputs.services.error };
  }

  type Lookup<T> = { obj?: T; skip?: true; error?: string };
  const lookup = <T>(map: ReadonlyMap<string, Fetched<T>>, kind: 'configMap' | 'secret', name: string, optional: boolean): Lookup<T> => {
    const r = map.get(name);
    if (!r) return { error: `couldn't get ${kind} ${ns}/${name}, no kubeClient defined` };
    if ('found' in r) return { obj: r.found };
    if ('notFound' in r) return optional ? { skip: true } : { error: notFound[kind](name) };
    return { error: r.error };
  };

  const tmp = new Map<string, string>();
  for (const from of c.envFrom ?? []) {
    const prefix = from.prefix ?? '';
    if (from.configMapRef) {
      const r = lookup(inputs.configMaps, 'configMap', from.configMapRef.name ?? '', !!from.configMapRef.optional);
      if (r.error) return { error: r.error };
      for (const [k, v] of Object.entries(r.obj?.data ?? {})) setIfValidName(tmp, prefix + k, v);
    } else if (from.secretRef) {
      const r = lookup(inputs.secrets, 'secret', from.secretRef.name ?? '', !!from.secretRef.optional);
      if (r.error) return { error: r.error };
      for (const [k, v] of Object.entries(r.obj?.data ?? {})) setIfValidName(tmp, prefix + k, secretValue(v));
    }
  }

  // Looks in tmp as it is now (envFrom and the env vars so far), then the service variables.
  const mapping = (name: string) => tmp.get(name) ?? serviceEnv.get(name) ?? `$(${name})`;
  for (const e of c.env ?? []) {
    let value = e.value ?? '';
    if (value !== '') {
      value = expand(value, mapping);
    } else if (e.valueFrom) {
      const vf = e.valueFrom;
      if (vf.fieldRef) {
        const r = fieldRefValue(vf.fieldRef, pod, inputs);
        if ('error' in r) return r;
        value = r.value;
      } else if (vf.resourceFieldRef) {
        const r = resourceFieldRefValue(vf.resourceFieldRef, pod, c, inputs.allocatable);
        if ('error' in r) return r;
        value = r.value;
      } else if (vf.configMapKeyRef || vf.secretKeyRef) {
        // ConfigMap and Secret keys alike; only the lookup, the error's kind and the decoding differ.
        const secret = !vf.configMapKeyRef;
        const { name = '', key, optional } = (vf.configMapKeyRef ?? vf.secretKeyRef)!;
        const r = secret ? lookup(inputs.secrets, 'secret', name, !!optional) : lookup(inputs.configMaps, 'configMap', name, !!optional);
        if (r.error) return { error: r.error };
        if (r.skip) continue;
        const v = r.obj?.data?.[key];
        if (v === undefined) {
          if (optional) continue;
          return { error: `couldn't find key ${key} in ${secret ? 'Secret' : 'ConfigMap'} ${ns}/${name}` };
        }
        value = secret ? secretValue(v) : v;
      } else if (inputs.fileKeys) {
        // EnvFiles: the key in a file of one of the pod's volumes (kubernetes-types predates fileKeyRef).
        const file = fileKeyRefOf(e);
        const r = file ? fileKeyValue(file, inputs.fileKeys) : { value: '' };
        if ('skip' in r) continue;
        if ('error' in r) return r;
        value = r.value;
      }
    }
    tmp.set(e.name, value);
  }

  const env: EnvEntry[] = [];
  for (const [name, value] of serviceEnv) if (!tmp.has(name)) env.push({ name, value });
  for (const [name, value] of tmp) env.push({ name, value });
  return { env };
}

/**
 * The FileKeyRef case of makeEnvironmentVariables, with its errors. A file that cannot be
 * read or parsed fails even when optional (the reason is only logged); optional covers a
 * key the file does not set, or sets to '' (upstream cannot tell the two apart).
 */
function fileKeyValue(f: FileKeySelector, files: ReadonlyMap<string, FileKeyRead>): { value: string } | { skip: true } | { error: string } {
  const r = files.get(fileKeyId(f));
  if (!r || 'noVolume' in r) return { error: `cannot find the volume ${goQuote(f.volumeName)} referenced by FileKeyRef` };
  if ('error' in r) return r;
  if ('parseError' in r) return { error: "couldn't parse env file" };
  if (r.value !== '') return { value: r.value };
  if (f.optional) return { skip: true };
  return { error: `environment variable key ${goQuote(f.key)} not found in file ${goQuote(r.path)}` };
}

/**
 * Upstream (1.30+, relaxed validation) passes every envFrom key on: ConfigMap and Secret
 * keys are always printable ASCII without '='. A key that is not (an object the apiserver
 * did not validate) cannot be expressed as NAME=value, so it is left out.
 */
function setIfValidName(env: Map<string, string>, name: string, value: string) {
  if (/^[\x20-\x3c\x3e-\x7e]+$/.test(name)) env.set(name, value);
}

/** Secret data is base64 on the wire. */
const secretValue = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');

// --- $(VAR) expansion: third_party/forked/golang/expansion -----------------------------

/**
 * $(VAR) is replaced by mapping(VAR); $$ is an escaped $; a $ before anything else, or an
 * unclosed $(, stays as written. A name the mapping does not know stays as $(VAR).
 */
export function expand(input: string, mapping: (name: string) => string): string {
  let out = '';
  let checkpoint = 0;
  for (let cursor = 0; cursor < input.length; cursor++) {
    if (input[cursor] !== '$' || cursor + 1 >= input.length) continue;
    out += input.slice(checkpoint, cursor);
    const next = input[cursor + 1]!;
    let advance = 1;
    if (next === '$') {
      out += '$';
    } else if (next === '(') {
      const close = input.indexOf(')', cursor + 2);
      if (close < 0) out += '$(';
      else {
        out += mapping(input.slice(cursor + 2, close));
        advance = close - cursor;
      }
    } else {
      out += '$' + next;
    }
    cursor += advance;
    checkpoint = cursor + 1;
  }
  return out + input.slice(checkpoint);
}

/** ExpandContainerCommandAndArgs: $(VAR) in command and args against the final environment. */
export function expandCommandAndArgs(c: Container, env: EnvEntry[]): { command: string[]; args: string[] } {
  const vars = new Map(env.map((e) => [e.name, e.value]));
  const mapping = (name: string) => vars.get(name) ?? `$(${name})`;
  return { command: (c.command ?? []).map((s) => expand(s, mapping)), args: (c.args ?? []).map((s) => expand(s, mapping)) };
}

// --- service link variables: pkg/kubelet/envvars --------------------------------------

const isServiceIPSet = (s: Service) => !!s.spec?.clusterIP && s.spec.clusterIP !== 'None';

/** default/kubernetes always; the pod's namespace's services when enableServiceLinks. Sorted by name for a stable order. */
export function selectServices(services: Service[], ns: string, enableServiceLinks: boolean): Service[] {
  const byName = new Map<string, Service>();
  for (const s of services) {
    if (!isServiceIPSet(s)) continue;
    const name = s.metadata?.name ?? '';
    if (s.metadata?.namespace === 'default' && name === 'kubernetes') {
      if (!byName.has(name)) byName.set(name, s);
    } else if (s.metadata?.namespace === ns && enableServiceLinks) {
      byName.set(name, s);
    }
  }
  return [...byName.values()].sort((a, b) => (a.metadata!.name! < b.metadata!.name! ? -1 : 1));
}

const envName = (s: string) => s.replaceAll('-', '_').toUpperCase();
const hostPort = (ip: string, port: number) => (ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`);

/** FOO_SERVICE_HOST, FOO_SERVICE_PORT(_NAME), and the Docker link variables FOO_PORT, FOO_PORT_80_TCP(_PROTO|_PORT|_ADDR). */
export function servicesEnv(services: Service[]): Map<string, string> {
  const env = new Map<string, string>();
  for (const s of services) {
    if (!isServiceIPSet(s)) continue;
    const ip = s.spec!.clusterIP!;
    const prefix = envName(s.metadata?.name ?? '');
    const ports = s.spec?.ports ?? [];
    env.set(`${prefix}_SERVICE_HOST`, ip);
    if (ports.length === 0) continue;
    env.set(`${prefix}_SERVICE_PORT`, String(ports[0]!.port));
    for (const p of ports) if (p.name) env.set(`${prefix}_SERVICE_PORT_${envName(p.name)}`, String(p.port));
    ports.forEach((p, i) => {
      const proto = p.protocol ?? 'TCP';
      const url = `${proto.toLowerCase()}://${hostPort(ip, p.port)}`;
      if (i === 0) env.set(`${prefix}_PORT`, url);
      const pp = `${prefix}_PORT_${p.port}_${proto.toUpperCase()}`;
      env.set(pp, url);
      env.set(`${pp}_PROTO`, proto.toLowerCase());
      env.set(`${pp}_PORT`, String(p.port));
      env.set(`${pp}_ADDR`, ip);
    });
  }
  return env;
}

/** The environment and the expanded command and args, or why the container cannot be configured. */
export function containerEnvironment(
  pod: Pod,
  c: Container,
  inputs: EnvInputs,
): { env: EnvEntry[]; command: string[]; args: string[] } | { error: string } {
  const r = makeEnvironment(pod, c, inputs);
  if ('error' in r) return r;
  return { env: r.env, ...expandCommandAndArgs(c, r.env) };
}
