// The content negotiation of /statusz and /flagz, as upstream's handlers do it
// (k8s.io/apiserver pkg/server/statusz and flagz: handleStatusz, negotiate/, and
// endpoints/handlers/negotiation's NegotiateOutputMediaType over goautoneg's ParseAccept).
// Their serializers, in the codec factory's order: JSON, YAML, then the text one (protobuf
// filtered out; CBOR only with the CBORServingAndStorage gate, alpha and off, which kubelet-ts
// does not read). Text needs no conversion; JSON and YAML need one to a kind the endpoint
// knows (as=Statusz;v=v1beta1;g=config.k8s.io); anything else is 406 with a Status.

/** One clause of an Accept header (goautoneg's Accept). */
export interface AcceptClause {
  type: string;
  subType: string;
  q: number;
  params: Record<string, string>;
}

const trimSpaces = (s: string) => s.replace(/^ +| +$/g, '');

/** Pure: goautoneg.ParseAccept: the clauses, sorted by q then specificity (its insertion sort: stable). */
export function parseAccept(header: string): AcceptClause[] {
  const out: AcceptClause[] = [];
  for (const raw of header.split(',')) {
    const part = trimSpaces(raw);
    if (!part) continue;
    const [mediaRange = '', ...paramParts] = part.split(';');
    const slash = mediaRange.split('/');
    const type = trimSpaces(slash[0]!);
    let subType: string;
    if (slash.length === 1 || slash[1] === '') {
      // "*" alone is "*/*"; any other type without a subtype is dropped.
      if (slash.length > 2 || type !== '*') continue;
      subType = '*';
    } else {
      if (slash.length > 2) continue;
      subType = trimSpaces(slash[1]!);
    }
    const clause: AcceptClause = { type, subType, q: 1, params: {} };
    for (const p of paramParts) {
      const kv = p.split('=');
      if (kv.length !== 2) continue;
      const key = trimSpaces(kv[0]!);
      // strconv.ParseFloat's failure is 0, which only sorts the clause last.
      if (key === 'q') clause.q = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(kv[1]!) ? Number(kv[1]) : 0;
      else clause.params[key] = trimSpaces(kv[1]!);
    }
    out.push(clause);
  }
  const less = (a: AcceptClause, b: AcceptClause) =>
    a.q > b.q || (a.type !== '*' && b.type === '*') || (a.subType !== '*' && b.subType === '*');
  for (let i = 1; i < out.length; i++)
    for (let j = i; j > 0 && less(out[j]!, out[j - 1]!); j--) [out[j], out[j - 1]] = [out[j - 1]!, out[j]!];
  return out;
}

export type StructuredType = 'application/json' | 'application/yaml';
type MediaType = StructuredType | 'text/plain';
/** The endpoint's serializers, in the codec factory's order; only JSON streams. */
const SERIALIZERS: readonly { mediaType: MediaType; type: string; subType: string; streams: boolean }[] = [
  { mediaType: 'application/json', type: 'application', subType: 'json', streams: true },
  { mediaType: 'application/yaml', type: 'application', subType: 'yaml', streams: false },
  { mediaType: 'text/plain', type: 'text', subType: 'plain', streams: false },
];
export const ACCEPTED_TYPES = SERIALIZERS.map((s) => s.mediaType);

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/** An endpoint's rules (negotiation.EndpointRestrictions). */
interface Restrictions {
  allowsTransform(type: string, subType: string, convert: GroupVersionKind | undefined): boolean;
  allowsStreamSchema(schema: string): boolean;
}

export const ZPAGE_GROUP = 'config.k8s.io';
export const ZPAGE_VERSIONS = ['v1alpha1', 'v1beta1'] as const;
export type ZpageVersion = (typeof ZPAGE_VERSIONS)[number];

/** StatuszEndpointRestrictions / FlagzEndpointRestrictions: text unconverted, JSON and YAML to a recognized kind. */
function zpageRestrictions(kind: string): Restrictions {
  return {
    allowsTransform: (type, subType, convert) =>
      type === 'text' && subType === 'plain'
        ? convert === undefined
        : convert !== undefined &&
          convert.group === ZPAGE_GROUP &&
          convert.kind === kind &&
          (ZPAGE_VERSIONS as readonly string[]).includes(convert.version),
    allowsStreamSchema: () => false,
  };
}
/** negotiation.DefaultEndpointRestrictions: what the 406's Status is written with. */
const defaultRestrictions: Restrictions = {
  allowsTransform: (_t, _s, convert) => convert === undefined,
  allowsStreamSchema: (s) => s === 'watch',
};

interface Options {
  mediaType: MediaType;
  convert?: GroupVersionKind;
  pretty: boolean;
}

/** Pure: NegotiateMediaTypeOptions with acceptMediaTypeOptions: the first clause a serializer takes. */
function negotiateOptions(header: string, r: Restrictions): Options | undefined {
  for (const clause of parseAccept(header))
    for (const s of SERIALIZERS) {
      const matches =
        (clause.type === s.type && (clause.subType === s.subType || clause.subType === '*')) ||
        (clause.type === '*' && clause.subType === '*');
      if (!matches) continue;
      const o = acceptOptions(clause.params, s, r);
      if (o) return o;
    }
  return undefined;
}

function acceptOptions(params: Record<string, string>, s: (typeof SERIALIZERS)[number], r: Restrictions): Options | undefined {
  let convert: GroupVersionKind | undefined;
  let pretty = false;
  for (const [k, v] of Object.entries(params)) {
    if (k === 'as' || k === 'g' || k === 'v') {
      convert ??= { group: '', version: '', kind: '' };
      if (k === 'as') convert.kind = v;
      else if (k === 'g') convert.group = v;
      else convert.version = v;
    } else if (k === 'stream') {
      if (v && (!s.streams || !r.allowsStreamSchema(v))) return undefined;
    } else if (k === 'sv') {
      // No endpoint here allows a server version.
      if (v) return undefined;
    } else if (k === 'pretty') pretty = v === '1';
  }
  if (!r.allowsTransform(s.type, s.subType, convert)) return undefined;
  return { mediaType: s.mediaType, convert, pretty };
}

/** negotiation's isPrettyPrint: ?pretty=<bool>, else a browser's or curl's User-Agent. */
export function isPrettyPrint(rawQuery: string, userAgent: string): boolean {
  if (rawQuery.includes('pretty')) {
    const pp = new URLSearchParams(rawQuery).get('pretty');
    if (pp) return ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(pp);
  }
  return userAgent.startsWith('curl') || userAgent.startsWith('Wget') || userAgent.startsWith('Mozilla/5.0');
}

export type Negotiated =
  | { as: 'text' }
  | { as: 'structured'; mediaType: StructuredType; version: ZpageVersion; pretty: boolean }
  /** 406: its Status in `mediaType`, or (no acceptable type at all) as indented JSON, WriteRawJSON's. */
  | { as: 'notAcceptable'; mediaType: StructuredType | undefined; pretty: boolean };

export interface ZpageRequest {
  accept: string;
  rawQuery: string;
  userAgent: string;
}

/** Pure: what handleStatusz and handleFlagz answer for this request's Accept. */
export function negotiateZpage(kind: 'Statusz' | 'Flagz', req: ZpageRequest): Negotiated {
  if (req.accept.trim() === '') return { as: 'text' };
  const pretty = (o: Options) => o.pretty || isPrettyPrint(req.rawQuery, req.userAgent);
  const o = negotiateOptions(req.accept, zpageRestrictions(kind));
  if (!o) {
    // ErrorNegotiated: the Status is negotiated again under the default restrictions.
    const s = negotiateOptions(req.accept, defaultRestrictions);
    return s && s.mediaType !== 'text/plain'
      ? { as: 'notAcceptable', mediaType: s.mediaType, pretty: pretty(s) }
      : { as: 'notAcceptable', mediaType: undefined, pretty: true };
  }
  if (o.mediaType === 'text/plain') return { as: 'text' };
  return { as: 'structured', mediaType: o.mediaType, version: o.convert!.version as ZpageVersion, pretty: pretty(o) };
}
