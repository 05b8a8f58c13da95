// How upstream's KubeletConfiguration flags read their text (pflag's and component-base's
// cliflag Value.Set): each form turns one occurrence of a flag into the field's value in its
// v1beta1 JSON form, which the field's codec then decodes and checks as if the --config file
// had it. `previous` is what the same flag's earlier occurrences on this command line gave:
// lists and maps accumulate as pflag's do (the first occurrence replaces the file's value,
// later ones add), scalars are replaced.
import { parseDuration } from '../apiserver/duration.ts';
import { parseQuantity } from '../resources/quantity.ts';

export type FlagForm = (text: string, previous: unknown) => unknown;

export class FlagError extends Error {}

// The reason only: the caller names the flag and its text, as pflag's "invalid argument" error does.
const invalid = (why: string) => new FlagError(why);

/** strconv.ParseBool, as pflag's BoolVar; a bool flag alone on the line is "true". */
export const boolForm: FlagForm = (text) => {
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(text)) return false;
  throw invalid('strconv.ParseBool: invalid syntax');
};

/** Int32Var/Int64Var: strconv.ParseInt with base 0 (0x.., 0o.., 0b.. too). */
export const intForm: FlagForm = (text) => {
  const m = /^([+-]?)(0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|\d[\d_]*)$/.exec(text);
  if (!m) throw invalid('strconv.ParseInt: invalid syntax');
  const digits = m[2]!.replaceAll('_', '');
  const n = /^0\d/.test(digits) ? Number.parseInt(digits, 8) : Number(digits);
  return m[1] === '-' ? -n : n;
};

export const stringForm: FlagForm = (text) => text;

/** DurationVar: Go's time.ParseDuration; the document keeps the text. */
export const durationForm: FlagForm = (text) => {
  if (parseDuration(text) === undefined) throw invalid('time: invalid duration');
  return text;
};

/** resource.QuantityValue (--log-text-info-buffer-size). */
export const quantityForm: FlagForm = (text) => {
  if (parseQuantity(text) === undefined) throw invalid('quantities must match the regular expression');
  return text;
};

/** StringSliceVar: comma-separated, repeats append. */
export const stringsForm: FlagForm = (text, previous) => [...((previous as string[] | undefined) ?? []), ...(text ? text.split(',') : [])];

/** cliflag.MapStringString and its kin: "k=v,k2=v2" (sep "<" for the eviction thresholds), keys and values trimmed. */
function pairsForm(sep: string, split: boolean, value: (v: string) => unknown = (v) => v): FlagForm {
  return (text, previous) => {
    const out: Record<string, unknown> = { ...((previous as Record<string, unknown> | undefined) ?? {}) };
    for (const pair of split ? text.split(',') : [text]) {
      if (split && !pair) continue;
      const at = pair.indexOf(sep);
      if (at < 0) throw invalid(`malformed pair, expect string${sep}string`);
      out[pair.slice(0, at).trim()] = value(pair.slice(at + 1).trim());
    }
    return out;
  };
}
export const mapForm = pairsForm('=', true);
/** NewLangleSeparatedMapStringString: --eviction-hard memory.available<1Gi. */
export const langleMapForm = pairsForm('<', true);
/** NewMapStringStringNoSplit: one pair an occurrence (--cpu-manager-policy-options). */
export const mapNoSplitForm = pairsForm('=', false);
/** NewMapStringBool: --feature-gates A=true,B=false. */
export const boolMapForm = pairsForm('=', true, (v) => {
  try {
    return boolForm(v, undefined);
  } catch {
    throw invalid(`invalid value of ${v}`);
  }
});

/** NewColonSeparatedMultimapStringString: --manifest-url-header 'a:hello,b:again'; repeats append. */
export const colonMultimapForm: FlagForm = (text, previous) => {
  const out: Record<string, string[]> = { ...((previous as Record<string, string[]> | undefined) ?? {}) };
  for (const pair of text.split(',')) {
    if (!pair) continue;
    const at = pair.indexOf(':');
    if (at < 0) throw invalid('malformed pair, expect string:string');
    const k = pair.slice(0, at).trim();
    out[k] = [...(out[k] ?? []), pair.slice(at + 1).trim()];
  }
  return out;
};

/** utilflag.RegisterWithTaintsVar: "key=value:Effect,key:Effect"; each occurrence replaces. */
export const taintsForm: FlagForm = (text) =>
  text
    .split(',')
    .filter(Boolean)
    .map((t) => {
      const m = /^([^=:]+)(?:=([^:]*))?:(NoSchedule|PreferNoSchedule|NoExecute)$/.exec(t.trim());
      if (!m) throw invalid(`invalid taint spec "${t}": want key[=value]:NoSchedule|PreferNoSchedule|NoExecute`);
      return { key: m[1]!, ...(m[2] !== undefined ? { value: m[2] } : {}), effect: m[3]! };
    });

/** utilflag.ReservedMemoryVar: "0:memory=1Gi,hugepages-1M=2Gi"; repeats append. */
export const reservedMemoryForm: FlagForm = (text, previous) => {
  const m = /^(\d+):(.+)$/.exec(text);
  if (!m) throw invalid('the reserved memory has incorrect format, expected numaNodeID:type=quantity[,type=quantity...]');
  const limits = mapForm(m[2]!, undefined) as Record<string, string>;
  for (const q of Object.values(limits)) if (parseQuantity(q) === undefined) throw invalid(`failed to parse the quantity ${q}`);
  return [...((previous as unknown[] | undefined) ?? []), { numaNode: Number(m[1]), limits }];
};

/** klog's --vmodule "pattern=N,...", as logging.vmodule's list. */
export const vmoduleForm: FlagForm = (text) =>
  text
    .split(',')
    .filter(Boolean)
    .map((p) => {
      const m = /^([^=]+)=(\d+)$/.exec(p);
      if (!m) throw invalid('expect comma-separated list of pattern=N');
      return { filePattern: m[1]!, verbosity: Number(m[2]) };
    });
