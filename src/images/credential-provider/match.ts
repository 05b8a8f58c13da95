// Which images a provider is asked about: its matchImages against the image's repository, as
// upstream's pluginProvider.isImageAllowed over credentialprovider.URLsMatchStr.
import { urlsMatch } from '../keyring.ts';

/**
 * Upstream's ParseSchemelessURL (url.Parse of "https://" + s): the error text of the cases
 * Go's parser refuses that a registry pattern can hit, else no error.
 */
export function parseSchemelessURL(s: string): { error?: string } {
  const url = `https://${s}`;
  const fail = (why: string) => ({ error: `parse ${JSON.stringify(url)}: ${why}` });
  // biome-ignore lint/suspicious/noControlCharactersInRegex: Go's url.Parse refuses ASCII control characters
  if (/[\x00-\x1f\x7f]/.test(s)) return fail('net/url: invalid control character in URL');
  const rest = s.replace(/[?#].*$/, '');
  const slash = rest.indexOf('/');
  const authority = slash < 0 ? rest : rest.slice(0, slash);
  const host = authority.slice(authority.lastIndexOf('@') + 1);
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    if (end < 0) return fail("missing ']' in host");
    const after = host.slice(end + 1);
    if (after && !/^:\d*$/.test(after)) return fail(`invalid port ${JSON.stringify(after)} after host`);
    return {};
  }
  const colon = host.lastIndexOf(':');
  if (colon >= 0 && !/^\d*$/.test(host.slice(colon + 1))) return fail(`invalid port ${JSON.stringify(host.slice(colon))} after host`);
  // Go's unescape in host mode, left to right: a bad %-escape, or a character a host cannot hold.
  for (let i = 0; i < host.length; i++) {
    const c = host[i]!;
    if (c === '%') {
      // In a host only non-ASCII bytes may be escaped, and %25 (RFC 6874).
      const esc = host.slice(i, i + 3);
      if (!/^%[0-9A-Fa-f]{2}$/.test(esc) || (Number.parseInt(esc[1]!, 16) < 8 && esc !== '%25'))
        return fail(`invalid URL escape ${JSON.stringify(esc)}`);
      i += 2;
    } else if (!/[A-Za-z0-9\-._~!$&'()*+,;=:[\]<>"]/.test(c) && c.charCodeAt(0) < 0x80)
      return fail(`invalid character ${JSON.stringify(c)} in host name`);
  }
  const path = slash < 0 ? '' : rest.slice(slash);
  const badEscape = /%(?![0-9A-Fa-f]{2})/.exec(path);
  if (badEscape) return fail(`invalid URL escape ${JSON.stringify(path.slice(badEscape.index, badEscape.index + 3))}`);
  return {};
}

/** Upstream's isImageAllowed: the repository (no tag) matches one of the provider's patterns. */
export function imageAllowed(matchImages: readonly string[], repository: string): boolean {
  return matchImages.some((m) => urlsMatch(m, repository));
}

/** Upstream's parseRegistry: the image's first path element (host and port), the Registry cache key. */
export function registryOf(image: string): string {
  return image.split('/')[0]!;
}
