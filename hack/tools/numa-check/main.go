// numa-check runs upstream's own code (k8s.io/kubernetes v1.36.3) over kubelet-ts's cases, read
// as JSON on stdin, and prints upstream's answers as JSON:
//
//	numa-check merge       topologymanager Policy.Merge over src/topologymanager/testdata/merge-cases.ts
//	numa-check memory      memorymanager's static policy over src/memorymanager/testdata/static-policy-cases.ts
//	numa-check checkpoint  memory_manager_state's text and the go-spew text it hashes
//
// Run by hack/topologymanager-check.sh and hack/memorymanager-check.sh.
package main

import (
	"encoding/json"
	"os"
	"strings"

	"k8s.io/kubernetes/pkg/kubelet/cm/memorymanager/state"
	"k8s.io/utils/dump"
)

func main() {
	var out any
	switch os.Args[1] {
	case "merge":
		out = runMerge(decode[[]mergeCase]())
	case "memory":
		out = runMemory(decode[[]memoryCase]())
	case "checkpoint":
		out = runCheckpoint(decode[[]state.MemoryManagerCheckpointV1]())
	default:
		panic("unknown mode " + os.Args[1])
	}
	_ = json.NewEncoder(os.Stdout).Encode(out)
}

func decode[T any]() T {
	var v T
	if err := json.NewDecoder(os.Stdin).Decode(&v); err != nil {
		panic(err)
	}
	return v
}

func runCheckpoint(in []state.MemoryManagerCheckpointV1) []map[string]string {
	out := []map[string]string{}
	for _, c := range in {
		// As storeState writes it: newMemoryManagerCheckpointV1's maps, never nil.
		if c.Entries == nil {
			c.Entries = state.ContainerMemoryAssignments{}
		}
		if c.MachineState == nil {
			c.MachineState = state.NUMANodeMap{}
		}
		c.Checksum = 0
		spew := strings.Replace(dump.ForHash(&c), "MemoryManagerCheckpointV1", "MemoryManagerCheckpoint", 1)
		b, err := c.MarshalCheckpoint()
		if err != nil {
			panic(err)
		}
		out = append(out, map[string]string{"text": string(b), "spew": spew})
	}
	return out
}
