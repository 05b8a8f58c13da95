#!/usr/bin/env -S MALLOC_ARENA_MAX=2 MALLOC_TRIM_THRESHOLD_=131072 MALLOC_MMAP_THRESHOLD_=131072 node --max-semi-space-size=2 --no-maglev --no-opt --heap-growing-percent=50
// (A 2 MB young generation instead of V8's default of up to 32 MB: ~15 MB less resident
// memory under load for a little more scavenging. glibc's malloc with fixed thresholds hands
// freed TLS buffers back to the system instead of keeping them after a burst of API
// requests: ~25 MB less resident memory after one. Without Maglev, V8's middle JIT tier,
// malloc's heap no longer grows to 16-26 MB, as it did
// in most runs of the relist path: 4-18 MB less resident memory, ~10% more of its small CPU.
// The old generation may grow by half its live size before V8 marks it, not up to 4x: a burst
// of 100 pod starts peaked at 136 MB instead of 214 MB, for the same CPU. Without TurboFan,
// its top tier (--no-opt: bytecode and Sparkplug's baseline code only), and with 2 MB
// semi-spaces, 8-13 MB less at idle and with 30 or 100 pods, as little as the upstream kubelet
// or less, for the same CPU a minute with 100 pods probed (12% more with 30) and 20% more over
// a burst: the compiler's pages of the node binary, its zones in malloc's heap and its code
// are never touched.
// All measured in docs/benchmarks.md.)
// kubelet-ts: the command line. Upstream's flag names; a flag overrides the same
// field of the --config file. Any start-up failure is one line and a non-zero exit.
import { type Dirent, readFileSync, readdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { extname, join as joinPath } from 'node:path';
import type { Taint } from 'kubernetes-types/core/v1.js';
import { ignoredSettings, loadKubeletConfig } from '../config/kubelet-config.ts';
import { parseDuration } from '../apiserver/duration.ts';
import { setLogFormat, setVerbosity, logger } from '../log/log.ts';
import { runKubelet } from '../kubelet/kubelet.ts';
import { KUBELET_VERSION } from '../kubelet/options.ts';
import { parseLabels } from './flags.ts';
import { type Flags, parseCommandLine } from './args.ts';
import { flagzFlags } from './flagz.ts';
import { cadvisorContainerdError, givenConfigFlags, program, refusedFlag, type KubeletArgs } from './commands.ts';
import { invalidSystemCgroups } from '../node/system-cgroups.ts';
import { ensureClientCertificate } from '../certificates/client-cert.ts';
import { join } from '../join/join.ts';
import { loadCredentialProviders } from '../images/credential-provider/plugins.ts';
import { featureEnabled } from '../features/gates.ts';
import { gatesNotInEffect } from '../features/kubelet-gates.ts';
import { acquireLockFile } from './lock-file.ts';
import { deprecationLines } from './upstream-flags.ts';
import { loadContainerHints } from '../stats/filesystems.ts';

/** A duration flag's milliseconds, or pflag's one-line refusal. */
function durationFlag(argv: KubeletArgs, name: string): number {
  const text = String(argv[name]);
  const ms = parseDuration(text);
  if (ms === undefined) throw new Error(`invalid argument "${text}" for "--${name}" flag: time: invalid duration "${text}"`);
  return ms;
}

async function startKubelet(argv: KubeletArgs, given: [string, string][], flags: Flags) {
  // pflag writes these to stderr as it sets each flag, before the kubelet checks or logs anything.
  for (const line of deprecationLines(given)) process.stderr.write(`${line}\n`);
  const refused = refusedFlag(argv);
  if (refused) throw new Error(refused);
  if (argv['storage-driver-buffer-duration'] !== undefined) durationFlag(argv, 'storage-driver-buffer-duration');
  const cloudProvider = argv['cloud-provider'];
  // kubelet.go NewMainKubelet: only an external provider is left upstream.
  if (cloudProvider !== '' && cloudProvider !== 'external')
    throw new Error(
      `cloud provider "${cloudProvider}" was specified, but built-in cloud providers are disabled. Please set --cloud-provider=external and migrate to an external cloud provider`,
    );
  const { config, document } = loadKubeletConfig({
    ...(argv.config ? { file: { source: argv.config, text: readConfig('--config', argv.config) } } : {}),
    dropIns: argv['config-dir'] ? dropInFiles(argv['config-dir']).map((f) => ({ source: f, text: readConfig('--config-dir', f) })) : [],
    flags: givenConfigFlags(argv),
  });
  // server.go: the flag or the field.
  if (argv['seccomp-default']) config.seccompDefault = true;
  const containerd = cadvisorContainerdError(argv, config.containerRuntimeEndpoint);
  if (containerd) throw new Error(containerd);
  setVerbosity(config.logging.verbosity);
  setLogFormat(config.logging.format as 'text' | 'json');
  const log = logger('kubelet');
  // What kubelet-ts reads nothing of stops the start when set to anything but upstream's default
  // (kubeadm's zero values are defaults), never silently dropped.
  const ignored = ignoredSettings(document);
  if (ignored.length)
    throw new Error(
      `KubeletConfiguration fields not in effect in kubelet-ts, set away from upstream's defaults: ${ignored.join(', ')} (remove them, or set them to their defaults)`,
    );
  // The same for the gates upstream's kubelet reads and kubelet-ts does not (--feature-gates and
  // featureGates, merged): src/features/kubelet-gates.ts says how each stands.
  const gates = gatesNotInEffect(config.featureGates);
  if (gates.length)
    throw new Error(
      `feature gates not in effect in kubelet-ts, set away from upstream's defaults: ${gates.join(', ')} (remove them, or set them to their defaults)`,
    );
  const minAgeMs = durationFlag(argv, 'minimum-container-ttl-duration');
  const housekeepingMs = durationFlag(argv, 'housekeeping-interval');
  const globalHousekeepingMs = durationFlag(argv, 'global-housekeeping-interval');
  // A zero interval would sample without pause (cAdvisor's would spin); refused instead.
  if (Math.min(housekeepingMs, globalHousekeepingMs) <= 0)
    throw new Error('--housekeeping-interval and --global-housekeeping-interval must be greater than 0');
  const containerHints = loadContainerHints(argv['container-hints']);
  const systemCgroups = {
    kubeletCgroups: config.kubeletCgroups,
    systemCgroups: config.systemCgroups,
    runtimeCgroups: argv['runtime-cgroups'],
  };
  const badCgroups = invalidSystemCgroups(systemCgroups);
  if (badCgroups) throw new Error(badCgroups);
  // kuberuntime_manager.go: either flag registers the plugins. Their configuration is read and
  // checked here, so a bad one stops the start at once; src/kubelet/pod-runtime.ts builds them.
  const credentialConfig = argv['image-credential-provider-config'];
  const credentialBinDir = argv['image-credential-provider-bin-dir'];
  const credentialProviders =
    credentialConfig !== undefined || credentialBinDir !== undefined
      ? loadCredentialProviders({
          configPath: credentialConfig ?? '',
          binDir: credentialBinDir ?? '',
          tokenGate: featureEnabled(config.featureGates, 'KubeletServiceAccountTokenForCredentialProviders'),
        })
      : undefined;
  const certDir = argv['cert-dir'] ?? joinPath(argv['root-dir'], 'pki');
  const nodeName = (argv['hostname-override'] || hostname()).toLowerCase();
  const nodeLabels = parseLabels(argv['node-labels']);
  if (!argv['bootstrap-kubeconfig']) {
    try {
      readFileSync(argv.kubeconfig);
    } catch {
      throw new Error(`cannot read --kubeconfig ${argv.kubeconfig}`);
    }
  }
  // server.go run: the lock is taken before anything talks to the apiserver or the runtime.
  if (argv['exit-on-lock-contention'] && !argv['lock-file']) throw new Error('cannot exit on lock file contention: no lock file specified');
  const lock = argv['lock-file']
    ? await acquireLockFile(argv['lock-file'], argv['exit-on-lock-contention'] === true, logger('lock-file'))
    : undefined;
  await ensureClientCertificate({
    kubeconfig: argv.kubeconfig,
    bootstrapKubeconfig: argv['bootstrap-kubeconfig'],
    certDir,
    nodeName,
    log: logger('certificate'),
  });

  const kubelet = await runKubelet({
    kubeconfig: argv.kubeconfig,
    bootstrapKubeconfig: argv['bootstrap-kubeconfig'],
    config,
    nodeName,
    nodeIP: argv['node-ip'],
    certDir,
    runtimeEndpoint: config.containerRuntimeEndpoint,
    rootDir: argv['root-dir'],
    credentialProviders,
    nodeLabels,
    taints: config.registerWithTaints as Taint[],
    cloudProvider,
    containerGCPolicy: {
      minAgeMs,
      maxPerPodContainer: argv['maximum-dead-containers-per-container'],
      maxContainers: argv['maximum-dead-containers'],
    },
    cniConfDir: argv['cni-conf-dir'],
    networkPlugin: argv['network-plugin'],
    systemCgroups,
    hostIdFiles: { machineID: argv['machine-id-file'], bootID: argv['boot-id-file'] },
    housekeeping: { intervalMs: Math.min(housekeepingMs, globalHousekeepingMs), logUsage: argv['log-cadvisor-usage'] === true },
    containerHints,
    appMetricsLimit: argv['application-metrics-count-limit'],
    allocatableIgnoresEviction: argv['experimental-allocatable-ignore-eviction'] === true,
    flagz: flagzFlags(given, ownDefaults(flags)),
  });
  const exit = async (code: number) => {
    const force = setTimeout(() => process.exit(code), 5000);
    force.unref();
    await kubelet.stop();
    process.exit(code);
  };
  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    process.once(sig, () => {
      log.info('Shutting down on signal; pods keep running', { signal: sig });
      void exit(0);
    });
  }
  // server.go: contention ends run() without an error; pods keep running.
  void lock?.lost.then(({ reason, contended }) => {
    if (contended) log.info('Lock file contention: shutting down; pods keep running', { path: argv['lock-file'], reason });
    else log.error('Lock file lost: shutting down', { path: argv['lock-file'], reason });
    void exit(contended ? 0 : 1);
  });
}

/** The defaults kubelet-ts's flag table declares (the kubelet's own flags'), as /flagz prints them. */
function ownDefaults(flags: Flags): Record<string, string> {
  return Object.fromEntries(
    Object.entries(flags).flatMap(([name, f]) => (f.default === undefined || Array.isArray(f.default) ? [] : [[name, String(f.default)]])),
  );
}

function readConfig(flag: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`cannot read ${flag} ${path}: ${(e as Error).message}`);
  }
}

/** server.go mergeKubeletConfigurations: filepath.WalkDir's order (lexical, depth first), *.conf files only. */
function dropInFiles(dir: string): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (e) {
    throw new Error(`failed to walk through kubelet dropin directory "${dir}": ${(e as Error).message}`);
  }
  return entries
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .flatMap((e) => {
      const path = joinPath(dir, e.name);
      if (e.isDirectory()) return dropInFiles(path);
      return extname(e.name) === '.conf' ? [path] : [];
    });
}

async function main() {
  // kubeadm's preflight reads the version line: 'Kubernetes vX.Y.Z', as the upstream kubelet prints it.
  const line = parseCommandLine(program(`Kubernetes ${KUBELET_VERSION}`), process.argv.slice(2));
  if ('output' in line) return void process.stdout.write(line.output);
  const commands = program('').commands;
  if (line.command === 'kubelet') return startKubelet(line.values as KubeletArgs, line.given, commands.kubelet.flags);
  const argv = line.values;
  setVerbosity(Number(((argv as Record<string, unknown>).v as string[] | undefined)?.at(-1) ?? 0));
  await join({
    endpoint: line.positionals[0]!,
    token: argv.token,
    caHashes: argv['discovery-token-ca-cert-hash'],
    bootstrapKubeconfig: argv['bootstrap-kubeconfig'],
    config: argv.config,
    log: logger('join'),
  });
  await startKubelet(argv as KubeletArgs, line.given, commands.join.flags);
}

main().catch((e: unknown) => {
  // One line, always.
  process.stderr.write(`kubelet-ts: error: ${((e as Error).message ?? String(e)).replace(/\s*\n\s*/g, ' ')}\n`);
  process.exit(1);
});
