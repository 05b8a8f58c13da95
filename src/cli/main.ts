#!/usr/bin/env -S MALLOC_ARENA_MAX=2 MALLOC_TRIM_THRESHOLD_=131072 MALLOC_MMAP_THRESHOLD_=131072 node --max-semi-space-size=4
// (A 4 MB young generation instead of V8's default of up to 32 MB: ~15 MB less resident
// memory under load for a little more scavenging. glibc's malloc with fixed thresholds hands
// freed TLS buffers back to the system instead of keeping them after a burst of API
// requests: ~25 MB less resident memory after one. Both measured in docs/benchmarks.md.)
// kubelet-ts: the command line. Upstream's flag names; a flag overrides the same
// field of the --config file. Any start-up failure is one line and a non-zero exit.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join as joinPath } from 'node:path';
import yargs, { type Argv } from 'yargs';
import { hideBin } from 'yargs/helpers';
import type { Taint } from 'kubernetes-types/core/v1.js';
import { parseKubeletConfig, defaults, type KubeletConfig } from '../config/kubelet-config.ts';
import { setVerbosity, logger } from '../log/log.ts';
import { runKubelet, KUBELET_VERSION } from '../kubelet/kubelet.ts';
import { parseLabels, parseTaints } from './flags.ts';
import { invalidSystemCgroups } from '../node/system-cgroups.ts';
import { ensureClientCertificate } from '../certificates/client-cert.ts';
import { join } from '../join/join.ts';

const kubeletFlags = (y: Argv) =>
  y
    .option('kubeconfig', {
      type: 'string',
      default: '/etc/kubernetes/kubelet.conf',
      describe: 'kubeconfig with the credentials the kubelet uses to reach the apiserver',
    })
    .option('bootstrap-kubeconfig', {
      type: 'string',
      describe: 'kubeconfig for TLS bootstrap, used when --kubeconfig holds no usable credentials',
    })
    .option('config', { type: 'string', describe: 'KubeletConfiguration file (kubelet.config.k8s.io/v1beta1)' })
    .option('hostname-override', { type: 'string', describe: 'the node name to use instead of the hostname' })
    .option('node-ip', { type: 'string', describe: "the node's InternalIP (default: the first non-loopback IPv4 address)" })
    .option('container-runtime-endpoint', { type: 'string', describe: 'CRI endpoint, e.g. unix:///run/containerd/containerd.sock' })
    .option('root-dir', {
      type: 'string',
      default: '/var/lib/kubelet',
      describe: 'directory for kubelet files (pods, plugins, certificates)',
    })
    .option('cert-dir', { type: 'string', describe: 'directory of the TLS certificates (default ROOT-DIR/pki)' })
    .option('node-labels', { type: 'string', default: '', describe: 'labels to add when registering the node, key=value,...' })
    .option('register-with-taints', {
      type: 'string',
      default: '',
      describe: 'taints to add when registering the node, key=value:Effect,...',
    })
    .option('cni-conf-dir', {
      type: 'string',
      default: '/etc/cni/net.d',
      describe: 'where the runtime reads the pod network config (and --network-plugin=kubenet writes it)',
    })
    .option('network-plugin', {
      choices: ['cni', 'kubenet'] as const,
      default: 'cni' as const,
      describe:
        "cni: the pod network is the runtime's CNI config, installed by a network add-on (upstream's only mode); " +
        "kubenet: with no add-on, the kubelet writes a bridge network for the Node's podCIDR, as the kubenet plugin did before 1.24",
    })
    .option('cgroup-root', { type: 'string', describe: 'the cgroup below which kubepods is made (config field cgroupRoot)' })
    .option('port', { type: 'number', describe: 'port of the kubelet API (config field port)' })
    .option('healthz-port', { type: 'number', describe: 'port of the local healthz endpoint (config field healthzPort)' })
    .option('read-only-port', {
      type: 'number',
      describe: 'port of the unauthenticated read-only API, 0 for none (config field readOnlyPort)',
    })
    .option('kubelet-cgroups', { type: 'string', describe: 'the cgroup the kubelet moves itself into (config field kubeletCgroups)' })
    .option('system-cgroups', {
      type: 'string',
      describe: "the cgroup the root cgroup's non-kernel processes are moved into (config field systemCgroups)",
    })
    .option('runtime-cgroups', {
      type: 'string',
      default: '',
      describe: 'the runtime\'s cgroup, reported as the system container "runtime"',
    })
    .option('v', { type: 'number', default: 0, describe: 'log verbosity' });

type KubeletArgs = Awaited<ReturnType<typeof kubeletFlags>['argv']>;

async function startKubelet(argv: KubeletArgs) {
  setVerbosity(argv.v);
  let config: KubeletConfig = { ...defaults };
  if (argv.config) {
    let text: string;
    try {
      text = readFileSync(argv.config, 'utf8');
    } catch (e) {
      throw new Error(`cannot read --config ${argv.config}: ${(e as Error).message}`);
    }
    config = parseKubeletConfig(text, argv.config);
  }
  if (argv['container-runtime-endpoint']) config.containerRuntimeEndpoint = argv['container-runtime-endpoint'];
  if (argv.port !== undefined) config.port = argv.port;
  if (argv['healthz-port'] !== undefined) config.healthzPort = argv['healthz-port'];
  if (argv['read-only-port'] !== undefined) config.readOnlyPort = argv['read-only-port'];
  if (argv['cgroup-root'] !== undefined) config.cgroupRoot = argv['cgroup-root'];
  if (argv['kubelet-cgroups'] !== undefined) config.kubeletCgroups = argv['kubelet-cgroups'];
  if (argv['system-cgroups'] !== undefined) config.systemCgroups = argv['system-cgroups'];
  const systemCgroups = {
    kubeletCgroups: config.kubeletCgroups,
    systemCgroups: config.systemCgroups,
    runtimeCgroups: argv['runtime-cgroups'],
  };
  const badCgroups = invalidSystemCgroups(systemCgroups);
  if (badCgroups) throw new Error(badCgroups);
  const certDir = argv['cert-dir'] ?? joinPath(argv['root-dir'], 'pki');
  const nodeName = (argv['hostname-override'] || hostname()).toLowerCase();
  if (!argv['bootstrap-kubeconfig']) {
    try {
      readFileSync(argv.kubeconfig);
    } catch {
      throw new Error(`cannot read --kubeconfig ${argv.kubeconfig}`);
    }
  }
  await ensureClientCertificate({
    kubeconfig: argv.kubeconfig,
    bootstrapKubeconfig: argv['bootstrap-kubeconfig'],
    certDir,
    nodeName,
    log: logger('certificate'),
  });

  const kubelet = await runKubelet({
    kubeconfig: argv.kubeconfig,
    config,
    nodeName,
    nodeIP: argv['node-ip'],
    certDir,
    runtimeEndpoint: config.containerRuntimeEndpoint,
    rootDir: argv['root-dir'],
    nodeLabels: parseLabels(argv['node-labels']),
    taints: [...(config.registerWithTaints as Taint[]), ...parseTaints(argv['register-with-taints'])],
    cniConfDir: argv['cni-conf-dir'],
    networkPlugin: argv['network-plugin'],
    systemCgroups,
  });
  const log = logger('kubelet');
  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    process.once(sig, async () => {
      log.info('Shutting down on signal; pods keep running', { signal: sig });
      const force = setTimeout(() => process.exit(0), 5000);
      force.unref();
      await kubelet.stop();
      process.exit(0);
    });
  }
}

async function main() {
  await yargs(hideBin(process.argv))
    .scriptName('kubelet-ts')
    .usage('$0 [flags]\n\nThe Kubernetes node agent, in TypeScript: registers this host as a Node and runs its pods on a CRI runtime.')
    .command('$0', 'run the kubelet', kubeletFlags, startKubelet)
    .command(
      'join <endpoint>',
      'join a kubeadm cluster as a worker (token discovery, as kubeadm join), then run the kubelet',
      (y) =>
        kubeletFlags(y)
          .positional('endpoint', { type: 'string', demandOption: true, describe: 'the apiserver, host:port' })
          .option('token', { type: 'string', demandOption: true, describe: 'bootstrap token, [a-z0-9]{6}.[a-z0-9]{16}' })
          .option('discovery-token-ca-cert-hash', {
            type: 'string',
            array: true,
            default: [] as string[],
            describe: 'sha256:<hex> pin of the cluster CA public key',
          })
          .default('bootstrap-kubeconfig', '/etc/kubernetes/bootstrap-kubelet.conf')
          .default('config', '/var/lib/kubelet/config.yaml'),
      async (argv) => {
        setVerbosity(argv.v);
        await join({
          endpoint: argv.endpoint,
          token: argv.token,
          caHashes: argv['discovery-token-ca-cert-hash'],
          bootstrapKubeconfig: argv['bootstrap-kubeconfig']!,
          config: argv.config!,
          log: logger('join'),
        });
        await startKubelet(argv);
      },
    )
    // kubeadm's preflight reads this line: 'Kubernetes vX.Y.Z', as the upstream kubelet prints it.
    .version(`Kubernetes ${KUBELET_VERSION}`)
    .strict()
    .fail((msg, err) => {
      throw err ?? new Error(msg);
    })
    .parseAsync();
}

main().catch((e: unknown) => {
  // One line, always (yargs' own messages span several).
  process.stderr.write(`kubelet-ts: error: ${((e as Error).message ?? String(e)).replace(/\s*\n\s*/g, ' ')}\n`);
  process.exit(1);
});
