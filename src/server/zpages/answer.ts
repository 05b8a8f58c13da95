// The whole answer of /statusz or /flagz (status, headers, body) once negotiated, as upstream's
// handlers write it: the text with "text/plain; charset=utf-8"; a document through
// WriteObjectNegotiated, its content type naming group, version and kind; a 406 Status through
// ErrorNegotiated, or WriteRawJSON's indented JSON when no type fits even the Status.
import { stringify as yamlStringify } from 'yaml';
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
 * indented under their key, YAML 1.1's ambiguous scalars (timestamps, yes/no) quoted.
 */
export function goYAML(value: unknown): string {
  return yamlStringify(value, { sortMapEntries: true, lineWidth: 0, indentSeq: false, schema: 'yaml-1.1' });
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
