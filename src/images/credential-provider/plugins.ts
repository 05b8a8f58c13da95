// The credential providers of --image-credential-provider-config and -bin-dir, registered at
// start as upstream's RegisterCredentialProviderPlugins (an error refuses the start), and the
// keyring they make for a pull (upstream's externalCredentialProviderKeyring.Lookup).
import { accessSync, constants, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../log/log.ts';
import { keyringOf, lookup, type RegistryAuth } from '../keyring.ts';
import { aggregate, readConfig, validateConfig } from './config.ts';
import { execPlugin, type ExecPlugin, type PluginObserver } from './exec.ts';
import { PluginProvider, type PullingPod, type ServiceAccountAccess } from './provider.ts';

export interface CredentialProviders {
  /** sha256 of the config files, upstream's kubelet_credential_provider_config_info hash label. */
  readonly hash: string;
  readonly names: readonly string[];
  /** Token mode's access to the apiserver, once the kubelet has its client (before the first pull). */
  bind(serviceAccounts: ServiceAccountAccess): void;
  /** The plugins' credentials for a repository, in the keyring's order; a failing plugin is logged and gives none. */
  lookup(repository: string, pod: PullingPod): Promise<RegistryAuth[]>;
}

export interface RegisterOptions {
  configPath: string;
  binDir: string;
  /** KubeletServiceAccountTokenForCredentialProviders. */
  tokenGate: boolean;
  observe?: PluginObserver;
  log?: Logger;
  /** Tests replace the exec of a provider. */
  exec?: (provider: string) => ExecPlugin;
}

/** Throws one line, as upstream's kubelet exits with it ("Failed to register CRI auth plugins"). */
export function registerCredentialProviders(o: RegisterOptions): CredentialProviders {
  try {
    statSync(o.binDir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(`plugin binary directory ${o.binDir} did not exist`);
    throw new Error(`error inspecting binary directory ${o.binDir}: ${(e as Error).message}`);
  }
  const { config, hash } = readConfig(o.configPath);
  const errs = validateConfig(config, o.tokenGate);
  let bound: ServiceAccountAccess | undefined;
  const unbound = () => new Error('the kubelet has no apiserver client yet');
  // Token mode reaches the apiserver through whatever bind gave.
  const serviceAccounts: ServiceAccountAccess = {
    getServiceAccount: (ns, name) => (bound ? bound.getServiceAccount(ns, name) : Promise.reject(unbound())),
    token: (k) => (bound ? bound.token(k) : Promise.reject(unbound())),
  };
  if (errs.length) throw new Error(`failed to validate credential provider config: ${aggregate(errs)}`);
  const providers = config.providers.map((p) => {
    const bin = join(o.binDir, p.name);
    if (!o.exec) {
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
    const exec =
      o.exec?.(p.name) ??
      execPlugin({ name: p.name, binDir: o.binDir, apiVersion: p.apiVersion, args: p.args, env: p.env, observe: o.observe });
    return new PluginProvider(p, exec, o.tokenGate ? serviceAccounts : undefined);
  });
  o.log?.v(4, 'Registered credential providers', { providers: providers.map((p) => p.name) });
  return {
    hash,
    names: providers.map((p) => p.name),
    bind(access) {
      bound = access;
    },
    async lookup(repository, pod) {
      // Without the gate the plugins know no pod (upstream passes empty coordinates).
      const who = o.tokenGate ? pod : { namespace: '', name: '', uid: '', serviceAccountName: '' };
      const configs = await Promise.all(
        providers.map((p) =>
          p.provide(repository, who).then(
            (r) => r.config,
            (e: unknown) => {
              o.log?.error('Failed to provide credentials for image', {
                provider: p.name,
                image: repository,
                err: (e as Error).message,
                ...(o.tokenGate && pod.serviceAccountName
                  ? { pod: `${pod.namespace}/${pod.name}`, podUID: pod.uid, serviceAccount: `${pod.namespace}/${pod.serviceAccountName}` }
                  : {}),
              });
              return {};
            },
          ),
        ),
      );
      // All providers' answers in one keyring, looked up as the pod secrets' are.
      return lookup(keyringOf(configs.map((config, i) => ({ where: `credential provider ${providers[i]!.name}`, config }))), repository);
    },
  };
}
