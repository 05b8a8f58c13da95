// What /flagz shows for this command line: upstream's flagz.NamedFlagSetsReader over the
// kubelet's clean flag set (cmd/kubelet/app/server.go), which visits every flag (VisitAll),
// given or not, and prints each flag's Value.String(): the DefValue for one not given, pflag's
// or cliflag's own rendering of the parsed value for one given (a duration "60s" shows as
// "1m0s", a map sorted by key). The result is plain data the kubelet API's /flagz serves.
import { goDuration, parseDuration } from '../apiserver/duration.ts';
import { CONFIG_FLAGS } from '../config/kubelet-config.ts';
import { type FlagForm, boolMapForm, colonMultimapForm, intForm, langleMapForm, mapForm, stringsForm } from '../config/flag-forms.ts';
import { UPSTREAM_FLAGS } from './upstream-flags.ts';

/**
 * Pure: every flag's value text. `given` is the command line's flags in order ([name, text], a
 * bool one as "true"/"false"); `defaults` the defaults kubelet-ts's own flag table declares,
 * which win over upstream's DefValue where they differ (--kubeconfig), and name the flags
 * kubelet-ts adds (--cni-conf-dir, --network-plugin).
 */
export function flagzFlags(
  given: readonly (readonly [string, string])[],
  defaults: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const types = new Map<string, [type: string, defValue: string]>(UPSTREAM_FLAGS.map(([name, type, def]) => [name, [type, def]]));
  for (const [name, def] of Object.entries(defaults)) types.set(name, [types.get(name)?.[0] ?? 'string', def]);
  const out: Record<string, string> = {};
  for (const [name, [type, def]] of types) {
    const texts = given.filter(([n]) => n === name).map(([, t]) => t);
    out[name] = texts.length ? valueText(name, type, texts) : def;
  }
  return out;
}

/** Pure: a given flag's Value.String() after pflag set it once per text, in order. */
export function valueText(name: string, type: string, texts: readonly string[]): string {
  const last = texts.at(-1)!;
  try {
    switch (type) {
      case 'int':
      case 'int32':
      case 'int64':
      case 'Level':
        return String(intForm(last, undefined));
      case 'duration': {
        const ms = parseDuration(last);
        return ms === undefined ? last : goDuration(ms);
      }
      case 'mapStringString': {
        // cliflag's MapStringString (and its "<" kin for the eviction thresholds): "k=v,..." sorted by key.
        const form = CONFIG_FLAGS.get(name)?.form ?? mapForm;
        const sep = form === langleMapForm ? '<' : '=';
        return sortedPairs(accumulate(form, texts) as Record<string, string>, sep);
      }
      case 'mapStringBool':
        return sortedPairs(accumulate(boolMapForm, texts) as Record<string, boolean>, '=');
      case 'stringSlice':
        return `[${(accumulate(stringsForm, texts) as string[]).map(csvField).join(',')}]`;
      case 'colonSeparatedMultimapStringString': {
        // Sorted by key (a stable sort), each key's values in the order given.
        const m = accumulate(colonMultimapForm, texts) as Record<string, string[]>;
        return Object.keys(m)
          .sort()
          .flatMap((k) => m[k]!.map((v) => `${k}:${v}`))
          .join(',');
      }
      case 'ip':
        return last.includes(':') ? new URL(`http://[${last}]`).hostname.slice(1, -1) : last;
      default:
        // string and bool as given (the parser wrote bools as "true"/"false"); the rarer kinds
        // (taints, reserved memory, vmodule, a quantity) as their last text.
        return last;
    }
  } catch {
    // A text the flag's parser refuses stops the start anyway; shown as given meanwhile.
    return last;
  }
}

function accumulate(form: FlagForm, texts: readonly string[]): unknown {
  return texts.reduce<unknown>((prev, t) => form(t, prev), undefined);
}

function sortedPairs(m: Record<string, string | boolean>, sep: string): string {
  return Object.keys(m)
    .sort()
    .map((k) => `${k}${sep}${m[k]}`)
    .join(',');
}

/** encoding/csv's Writer: a field with a comma, quote or line break, or leading space, is quoted. */
function csvField(f: string): string {
  return /[",\r\n]|^\s/.test(f) ? `"${f.replaceAll('"', '""')}"` : f;
}
