// The whole answer of /statusz or /flagz (status, headers, body) once negotiated, as upstream's
// handlers write it: the text with "text/plain; charset=utf-8"; a document through
// WriteObjectNegotiated, its content type naming group, version and kind; a 406 Status through
// ErrorNegotiated, or WriteRawJSON's indented JSON when no type fits even the Status.
import { Document, parse as yamlParse, visit } from 'yaml';
import { ACCEPTED_TYPES, type Negotiated, type StructuredType, type ZpageVersion } from './negotiate.ts';

export interface ZpageAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface ZpageContent {
  kind: 'Statusz' | 'Flagz';
  text(): string;
  document(version: ZpageVersion): object;
}

/** encoding/json escapes these inside strings (SetEscapeHTML's default), where JSON.stringify keeps them. */
const goEscapes = (json: string) => json.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** Pure: the json serializer's Encode (json.Encoder: compact and a newline) or its pretty one (MarshalIndent, no newline). */
export function goJSON(value: unknown, pretty: boolean): string {
  return pretty ? goEscapes(JSON.stringify(value, null, 2)) : `${goEscapes(JSON.stringify(value))}\n`;
}

/**
 * Pure: the yaml serializer's (sigs.k8s.io/yaml JSONToYAML, goyaml.v2): keys sorted, lists not
 * indented under their key; a string YAML 1.1 would read as another type ("true", "1.36", a
 * timestamp, "") double-quoted, one plain cannot hold ("[]", "*") single-quoted, as v2's emitter.
 */
export function goYAML(value: unknown): string {
  const doc = new Document(value, { sortMapEntries: true });
  visit(doc, {
    Scalar(key, node) {
      if (key !== 'key' && typeof node.value === 'string' && readsAsOtherScalar(node.value)) node.type = 'QUOTE_DOUBLE';
    },
  });
  return doc.toString({ lineWidth: 0, indentSeq: false, singleQuote: true });
}

/** v2's resolve: the plain scalar is a null, bool, number or timestamp in YAML 1.1 (a flow collection is not: its text stays a string). */
function readsAsOtherScalar(s: string): boolean {
  if (s === '') return true;
  try {
    const v: unknown = yamlParse(s, { schema: 'yaml-1.1' });
    return v === null || typeof v === 'boolean' || typeof v === 'number' || typeof v === 'bigint' || v instanceof Date;
  } catch {
    return false;
  }
}

const encode = (mediaType: StructuredType, value: unknown, pretty: boolean) =>
  mediaType === 'application/json' ? goJSON(value, pretty) : goYAML(value);

/** Pure: the answer to a negotiated request. */
export function zpageAnswer(n: Negotiated, c: ZpageContent): ZpageAnswer {
  switch (n.as) {
    case 'text':
      return { status: 200, headers: { 'Content-Type': 'text/plain; charset=utf-8' }, body: c.text() };
    case 'structured': {
      const headers: Record<string, string> = {
        'Content-Type': `${n.mediaType};g=config.k8s.io;v=${n.version};as=${c.kind}`,
      };
      if (n.version === 'v1alpha1')
        headers.Warning = `299 - "This version of the ${c.kind.toLowerCase()} endpoint is deprecated. Please use a newer version."`;
      return { status: 200, headers, body: encode(n.mediaType, c.document(n.version), n.pretty) };
    }
    case 'notAcceptable': {
      const status = {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: `only the following media types are accepted: ${ACCEPTED_TYPES.join(', ')}`,
        reason: 'NotAcceptable',
        code: 406,
      };
      return n.mediaType
        ? { status: 406, headers: { 'Content-Type': n.mediaType }, body: encode(n.mediaType, status, n.pretty) }
        : { status: 406, headers: { 'Content-Type': 'application/json' }, body: goJSON(status, true) };
    }
  }
}
