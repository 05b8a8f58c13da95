// Credentials from an exec plugin named in the kubeconfig (users[].user.exec): client-go's
// exec authenticator (k8s.io/client-go/plugin/pkg/client/auth/exec), as a kubelet whose
// kubeconfig runs a cloud's token command uses it. The plugin runs with KUBERNETES_EXEC_INFO
// (an ExecCredential, spec.interactive false: a kubelet has no terminal) and prints an
// ExecCredential whose status holds a token or a client certificate and key; they are kept
// until their expirationTimestamp, and asked for again after a 401.
import { spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';

const VERSIONS = ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'];

export interface ExecConfig {
  apiVersion: string;
  command: string;
  args: string[];
  env: { name: string; value: string }[];
  installHint?: string;
  /** provideClusterInfo: the cluster as ExecCredential's spec.cluster (v1's field names). */
  cluster?: Record<string, unknown>;
}

export class ExecConfigError extends Error {}

/**
 * Pure: a kubeconfig user's exec stanza, checked as clientcmd's validateAuthInfo and the
 * authenticator's constructor do. cluster: spec.cluster for provideClusterInfo.
 */
export function parseExecConfig(raw: unknown, user: string, cluster: () => Record<string, unknown>): ExecConfig {
  const e = (raw ?? {}) as Record<string, unknown>;
  const fail = (why: string) => {
    throw new ExecConfigError(why);
  };
  if (!e.command) fail(`command must be specified for ${user} to use exec authentication plugin`);
  if (!e.apiVersion) fail(`apiVersion must be specified for ${user} to use exec authentication plugin`);
  const apiVersion = String(e.apiVersion);
  if (!VERSIONS.includes(apiVersion)) fail(`exec plugin: invalid apiVersion ${JSON.stringify(apiVersion)}`);
  const env = (Array.isArray(e.env) ? e.env : []) as { name?: unknown; value?: unknown }[];
  if (env.some((v) => !v?.name)) fail(`env variable name must be specified for ${user} to use exec authentication plugin`);
  // v1beta1 defaults to IfAvailable (SetDefaults_ExecConfig); v1 must say.
  const mode = e.interactiveMode ?? (apiVersion.endsWith('/v1beta1') ? 'IfAvailable' : undefined);
  if (mode === undefined) fail(`interactiveMode must be specified for ${user} to use exec authentication plugin`);
  if (mode !== 'Never' && mode !== 'IfAvailable' && mode !== 'Always') fail(`invalid interactiveMode for ${user}: ${JSON.stringify(mode)}`);
  // isInteractive: Always needs a terminal on stdin, which a kubelet never gives its plugin.
  if (mode === 'Always') fail(`exec plugin of ${user} cannot support interactive mode: standard input is not a terminal`);
  return {
    apiVersion,
    command: String(e.command),
    args: (Array.isArray(e.args) ? e.args : []).map(String),
    env: env.map((v) => ({ name: String(v.name), value: String(v.value ?? '') })),
    ...(e.installHint ? { installHint: String(e.installHint) } : {}),
    ...(e.provideClusterInfo === true ? { cluster: cluster() } : {}),
  };
}

/** Pure: KUBERNETES_EXEC_INFO, the ExecCredential the plugin is given. */
export function execInfo(c: ExecConfig): string {
  return JSON.stringify({
    kind: 'ExecCredential',
    apiVersion: c.apiVersion,
    spec: { ...(c.cluster ? { cluster: c.cluster } : {}), interactive: false },
  });
}

export interface ExecCredential {
  token?: string;
  cert?: Buffer;
  key?: Buffer;
  /** status.expirationTimestamp: used until then; undefined: until a 401. */
  expiresMs?: number;
}

/** Pure: the plugin's stdout, checked as refreshCredsLocked does. */
export function parseExecCredential(stdout: string, apiVersion: string): ExecCredential {
  let out: { apiVersion?: string; kind?: string; status?: Record<string, unknown> | null };
  try {
    out = JSON.parse(stdout);
  } catch (e) {
    throw new Error(`decoding stdout: ${(e as Error).message}`);
  }
  if (out.kind !== 'ExecCredential') throw new Error(`decoding stdout: kind ${JSON.stringify(out.kind)} is not ExecCredential`);
  if (out.apiVersion !== apiVersion)
    throw new Error(`exec plugin is configured to use API version ${apiVersion}, plugin returned version ${out.apiVersion}`);
  const s = out.status;
  if (!s) throw new Error("exec plugin didn't return a status field");
  const token = typeof s.token === 'string' ? s.token : '';
  const cert = typeof s.clientCertificateData === 'string' ? s.clientCertificateData : '';
  const key = typeof s.clientKeyData === 'string' ? s.clientKeyData : '';
  if (!token && !cert && !key) throw new Error("exec plugin didn't return a token or cert/key pair");
  if (!cert !== !key) throw new Error('exec plugin returned only certificate or key, not both');
  const expires = typeof s.expirationTimestamp === 'string' ? Date.parse(s.expirationTimestamp) : Number.NaN;
  return {
    ...(token ? { token } : {}),
    ...(cert ? { cert: Buffer.from(cert), key: Buffer.from(key) } : {}),
    ...(Number.isFinite(expires) ? { expiresMs: expires } : {}),
  };
}

/** What the plugin's calls and certificates are counted by (client-go's exec metrics). */
export interface ExecObserver {
  /** rest_client_exec_plugin_call_total: the exit code (0 when it succeeded, 1 when it did not run) and how it went. */
  call(code: number, status: 'no_error' | 'plugin_execution_error' | 'plugin_not_found_error' | 'client_internal_error'): void;
  /** The certificate's notAfter (rest_client_exec_plugin_ttl_seconds); undefined: none. */
  certificateExpiry(notAfterMs: number | undefined): void;
  /** A certificate replaced after living this many seconds (rest_client_exec_plugin_certificate_rotation_age). */
  rotated(ageSeconds: number): void;
  /** Running the plugin again after a 401 failed (client-go logs "refreshing credentials"). */
  refreshFailed?(e: Error): void;
}

/** The plugin's credentials, run for again when they expire or a request with them got 401. */
export class ExecCredentials {
  readonly #c: ExecConfig;
  readonly #observe?: ExecObserver;
  #cached?: ExecCredential;
  #running?: Promise<ExecCredential>;

  constructor(c: ExecConfig, observe?: ExecObserver) {
    this.#c = c;
    this.#observe = observe;
  }

  /** getCreds: the cached credentials while they have not expired, else the plugin's new ones. */
  get(now = Date.now()): Promise<ExecCredential> {
    const c = this.#cached;
    if (c && (c.expiresMs === undefined || now <= c.expiresMs)) return Promise.resolve(c);
    return this.#refresh();
  }

  /** maybeRefreshCreds: a request with these got 401; unless they were replaced since, run the plugin again. */
  unauthorized(used: ExecCredential): Promise<unknown> {
    return used === this.#cached ? this.#refresh() : Promise.resolve();
  }

  #refresh(): Promise<ExecCredential> {
    this.#running ??= this.#run().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #run(): Promise<ExecCredential> {
    const stdout = await runPlugin(this.#c, this.#observe);
    const next = parseExecCredential(stdout, this.#c.apiVersion);
    const old = this.#cached;
    this.#cached = next;
    const notAfter = (pem?: Buffer) => (pem ? certificate(pem) : undefined);
    if (old?.cert && !old.cert.equals(next.cert ?? Buffer.alloc(0))) {
      const was = notAfter(old.cert);
      if (was) this.#observe?.rotated((Date.now() - Date.parse(was.validFrom)) / 1000);
    }
    const leaf = notAfter(next.cert);
    this.#observe?.certificateExpiry(leaf ? Date.parse(leaf.validTo) : undefined);
    return next;
  }
}

function certificate(pem: Buffer): X509Certificate {
  try {
    return new X509Certificate(pem);
  } catch (e) {
    throw new Error(`failed parsing client key/certificate: ${(e as Error).message}`);
  }
}

/** Runs the plugin (stdin none, stderr the kubelet's, as client-go's cmd.Run), resolving with its stdout. */
function runPlugin(c: ExecConfig, observe?: ExecObserver): Promise<string> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, ...Object.fromEntries(c.env.map((v) => [v.name, v.value])), KUBERNETES_EXEC_INFO: execInfo(c) };
    const child = spawn(c.command, c.args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
    const out: Buffer[] = [];
    let failed = false;
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.on('error', (e: NodeJS.ErrnoException) => {
      failed = true;
      const missing = e.code === 'ENOENT' || e.code === 'EACCES';
      observe?.call(1, missing ? 'plugin_not_found_error' : 'client_internal_error');
      const hint = c.installHint ? ` (${c.installHint.trim().replace(/\s*\n\s*/g, ' ')})` : '';
      reject(new Error(missing ? `exec: executable ${c.command} not found${hint}` : `exec: ${e.message}`));
    });
    child.on('close', (code, signal) => {
      if (failed) return;
      if (code === null) {
        observe?.call(1, 'client_internal_error');
        return reject(new Error(`exec: signal: ${signal}`));
      }
      if (code !== 0) {
        observe?.call(code, 'plugin_execution_error');
        return reject(new Error(`exec: executable ${c.command} failed with exit code ${code}`));
      }
      observe?.call(0, 'no_error');
      resolve(Buffer.concat(out).toString('utf8'));
    });
  });
}
