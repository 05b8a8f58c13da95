// A pod's hostname and domain (upstream's GeneratePodHostNameAndDomain in kubelet_pods.go):
// the sandbox's kernel hostname (kuberuntime's generatePodSandboxConfig) and the pod's
// /etc/hosts (makeMounts) both come from here. The apiserver validates the names; the kubelet
// only truncates and composes them.
import type { Pod } from 'kubernetes-types/core/v1.js';

/** spec.hostnameOverride (HostnameOverride, beta and on since 1.35): not in kubernetes-types yet. */
type PodSpecWithOverride = NonNullable<Pod['spec']> & { hostnameOverride?: string };

/** Upstream's truncatePodHostnameIfNeeded: 63 characters, no trailing '-' or '.'. */
const truncate = (hostname: string) => (hostname.length > 63 ? hostname.slice(0, 63).replace(/[-.]+$/, '') : hostname);

/**
 * hostnameOverride wins, with no domain, unless the HostnameOverride gate is off (the field is then
 * not looked at); else spec.hostname or the pod's name, and subdomain.namespace.svc.clusterDomain.
 */
export function podHostNameAndDomain(pod: Pod, clusterDomain: string, hostnameOverride = true): { hostname: string; domain: string } {
  const spec = pod.spec as PodSpecWithOverride | undefined;
  if (hostnameOverride && spec?.hostnameOverride) return { hostname: truncate(spec.hostnameOverride), domain: '' };
  const hostname = truncate(spec?.hostname || pod.metadata!.name!);
  const sub = spec?.subdomain;
  const domain = sub ? `${sub}.${pod.metadata?.namespace ?? 'default'}.svc.${clusterDomain}` : '';
  return { hostname, domain };
}

/** The Linux nodename field holds 64 characters (upstream's GetNodenameForKernel). */
const FQDN_MAX = 64;

/**
 * The sandbox's kernel hostname (upstream's GetNodenameForKernel): the FQDN with
 * setHostnameAsFQDN, refused when it does not fit, which keeps the pod from starting
 * (FailedCreatePodSandBox) as upstream.
 */
export function kernelHostname(pod: Pod, clusterDomain: string, hostnameOverride?: boolean): string | { error: string } {
  const { hostname, domain } = podHostNameAndDomain(pod, clusterDomain, hostnameOverride);
  if (!domain || !pod.spec?.setHostnameAsFQDN) return hostname;
  const fqdn = `${hostname}.${domain}`;
  if (fqdn.length > FQDN_MAX)
    return {
      error: `failed to construct FQDN from pod hostname and cluster domain, FQDN ${fqdn} is too long (${FQDN_MAX} characters is the max, ${fqdn.length} characters requested)`,
    };
  return fqdn;
}
