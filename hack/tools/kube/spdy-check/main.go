// spdy-check reads and writes SPDY/3.1 frames with the framer the runtime's streaming server
// uses (github.com/moby/spdystream/spdy, the pinned release's version):
// src/server/stream-translator/spdy.test.ts checks kubelet-ts's frames on the wire with it.
//
//	spdy-check read   frames as kubelet-ts writes them (stdin) printed as JSON, one a line
//	spdy-check write  a server's side of an exec (stdout): SYN_REPLY with compressed headers,
//	                  DATA, PING, RST_STREAM, GOAWAY
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/moby/spdystream/spdy"
)

type frame struct {
	Type     string              `json:"type"`
	StreamID uint32              `json:"streamId,omitempty"`
	Flags    uint8               `json:"flags,omitempty"`
	Headers  map[string][]string `json:"headers,omitempty"`
	Data     string              `json:"data,omitempty"`
	PingID   uint32              `json:"pingId,omitempty"`
	Last     uint32              `json:"lastGoodStreamId,omitempty"`
}

func main() {
	if len(os.Args) != 2 {
		fail(fmt.Errorf("usage: spdy-check read|write"))
	}
	switch os.Args[1] {
	case "read":
		read()
	case "write":
		write()
	default:
		fail(fmt.Errorf("unknown mode %q", os.Args[1]))
	}
}

func read() {
	f, err := spdy.NewFramer(io.Discard, os.Stdin)
	if err != nil {
		fail(err)
	}
	out := json.NewEncoder(os.Stdout)
	for {
		fr, err := f.ReadFrame()
		if err == io.EOF {
			return
		}
		if err != nil {
			fail(err)
		}
		var j frame
		switch v := fr.(type) {
		case *spdy.SynStreamFrame:
			j = frame{Type: "SYN_STREAM", StreamID: uint32(v.StreamId), Flags: uint8(v.CFHeader.Flags), Headers: v.Headers}
		case *spdy.DataFrame:
			j = frame{Type: "DATA", StreamID: uint32(v.StreamId), Flags: uint8(v.Flags), Data: string(v.Data)}
		case *spdy.PingFrame:
			j = frame{Type: "PING", PingID: v.Id}
		case *spdy.GoAwayFrame:
			j = frame{Type: "GOAWAY", Last: uint32(v.LastGoodStreamId)}
		default:
			j = frame{Type: fmt.Sprintf("%T", fr)}
		}
		if err := out.Encode(j); err != nil {
			fail(err)
		}
	}
}

func write() {
	f, err := spdy.NewFramer(os.Stdout, nil)
	if err != nil {
		fail(err)
	}
	frames := []spdy.Frame{
		&spdy.SynReplyFrame{StreamId: 1, Headers: http.Header{"Streamtype": {"error"}}},
		&spdy.SynReplyFrame{StreamId: 3, Headers: http.Header{"Streamtype": {"stdout"}}},
		&spdy.PingFrame{Id: 2},
		&spdy.DataFrame{StreamId: 3, Data: []byte("out\n")},
		&spdy.DataFrame{StreamId: 3, Flags: spdy.DataFlagFin},
		&spdy.DataFrame{StreamId: 1, Data: []byte(`{"status":"Success"}`), Flags: spdy.DataFlagFin},
		&spdy.RstStreamFrame{StreamId: 5, Status: spdy.Cancel},
		&spdy.GoAwayFrame{LastGoodStreamId: 5, Status: spdy.GoAwayOK},
	}
	for _, fr := range frames {
		if err := f.WriteFrame(fr); err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
