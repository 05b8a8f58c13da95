// The kubelet and container rule groups of kube-prometheus-stack (the kubernetes-mixin's rules,
// rendered by `helm template`, hack/tools/monitoring-rules.sh), gathered from its PrometheusRule
// objects into one Prometheus rule file ({groups: [...]}, what the Prometheus Operator writes
// for Prometheus and what promtool reads): the groups whose rules read the kubelet's /metrics and
// /metrics/cadvisor.

/** The groups kept: by name, and every k8s.rules.container_* group (the container_* recording rules). */
export const KUBELET_GROUPS = ['kubernetes-system-kubelet', 'kubernetes-resources', 'kubelet.rules', 'kubernetes-storage'];
export const KUBELET_GROUP_PREFIXES = ['k8s.rules.container_'];

export interface RuleGroup {
  name: string;
  rules: Record<string, unknown>[];
  [k: string]: unknown;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The wanted groups of the PrometheusRule objects among docs (other kinds skipped), in the order
 * met. Throws, naming them, when a group named in names is in none of them, or when a group
 * name appears twice (Prometheus refuses a file with a duplicate group name).
 */
export function selectGroups(
  docs: unknown[],
  names: string[] = KUBELET_GROUPS,
  prefixes: string[] = KUBELET_GROUP_PREFIXES,
): { groups: RuleGroup[] } {
  const groups: RuleGroup[] = [];
  for (const doc of docs) {
    if (!isRecord(doc) || doc.kind !== 'PrometheusRule' || !isRecord(doc.spec)) continue;
    for (const g of Array.isArray(doc.spec.groups) ? doc.spec.groups : []) {
      if (!isRecord(g) || typeof g.name !== 'string') continue;
      const name = g.name;
      if (!names.includes(name) && !prefixes.some((p) => name.startsWith(p))) continue;
      if (groups.some((o) => o.name === name)) throw new Error(`rule group ${name} appears twice`);
      groups.push(g as RuleGroup);
    }
  }
  const missing = names.filter((n) => !groups.some((g) => g.name === n));
  if (missing.length > 0) throw new Error(`no rule group ${missing.join(', ')} in the PrometheusRule objects`);
  for (const p of prefixes)
    if (!groups.some((g) => g.name.startsWith(p))) throw new Error(`no rule group ${p}* in the PrometheusRule objects`);
  return { groups };
}
