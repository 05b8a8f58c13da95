// The tcpSocket probe: success when a connection opens within the timeout; it is closed
// at once (upstream's pkg/probe/tcp). Errors are failures, worded as Go's dialer words them.
import { connect } from 'node:net';
import { joinHostPort } from './port.ts';
import type { Outcome } from './outcome.ts';

export function tcpProbe(host: string, port: number, timeoutSeconds: number): Promise<Outcome> {
  const addr = joinHostPort(host, port);
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (o: Outcome) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(o);
    };
    const timer = setTimeout(() => done({ result: 'failure', output: `dial tcp ${addr}: i/o timeout` }), timeoutSeconds * 1000);
    socket.once('connect', () => done({ result: 'success', output: '' }));
    socket.once('error', (e) => done({ result: 'failure', output: `dial tcp ${addr}: ${dialError(e)}` }));
  });
}

/** Node's error as the text Go's net package gives (connect: connection refused, ...). */
export function dialError(e: NodeJS.ErrnoException): string {
  switch (e.code) {
    case 'ECONNREFUSED':
      return 'connect: connection refused';
    case 'EHOSTUNREACH':
      return 'connect: no route to host';
    case 'ENETUNREACH':
      return 'connect: network is unreachable';
    case 'ETIMEDOUT':
      return 'i/o timeout';
    case 'ECONNRESET':
      return 'read: connection reset by peer';
    default:
      return e.message;
  }
}
