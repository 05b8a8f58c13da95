// The /statusz and /flagz handlers (upstream's statusz.Install and flagz.Install on the
// kubelet's container: Handle, so any method, the path exactly). The effects only: the clock,
// the random delimiter and the process's zone; the rest is answer.ts and its parts.
import type { Handler, Response } from '../router.ts';
import { type ZpageAnswer, type ZpageContent, zpageAnswer } from './answer.ts';
import { flagzDocument, flagzText } from './flagz.ts';
import { negotiateZpage } from './negotiate.ts';
import { DELIMITERS, type StatuszFacts, statuszDocument, statuszText, type Zone } from './statusz.ts';

// Upstream's ComponentKubelet.
const COMPONENT = 'kubelet';

const randomDelimiter = () => DELIMITERS[Math.floor(Math.random() * DELIMITERS.length)]!;

/** The process's zone at t, as Go's time.Local names it (UTC on a node without TZ). */
function localZone(t: Date): Zone {
  const offsetMinutes = -t.getTimezoneOffset();
  const name =
    new Intl.DateTimeFormat('en-US', { timeZoneName: 'short' }).formatToParts(t).find((p) => p.type === 'timeZoneName')?.value ?? 'UTC';
  return { offsetMinutes, name: offsetMinutes === 0 && /^(GMT|UTC)$/.test(name) ? 'UTC' : name };
}

function handler(content: ZpageContent): Handler {
  return (req, res) => {
    const n = negotiateZpage(content.kind, {
      accept: req.headers.accept ?? '',
      rawQuery: req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '',
      userAgent: req.headers['user-agent'] ?? '',
    });
    write(res, zpageAnswer(n, content));
  };
}

function write(res: Response, a: ZpageAnswer): void {
  const body = Buffer.from(a.body);
  res.statusCode = a.status;
  for (const [k, v] of Object.entries(a.headers)) res.setHeader(k, v);
  res.setHeader('Content-Length', body.length);
  if (res.req.method === 'HEAD') res.end();
  else res.end(body);
}

/** /statusz: a fresh delimiter and uptime each time, as upstream's. */
export function statuszHandler(facts: StatuszFacts, now: () => Date = () => new Date()): Handler {
  return handler({
    kind: 'Statusz',
    text: () => {
      const t = now();
      return statuszText(COMPONENT, facts, t, randomDelimiter(), localZone(facts.startTime));
    },
    document: (version) => statuszDocument(COMPONENT, facts, version, now()),
  });
}

/** /flagz: the text is drawn once and kept (upstream's cachedPlainTextResponse). */
export function flagzHandler(flags: Record<string, string>): Handler {
  let text: string | undefined;
  return handler({
    kind: 'Flagz',
    text: () => (text ??= flagzText(COMPONENT, flags, randomDelimiter())),
    document: (version) => flagzDocument(COMPONENT, flags, version),
  });
}
