// How the kubelet's HTTP servers treat slow and oversized requests: upstream's http.Server of
// ListenAndServeKubeletServer and ListenAndServeKubeletReadOnlyServer (pkg/kubelet/server),
// in node:http's terms.
import type { ServerOptions } from 'node:http';

export type HttpSettings = Required<
  Pick<ServerOptions, 'maxHeaderSize' | 'headersTimeout' | 'requestTimeout' | 'keepAliveTimeout' | 'connectionsCheckingInterval'>
>;

export const HTTP_SETTINGS: HttpSettings = {
  // MaxHeaderBytes: 1 << 20. Past it node answers 431 and closes that connection only.
  maxHeaderSize: 1 << 20,
  // ReadTimeout: 4 minutes for the whole request (a log follow's response is not bounded by it).
  requestTimeout: 4 * 60_000,
  // Go's ReadHeaderTimeout falls back to ReadTimeout; node's own 60 s is kept: headers trickled
  // for a minute are a slow client holding a connection, and it gets 408.
  headersTimeout: 60_000,
  // IdleTimeout: 90 s, matching the keep-alive of the apiserver's transport, so that it does not
  // reuse a connection the kubelet just closed (node's default is 5 s).
  keepAliveTimeout: 90_000,
  // How often node looks for requests past those timeouts (its default).
  connectionsCheckingInterval: 30_000,
};
