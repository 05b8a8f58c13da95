// Upstream's InstallAuthFilter: every request is authenticated (401) and then authorized
// against the node's subresources (403, or 500 when the apiserver cannot say).
import type { RequestHandler } from 'express';
import type { Logger } from '../log/log.ts';
import type { Authenticator } from './authn.ts';
import { forbiddenMessage, requestAttributes, type Authorizer } from './authz.ts';

export function authFilter(nodeName: string, authenticate: Authenticator, authorize: Authorizer, log: Logger): RequestHandler {
  return async (req, res, next) => {
    const user = await authenticate(req);
    if (!user) { res.status(401).type('text/plain').send('Unauthorized'); return; }
    const attrs = requestAttributes(nodeName, req.method, req.path);
    for (const a of attrs) {
      try {
        if ((await authorize(user, a)).allowed) { next(); return; }
      } catch (e) {
        const msg = `Authorization error (user=${user.name}, verb=${a.verb}, resource=${a.resource}, subresource=${a.subresource})`;
        log.error(msg, { err: e });
        res.status(500).type('text/plain').send(msg);
        return;
      }
    }
    const msg = forbiddenMessage(user, attrs);
    log.v(2, msg.trim(), { path: req.path });
    res.status(403).type('text/plain').send(msg);
  };
}
