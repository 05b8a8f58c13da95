// /flagz's content (k8s.io/apiserver pkg/server/flagz: the Flagz types and
// flagzTextSerializer.Encode) over the flags the command line gave (src/cli/flagz.ts).
import type { ZpageVersion } from './negotiate.ts';
import { STATUSZ_WARNING } from './statusz.ts';

export interface FlagzDocument {
  kind: 'Flagz';
  apiVersion: string;
  metadata: { name: string };
  flags?: Record<string, string>;
}

const sortedKeys = (flags: Record<string, string>) => Object.keys(flags).sort();

/** Pure: the v1alpha1 or v1beta1 Flagz; flags sorted by name (encoding/json sorts a map's keys), omitted when none. */
export function flagzDocument(component: string, flags: Record<string, string>, version: ZpageVersion): FlagzDocument {
  const keys = sortedKeys(flags);
  return {
    kind: 'Flagz',
    apiVersion: `config.k8s.io/${version}`,
    metadata: { name: component },
    ...(keys.length ? { flags: Object.fromEntries(keys.map((k) => [k, flags[k]!])) } : {}),
  };
}

/** Pure: flagzTextSerializer.Encode: the header, then "name<sep>value" a line, sorted by name, not escaped. */
export function flagzText(component: string, flags: Record<string, string>, sep: string): string {
  return `\n${component} flagz\n${STATUSZ_WARNING}\n${sortedKeys(flags)
    .map((k) => `${k}${sep}${flags[k]}\n`)
    .join('')}`;
}
