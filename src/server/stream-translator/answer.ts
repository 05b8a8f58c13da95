// A refused upgrade's answer on the raw connection (no response object after an 'upgrade'
// event): the streaming routes' refusals and the tunnel's, as upstream's handlers write them.
import type { Duplex } from 'node:stream';

/** Writes an HTTP error with this body and closes the connection. */
export function answer(socket: Duplex, status: number, message: string) {
  const reason =
    {
      400: 'Bad Request',
      401: 'Unauthorized',
      403: 'Forbidden',
      404: 'Not Found',
      429: 'Too Many Requests',
      500: 'Internal Server Error',
    }[status] ?? 'Error';
  const body = Buffer.from(message);
  // The runtime's streaming server keeps a request's token a minute (cri-streaming's cacheTTL).
  const retry = status === 429 ? 'Retry-After: 60\r\n' : '';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\n${retry}Content-Type: text/plain; charset=utf-8\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
  );
}
