// otlp-check reads an OTLP ExportTraceServiceRequest as kubelet-ts encodes it (stdin) with the
// module upstream's exporter uses (go.opentelemetry.io/proto/otlp, the pinned release's version)
// and prints it as protojson: src/tracing/otlp.test.ts checks the encoder's wire format with it.
package main

import (
	"fmt"
	"io"
	"os"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

func main() {
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var req collectortrace.ExportTraceServiceRequest
	// Unknown fields would mean a field number the module does not have: refuse them.
	if err := (proto.UnmarshalOptions{DiscardUnknown: false}).Unmarshal(in, &req); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if len(req.ProtoReflect().GetUnknown()) > 0 {
		fmt.Fprintln(os.Stderr, "unknown fields in the request")
		os.Exit(1)
	}
	out, err := protojson.MarshalOptions{UseProtoNames: false}.Marshal(&req)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(string(out))
}
