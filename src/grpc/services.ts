// The grpc-js definitions of the services of one proto/ file, for the kubelet's gRPC clients and
// servers (CRI, device plugins, PodResources, plugin registration, CSI, DRA).
import protobuf from 'protobufjs';
import { decoderOf } from './decode.ts';

/**
 * Every service of protoFile by its full name, as @grpc/proto-loader's loadSync names them, each
 * method as its createServiceDefinition makes it (path, streams, serializers, originalName),
 * without the descriptor objects (nobody reads them: 1.4 MB of heap for the CRI alone), and
 * with decode.ts's one-pass deserializers.
 */
export function grpcServices(protoFile: string): Record<string, unknown> {
  const root = new protobuf.Root().loadSync(protoFile, { keepCase: false });
  root.resolveAll();
  const services: Record<string, unknown> = {};
  (function walk(ns: protobuf.NamespaceBase) {
    for (const o of ns.nestedArray) {
      if (o instanceof protobuf.Service) services[o.fullName.slice(1)] = serviceOf(o);
      else if (o instanceof protobuf.Namespace) walk(o);
    }
  })(root);
  return services;
}

function serviceOf(service: protobuf.Service): Record<string, unknown> {
  const def: Record<string, unknown> = {};
  for (const method of service.methodsArray) {
    const request = method.resolvedRequestType!;
    const response = method.resolvedResponseType!;
    def[method.name] = {
      path: `/${service.fullName.slice(1)}/${method.name}`,
      requestStream: !!method.requestStream,
      responseStream: !!method.responseStream,
      requestSerialize: serializerOf(request),
      requestDeserialize: deserializerOf(request),
      responseSerialize: serializerOf(response),
      responseDeserialize: deserializerOf(response),
      originalName: method.name[0]!.toLowerCase() + method.name.slice(1),
    };
  }
  return def;
}

function serializerOf(type: protobuf.Type): (value: object) => Buffer {
  return (value) => {
    if (Array.isArray(value))
      throw new Error(`Failed to serialize message: expected object with ${type.name} structure, got array instead`);
    // protobufjs's writer makes a Buffer under node.
    return type.encode(type.fromObject(value)).finish() as Buffer;
  };
}

/**
 * decode.ts's reader, compiled at a method's first message (most types are never read). What the
 * generated types describe (the "gen:*" scripts' flags): names in camelCase, longs as strings
 * (nanosecond timestamps, ~1.7e18, exceed 2^53 and would lose digits as Numbers), enums as their
 * names (readable in logs), every field present, oneofs named.
 */
function deserializerOf(type: protobuf.Type): (buf: Buffer) => unknown {
  let decode: ((buf: Buffer) => unknown) | undefined;
  return (buf) => (decode ??= decoderOf(type))(buf);
}
