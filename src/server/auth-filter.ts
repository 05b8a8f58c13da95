// Upstream's InstallAuthFilter: every request is authenticated (401) and then authorized
// against the node's subresources (403, or 500 when the apiserver cannot say). Shared by
// plain requests (router.ts) and streaming upgrades (exec, attach, port-forward).
import type { IncomingMessage } from 'node:http';
import type { Logger } from '../log/log.ts';
import type { Authenticator } from './authn.ts';
import { forbiddenMessage, requestAttributes, type Authorizer } from './authz.ts';
import { type Handler, reply } from './router.ts';

export type AccessCheck = (req: IncomingMessage, path: string) => Promise<{ status: number; message: string } | undefined>;

/** undefined when the request may proceed, else the status and body to answer with. */
export function accessCheck(nodeName: string, authenticate: Authenticator, authorize: Authorizer, log: Logger): AccessCheck {
  return async (req, path) => {
    const user = await authenticate(req);
    if (!user) return { status: 401, message: 'Unauthorized' };
    const attrs = requestAttributes(nodeName, req.method ?? 'GET', path);
    for (const a of attrs) {
      try {
        if ((await authorize(user, a)).allowed) return undefined;
      } catch (e) {
        const message = `Authorization error (user=${user.name}, verb=${a.verb}, resource=${a.resource}, subresource=${a.subresource})`;
        log.error(message, { err: e });
        return { status: 500, message };
      }
    }
    const message = forbiddenMessage(user, attrs);
    log.v(2, message.trim(), { path });
    return { status: 403, message };
  };
}

export function authFilter(check: AccessCheck): Handler {
  return async (req, res, next) => {
    const denied = await check(req, req.path);
    if (denied) reply(res, denied.status, 'text/plain', denied.message);
    else next();
  };
}
