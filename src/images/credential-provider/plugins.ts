// The credential providers of --image-credential-provider-config and -bin-dir, registered at
// start as upstream's RegisterCredentialProviderPlugins (an error refuses the start), and the
// keyring they make for a pull (upstream's externalCredentialProviderKeyring.Lookup).
import { accessSync, constants, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../log/log.ts';
import { keyringOf, lookup, type RegistryAuth } from '../keyring.ts';
import { aggregate, readConfig, validateConfig } from './config.ts';
import { execPlugin, type ExecPlugin, type PluginObserver } from './exec.ts';
import { PluginProvider, type Provided, type PullingPod, type ServiceAccountAccess } from './provider.ts';

export interface CredentialProviders {
  /** sha256 of the config files, upstream's kubelet_credential_provider_config_info hash label. */
  readonly hash: string;
  readonly names: readonly string[];
  /** The plugins' credentials for a repository, in the keyring's order; a failing plugin is logged and gives none. */
  lookup(repository: string, pod: PullingPod): Promise<RegistryAuth[]>;
}

/** The flags' paths and the gate: what loadCredentialProviders reads. */
export interface LoadOptions {
  configPath: string;
  binDir: string;
  /** KubeletServiceAccountTokenForCredentialProviders. */
  tokenGate: boolean;
  /** Tests replace the exec of a provider (no binary is then looked for). */
  exec?: (provider: string) => ExecPlugin;
}

/** The plugins' configuration, read and checked at start: plain data the kubelet builds the providers from. */
export interface LoadedProviders {
  config: ReturnType<typeof readConfig>['config'];
  hash: string;
  binDir: string;
  tokenGate: boolean;
  exec?: (provider: string) => ExecPlugin;
}

export interface RegisterOptions extends LoadOptions {
  /** Token mode's service accounts and tokens (upstream hands the plugins its token manager). */
  serviceAccounts?: ServiceAccountAccess;
  observe?: PluginObserver;
  log?: Logger;
}

/**
 * The first half of upstream's RegisterCredentialProviderPlugins: the bin dir, the config file
 * decoded and validated, each plugin's binary found. Throws one line, as upstream's kubelet
 * exits with it ("Failed to register CRI auth plugins"); the command line calls it before
 * anything else starts.
 */
export function loadCredentialProviders(o: LoadOptions): LoadedProviders {
  try {
    statSync(o.binDir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(`plugin binary directory ${o.binDir} did not exist`);
    throw new Error(`error inspecting binary directory ${o.binDir}: ${(e as Error).message}`);
  }
  const { config, hash } = readConfig(o.configPath);
  const errs = validateConfig(config, o.tokenGate);
  if (errs.length) throw new Error(`failed to validate credential provider config: ${aggregate(errs)}`);
  if (!o.exec) {
    for (const p of config.providers) {
      const bin = join(o.binDir, p.name);
      // exec.LookPath: a regular file with an execute bit. (Upstream's message names an empty
      // path, LookPath's result on failure; this one names the file looked for.)
      let ok = false;
      try {
        ok = statSync(bin).isFile();
        accessSync(bin, constants.X_OK);
      } catch {
        ok = false;
      }
      if (!ok) throw new Error(`plugin binary executable ${bin} did not exist`);
    }
  }
  return { config, hash, binDir: o.binDir, tokenGate: o.tokenGate, ...(o.exec ? { exec: o.exec } : {}) };
}

/** Both halves at once (tests, and callers that have the apiserver access at hand). */
export function registerCredentialProviders(o: RegisterOptions): CredentialProviders {
  return credentialProviders(loadCredentialProviders(o), o);
}

/**
 * The second half: the providers built, with token mode's access to the apiserver (none: a
 * token-mode plugin's lookups fail, and are logged).
 */
export function credentialProviders(
  l: LoadedProviders,
  o: { serviceAccounts?: ServiceAccountAccess; observe?: PluginObserver; log?: Logger } = {},
): CredentialProviders {
  const noClient = () => Promise.reject(new Error('the kubelet has no apiserver client'));
  const serviceAccounts: ServiceAccountAccess = o.serviceAccounts ?? { getServiceAccount: noClient, token: noClient };
  const { hash } = l;
  const providers = l.config.providers.map((p) => {
    const exec =
      l.exec?.(p.name) ??
      execPlugin({ name: p.name, binDir: l.binDir, apiVersion: p.apiVersion, args: p.args, env: p.env, observe: o.observe });
    return new PluginProvider(p, exec, l.tokenGate ? serviceAccounts : undefined);
  });
  o.log?.v(4, 'Registered credential providers', { providers: providers.map((p) => p.name) });
  return {
    hash,
    names: providers.map((p) => p.name),
    async lookup(repository, pod) {
      // Without the gate the plugins know no pod (upstream passes empty coordinates).
      const who = l.tokenGate ? pod : { namespace: '', name: '', uid: '', serviceAccountName: '' };
      const configs = await Promise.all(
        providers.map((p) =>
          p.provide(repository, who).then(
            (r) => r,
            (e: unknown) => {
              o.log?.error('Failed to provide credentials for image', {
                provider: p.name,
                image: repository,
                err: (e as Error).message,
                ...(l.tokenGate && pod.serviceAccountName
                  ? { pod: `${pod.namespace}/${pod.name}`, podUID: pod.uid, serviceAccount: `${pod.namespace}/${pod.serviceAccountName}` }
                  : {}),
              });
              return { config: {} } as Provided;
            },
          ),
        ),
      );
      // All providers' answers in one keyring, looked up as the pod secrets' are.
      // A token-mode answer is the service account's (upstream's CredentialSource), for the
      // pulled-image records; the others' are node-wide.
      return lookup(
        keyringOf(
          configs.map(({ config, serviceAccount }, i) => ({
            where: `credential provider ${providers[i]!.name}`,
            config,
            ...(serviceAccount ? { source: { serviceAccount } } : {}),
          })),
        ),
        repository,
      );
    },
  };
}
