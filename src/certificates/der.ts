// A DER (X.690) writer for the few ASN.1 types that PKCS#10 requests and X.509
// certificates are made of: node:crypto signs and parses them but cannot build them.
// Each function returns one complete element: tag, definite length, contents.

function element(tag: number, contents: Buffer[]): Buffer {
  const body = Buffer.concat(contents);
  const length: number[] = [];
  for (let n = body.length; n > 0; n = Math.floor(n / 256)) length.unshift(n % 256);
  // Short form below 128, else 0x80 | the number of length bytes, then those bytes.
  const header = body.length < 0x80 ? [tag, body.length] : [tag, 0x80 | length.length, ...length];
  return Buffer.concat([Buffer.from(header), body]);
}

export const sequence = (...contents: Buffer[]) => element(0x30, contents);

/** SET OF: DER orders the elements by their encodings. */
export const setOf = (...contents: Buffer[]) => element(0x31, [...contents].sort(Buffer.compare));

/** [n] EXPLICIT, or a constructed [n] IMPLICIT (its contents are those of the replaced SET or SEQUENCE). */
export const contextConstructed = (n: number, ...contents: Buffer[]) => element(0xa0 | n, contents);

/** [n] IMPLICIT over a primitive type (a GeneralName's dNSName or iPAddress). */
export const contextPrimitive = (n: number, bytes: Buffer) => element(0x80 | n, [bytes]);

export const boolean = (value: boolean) => element(0x01, [Buffer.from([value ? 0xff : 0])]);

export const nullValue = () => element(0x05, []);

export const octetString = (bytes: Buffer) => element(0x04, [bytes]);

export const utf8String = (text: string) => element(0x0c, [Buffer.from(text, 'utf8')]);

/** A non-negative INTEGER from a small number or big-endian bytes, minimally encoded. */
export function integer(value: number | Buffer): Buffer {
  let bytes = typeof value === 'number' ? Buffer.from([value]) : value;
  while (bytes.length > 1 && bytes[0] === 0 && bytes[1]! < 0x80) bytes = bytes.subarray(1);
  // A set top bit would read as negative: a leading zero keeps it positive.
  return element(0x02, bytes[0]! & 0x80 ? [Buffer.from([0]), bytes] : [bytes]);
}

/** BIT STRING of whole bytes (a signature, a public key). */
export const bitString = (bytes: Buffer) => element(0x03, [Buffer.from([0]), bytes]);

/** BIT STRING of named bits (KeyUsage): bit 0 is the top bit of the first byte; DER drops trailing zero bits. */
export function namedBits(bits: number[]): Buffer {
  const last = Math.max(...bits);
  const bytes = Buffer.alloc((last >> 3) + 1);
  for (const b of bits) bytes[b >> 3]! |= 0x80 >> (b & 7);
  return element(0x03, [Buffer.from([7 - (last & 7)]), bytes]);
}

export function objectIdentifier(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split('.').map(Number);
  const out: number[] = [];
  // Each arc in base 128, most significant group first, all but the last with the top bit set.
  for (const arc of [first * 40 + second, ...rest]) {
    const groups = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) groups.unshift(0x80 | (v & 0x7f));
    out.push(...groups);
  }
  return element(0x06, [Buffer.from(out)]);
}

/** RFC 5280 4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050; whole seconds, UTC. */
export function time(date: Date): Buffer {
  const iso = date.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits = iso.slice(0, 19).replace(/[-T:]/g, '') + 'Z';
  return date.getUTCFullYear() < 2050 ? element(0x17, [Buffer.from(digits.slice(2))]) : element(0x18, [Buffer.from(digits)]);
}
