// The node log query refuses a pattern that Go's regexp/syntax.Parse(pattern, syntax.Perl)
// refuses (upstream nodeLogQuery.validate), with Go's message. A JavaScript RegExp accepts
// and refuses different things (lookarounds, backreferences, \q), so this scans RE2's
// Perl syntax for its common errors instead. Not covered: Unicode class names (\p{Foo} is
// accepted here) and RE2's size and nesting limits; journalctl refuses what it cannot compile.

const code = (what: string, expr: string) => `error parsing regexp: ${what}: \`${expr}\``;
const POSIX_CLASSES = new Set([
  'alnum',
  'alpha',
  'ascii',
  'blank',
  'cntrl',
  'digit',
  'graph',
  'lower',
  'print',
  'punct',
  'space',
  'upper',
  'word',
  'xdigit',
]);
const isAlnum = (c: string) => /^[A-Za-z0-9]$/.test(c);

/**
 * Pure: the escape starting at s[i] ('\\'): its length, whether it is a class (\d, \pL) rather
 * than one character, or the error Go reports (parseEscape, parsePerlClassEscape, parseUnicodeClass).
 */
function parseEscape(s: string, i: number, inClass: boolean): { len: number; value?: number; error?: string } {
  const c = s[i + 1];
  if (c === undefined) return { len: 1, error: code('trailing backslash at end of expression', '') };
  if ('dDsSwW'.includes(c)) return { len: 2 };
  if (c === 'p' || c === 'P') {
    if (s[i + 2] === '{') {
      const end = s.indexOf('}', i + 2);
      if (end < 0) return { len: 2, error: code('invalid character class range', s.slice(i)) };
      return { len: end - i + 1 };
    }
    return s[i + 2] === undefined ? { len: 2, error: code('invalid character class range', s.slice(i)) } : { len: 3 };
  }
  if (!inClass && 'AbBz'.includes(c)) return { len: 2 };
  // \1 alone would be a backreference, which RE2 lacks; \12 is octal.
  if (c === '0' || (c >= '1' && c <= '7' && s[i + 2]! >= '0' && s[i + 2]! <= '7')) {
    let n = 2;
    while (n < 4 && s[i + n] >= '0' && s[i + n] <= '7') n++;
    return { len: n, value: Number.parseInt(s.slice(i + 1, i + n), 8) };
  }
  if (c === 'x') {
    if (s[i + 2] === '{') {
      const m = /^\\x\{([0-9A-Fa-f]+)\}/.exec(s.slice(i));
      if (!m || Number.parseInt(m[1]!, 16) > 0x10ffff) {
        const close = s.indexOf('}', i);
        return { len: 2, error: code('invalid escape sequence', s.slice(i, close < 0 ? undefined : close)) };
      }
      return { len: m[0].length, value: Number.parseInt(m[1]!, 16) };
    }
    const m = /^\\x([0-9A-Fa-f]{2})/.exec(s.slice(i));
    if (!m) return { len: 2, error: code('invalid escape sequence', s.slice(i, i + 4)) };
    return { len: 4, value: Number.parseInt(m[1]!, 16) };
  }
  const simple: Record<string, number> = { a: 7, f: 12, n: 10, r: 13, t: 9, v: 11 };
  if (c in simple) return { len: 2, value: simple[c] };
  // Any ASCII punctuation may be escaped; letters and digits only as listed above.
  if (c.charCodeAt(0) < 0x80 && !isAlnum(c)) return { len: 2, value: c.charCodeAt(0) };
  return { len: 2, error: code('invalid escape sequence', s.slice(i, i + 2)) };
}

/** Pure: the class at s[i] ('['): its length or Go's error (parseClass). */
function charClass(s: string, i: number): { len: number; error?: string } {
  let j = i + 1;
  if (s[j] === '^') j++;
  let first = true;
  while (j < s.length && (s[j] !== ']' || first)) {
    first = false;
    if (s.startsWith('[:', j)) {
      const end = s.indexOf(':]', j + 2);
      if (end >= 0) {
        const name = s.slice(j + 2, end).replace(/^\^/, '');
        if (!POSIX_CLASSES.has(name)) return { len: 0, error: code('invalid character class range', s.slice(j, end + 2)) };
        j = end + 2;
        continue;
      }
    }
    const lo = classChar(s, j);
    if (lo.error) return { len: 0, error: lo.error };
    const start = j;
    j += lo.len;
    if (s[j] === '-' && s[j + 1] !== undefined && s[j + 1] !== ']' && lo.value !== undefined) {
      const hi = classChar(s, j + 1);
      if (hi.error) return { len: 0, error: hi.error };
      if (hi.value === undefined) return { len: 0, error: code('invalid character class range', s.slice(start, j + 1 + hi.len)) };
      if (hi.value < lo.value) return { len: 0, error: code('invalid character class range', s.slice(start, j + 1 + hi.len)) };
      j += 1 + hi.len;
    }
  }
  if (j >= s.length) return { len: 0, error: code('missing closing ]', s.slice(i)) };
  return { len: j + 1 - i };
}

function classChar(s: string, j: number): { len: number; value?: number; error?: string } {
  if (s[j] !== '\\') {
    const cp = s.codePointAt(j)!;
    return { len: cp > 0xffff ? 2 : 1, value: cp };
  }
  return parseEscape(s, j, true);
}

/** Pure: the group opener at s[i] ('(?'): its length or Go's error (parsePerlFlags). */
function perlGroup(s: string, i: number): { len: number; capture: boolean; error?: string } {
  const t = s.slice(i);
  if (t.startsWith('(?P<') || t.startsWith('(?<')) {
    const begin = t.startsWith('(?P<') ? 4 : 3;
    const end = t.indexOf('>');
    if (end < 0) return { len: 0, capture: true, error: code('invalid named capture', t) };
    if (!/^[A-Za-z0-9_]+$/.test(t.slice(begin, end)))
      return { len: 0, capture: true, error: code('invalid named capture', t.slice(0, end + 1)) };
    return { len: end + 1, capture: true };
  }
  let j = 2;
  let sawFlag = false;
  let negated = false;
  for (; j < t.length; j++) {
    const c = t[j]!;
    if ('imsU'.includes(c)) sawFlag = true;
    else if (c === '-' && !negated) {
      negated = true;
      sawFlag = false;
    } else if ((c === ':' || c === ')') && (!negated || sawFlag)) return { len: j + 1, capture: c === ':' };
    else break;
  }
  return { len: 0, capture: false, error: code('invalid or unsupported Perl syntax', t.slice(0, j + 1)) };
}

/** Pure: upstream's syntax.Parse(pattern, syntax.Perl) error text, or undefined when it parses. */
export function goRegexpSyntaxError(s: string): string | undefined {
  let depth = 0;
  // Whether a repetition has an operand before it, and where the last repetition began (Go
  // refuses a** and a{2}* but not (a*)*).
  let operand = false;
  let lastRepeat = -1;
  for (let i = 0; i < s.length; ) {
    const c = s[i]!;
    let repeat = 0;
    if (c === '*' || c === '+' || c === '?') repeat = 1;
    else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(s.slice(i));
      if (m) {
        const lo = Number(m[1]);
        const hi = m[2] === undefined ? lo : m[3] === '' ? -1 : Number(m[3]);
        if (lo > 1000 || hi > 1000 || (hi >= 0 && hi < lo)) return code('invalid repeat count', m[0]);
        repeat = m[0].length;
      }
    }
    if (repeat) {
      let len = repeat;
      if (s[i + len] === '?') len++;
      if (lastRepeat >= 0) return code('invalid nested repetition operator', s.slice(lastRepeat, i + len));
      if (!operand) return code('missing argument to repetition operator', s.slice(i, i + len));
      lastRepeat = i;
      i += len;
      continue;
    }
    lastRepeat = -1;
    if (c === '(') {
      let len = 1;
      if (s[i + 1] === '?') {
        const g = perlGroup(s, i);
        if (g.error) return g.error;
        len = g.len;
        // (?i) sets flags and opens nothing.
        if (s[i + len - 1] === ')') {
          i += len;
          continue;
        }
      }
      depth++;
      operand = false;
      i += len;
    } else if (c === ')') {
      if (depth === 0) return code('unexpected )', s);
      depth--;
      operand = true;
      i++;
    } else if (c === '|') {
      operand = false;
      i++;
    } else if (c === '[') {
      const r = charClass(s, i);
      if (r.error) return r.error;
      operand = true;
      i += r.len;
    } else if (c === '\\') {
      if (s[i + 1] === 'Q') {
        const end = s.indexOf('\\E', i + 2);
        operand = operand || end !== i + 2;
        i = end < 0 ? s.length : end + 2;
        continue;
      }
      if (s[i + 1] === 'C') return code('invalid escape sequence', '\\C');
      const e = parseEscape(s, i, false);
      if (e.error) return e.error;
      operand = true;
      i += e.len;
    } else {
      operand = true;
      i += s.codePointAt(i)! > 0xffff ? 2 : 1;
    }
  }
  return depth > 0 ? code('missing closing )', s) : undefined;
}
