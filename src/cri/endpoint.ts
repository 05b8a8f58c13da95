// The kubelet flag --container-runtime-endpoint takes unix:///path; a bare /path is
// also common. grpc-js needs the unix:// form: it resolves a bare path as a DNS name.
export function grpcTarget(endpoint: string): string {
  const match = /^(?:unix:(?:\/\/)?)?(\/.*)$/.exec(endpoint.trim());
  if (!match) {
    throw new Error(`unsupported container runtime endpoint ${JSON.stringify(endpoint)}: want unix:///path/to/socket or /path/to/socket`);
  }
  return `unix://${match[1]}`;
}
