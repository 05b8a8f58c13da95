// --node-labels, parsed as upstream's.

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
