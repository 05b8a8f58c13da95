// PUT /debug/flags/v: the log verbosity at run time (upstream's InstallDebugFlagsHandler, the
// apiserver's routes.StringFlagPutHandler over component-base's logs.GlogSetter).
import type { Handler, Response } from './router.ts';
import { goQuote } from '../log/go-quote.ts';

/** GlogSetter, pure: the verbosity a body sets (strconv.ParseUint(val, 10, 32)), or Go's error. */
export function parseVerbosity(val: string): { v: number } | { error: string } {
  if (!/^\d+$/.test(val)) return { error: `strconv.ParseUint: parsing ${goQuote(val)}: invalid syntax` };
  const v = Number(val);
  if (v > 0xffff_ffff) return { error: `strconv.ParseUint: parsing ${goQuote(val)}: value out of range` };
  return { v };
}

/** writePlainText: the text and a newline (fmt.Fprintln). */
function writePlainText(res: Response, status: number, text: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain', 'X-Content-Type-Options': 'nosniff' });
  res.end(`${text}\n`);
}

/** A verbosity is a few digits; a body past this is refused as Go's MaxBytesReader would word it. */
const MAX_BODY = 64 * 1024;

/** StringFlagPutHandler(GlogSetter): PUT sets, any other method 406. */
export function debugFlagsHandler(setVerbosity: (v: number) => void): Handler {
  return async (req, res) => {
    if (req.method !== 'PUT') return writePlainText(res, 406, 'unsupported http method');
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of req as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > MAX_BODY) throw new Error('http: request body too large');
        chunks.push(chunk);
      }
    } catch (e) {
      return writePlainText(res, 400, `error reading request body: ${(e as Error).message}`);
    }
    const val = Buffer.concat(chunks).toString('utf8');
    const r = parseVerbosity(val);
    if ('error' in r) return writePlainText(res, 400, r.error);
    setVerbosity(r.v);
    writePlainText(res, 200, `successfully set klog.logging.verbosity to ${val}`);
  };
}
