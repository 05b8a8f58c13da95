// apimachinery's validation.IsQualifiedName ([prefix/]name, the prefix a DNS subdomain) with its
// messages: the names of credential provider settings and of flexVolume drivers are checked by it.
const NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** apimachinery's IsQualifiedName messages; none for a valid name. */
export function qualifiedNameErrors(value: string): string[] {
  const parts = value.split('/');
  let name = value;
  const errs: string[] = [];
  if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (!prefix) errs.push('prefix part must be non-empty');
    else {
      if (prefix.length > 253) errs.push('prefix part must be no more than 253 bytes');
      if (!SUBDOMAIN.test(prefix))
        errs.push(
          "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        );
    }
  } else if (parts.length > 2) {
    return [
      "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (!name) errs.push('name part must be non-empty');
  else if (name.length > 63) errs.push('name part must be no more than 63 bytes');
  if (name && !NAME.test(name))
    errs.push(
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    );
  return errs;
}
