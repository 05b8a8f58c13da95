// REST paths of the apiserver's resources (upstream's client-go request builder): the core
// group under /api/v1, the others under /apis/GROUP/VERSION; names are path-escaped.

export interface ResourcePath {
  /** '' or absent: the core group. */
  group?: string;
  /** v1 unless given. */
  version?: string;
  resource: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

export function apiPath(r: ResourcePath, query?: Record<string, string>): string {
  const base = r.group ? `/apis/${r.group}/${r.version ?? 'v1'}` : `/api/${r.version ?? 'v1'}`;
  const parts = [base];
  if (r.namespace !== undefined) parts.push('namespaces', encodeURIComponent(r.namespace));
  parts.push(r.resource);
  if (r.name !== undefined) parts.push(encodeURIComponent(r.name));
  if (r.subresource) parts.push(r.subresource);
  const q = query && Object.keys(query).length ? `?${new URLSearchParams(query)}` : '';
  return parts.join('/') + q;
}
