// Upstream's list-valued flags, parsed the same way.
import type { Taint } from 'kubernetes-types/core/v1.js';

/** "k=v,k2=v2" as upstream's --node-labels. */
export function parseLabels(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of text.split(',').filter(Boolean)) {
    const [k, v = ''] = kv.split('=');
    if (!k) throw new Error(`invalid --node-labels entry "${kv}"`);
    out[k.trim()] = v.trim();
  }
  return out;
}

/** "key=value:Effect,key:Effect" as upstream's --register-with-taints. */
export function parseTaints(text: string): Taint[] {
  return text
    .split(',')
    .filter(Boolean)
    .map((t) => {
      const m = /^([^=:]+)(?:=([^:]*))?:(NoSchedule|PreferNoSchedule|NoExecute)$/.exec(t.trim());
      if (!m) throw new Error(`invalid --register-with-taints entry "${t}": want key[=value]:NoSchedule|PreferNoSchedule|NoExecute`);
      return { key: m[1]!, ...(m[2] !== undefined ? { value: m[2] } : {}), effect: m[3]! };
    });
}
