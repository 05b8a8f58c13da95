// memorymanager-check: upstream's memory_manager_state checkpoint (k8s.io/kubernetes v1.36.3,
// pkg/kubelet/cm/memorymanager/state) for the checkpoints read as JSON on stdin; prints, per
// checkpoint, the text upstream writes and the go-spew text it hashes. Run by hack/memorymanager-check.sh.
package main

import (
	"encoding/json"
	"os"
	"strings"

	"k8s.io/kubernetes/pkg/kubelet/cm/memorymanager/state"
	"k8s.io/utils/dump"
)

func main() {
	var in []state.MemoryManagerCheckpointV1
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		panic(err)
	}
	out := []map[string]string{}
	for _, c := range in {
		c.Checksum = 0
		spew := strings.Replace(dump.ForHash(&c), "MemoryManagerCheckpointV1", "MemoryManagerCheckpoint", 1)
		b, err := c.MarshalCheckpoint()
		if err != nil {
			panic(err)
		}
		out = append(out, map[string]string{"text": string(b), "spew": spew})
	}
	_ = json.NewEncoder(os.Stdout).Encode(out)
}
