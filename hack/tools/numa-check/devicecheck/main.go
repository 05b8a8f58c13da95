// devicecheck runs upstream's own devicemanager (k8s.io/kubernetes v1.36.3, copied by
// hack/devicemanager-check.sh with helpers.go.in into ./upstream) over kubelet-ts's cases
// (src/devices/testdata/topology-cases.ts), read as JSON on stdin, and prints its answers:
//
//	devicecheck hints   GetTopologyHints / GetPodTopologyHints
//	devicecheck alloc   devicesToAllocate with the topology manager's affinity and GetPreferredAllocation
package main

import (
	"encoding/json"
	"os"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	dm "kubelet-ts/hack/tools/numa-check/devicecheck/upstream"
)

// caseDevice is [id, nodes, healthy?].
type caseDevice []json.RawMessage

func (d caseDevice) device() dm.KTSDevice {
	out := dm.KTSDevice{Healthy: true}
	must(json.Unmarshal(d[0], &out.ID))
	must(json.Unmarshal(d[1], &out.Nodes))
	if len(d) > 2 {
		must(json.Unmarshal(d[2], &out.Healthy))
	}
	return out
}

type caseContainer []json.RawMessage

func (c caseContainer) container() v1.Container {
	var name string
	var limits map[string]int64
	must(json.Unmarshal(c[0], &name))
	must(json.Unmarshal(c[1], &limits))
	out := v1.Container{Name: name, Resources: v1.ResourceRequirements{Limits: v1.ResourceList{}}}
	for r, n := range limits {
		out.Resources.Limits[v1.ResourceName(r)] = *resource.NewQuantity(n, resource.DecimalSI)
	}
	return out
}

type hintCase struct {
	NumaNodes      []int
	Devices        map[string][]caseDevice
	Held           map[string]map[string][]string
	Reusable       map[string][]string
	InitContainers []caseContainer
	Containers     []caseContainer
	Container      string
}

type allocCase struct {
	Devices  []caseDevice
	Required int
	InUse    []string
	Reusable []string
	Affinity []int
	Plugin   []string
}

func main() {
	var out any
	switch os.Args[1] {
	case "hints":
		out = runHints(decode[[]hintCase]())
	case "alloc":
		out = runAlloc(decode[[]allocCase]())
	default:
		panic("unknown mode " + os.Args[1])
	}
	must(json.NewEncoder(os.Stdout).Encode(out))
}

func runHints(cases []hintCase) []map[string]any {
	out := []map[string]any{}
	for _, c := range cases {
		devices := map[string][]dm.KTSDevice{}
		for r, ds := range c.Devices {
			for _, d := range ds {
				devices[r] = append(devices[r], d.device())
			}
		}
		pod := &v1.Pod{}
		pod.UID = types.UID("pod")
		for _, ic := range c.InitContainers {
			pod.Spec.InitContainers = append(pod.Spec.InitContainers, ic.container())
		}
		for _, cc := range c.Containers {
			pod.Spec.Containers = append(pod.Spec.Containers, cc.container())
		}
		answer := map[string]any{}
		for r, hints := range dm.KTSHints(c.NumaNodes, devices, c.Held, c.Reusable, pod, c.Container) {
			if hints == nil {
				answer[r] = nil
				continue
			}
			list := [][]any{}
			for _, h := range hints {
				list = append(list, []any{h.NUMANodeAffinity.GetBits(), h.Preferred})
			}
			answer[r] = list
		}
		out = append(out, answer)
	}
	return out
}

func runAlloc(cases []allocCase) []map[string]any {
	out := []map[string]any{}
	for _, c := range cases {
		var devices []dm.KTSDevice
		for _, d := range c.Devices {
			devices = append(devices, d.device())
		}
		got, asked, err := dm.KTSAllocate(devices, c.Required, c.InUse, c.Reusable, c.Affinity, c.Plugin)
		if err != nil {
			out = append(out, map[string]any{"error": err.Error()})
			continue
		}
		perNode := map[string]int{}
		fromPlugin := 0
		for _, id := range got {
			node := -1
			for _, d := range devices {
				if d.ID == id && len(d.Nodes) > 0 {
					node = d.Nodes[0]
				}
			}
			perNode[itoa(node)]++
			for _, p := range c.Plugin {
				if p == id {
					fromPlugin++
				}
			}
		}
		var ask any
		if asked != nil {
			sort.Strings(asked.Available)
			sort.Strings(asked.MustInclude)
			ask = map[string]any{"available": nonNil(asked.Available), "mustInclude": nonNil(asked.MustInclude), "size": asked.Size}
		}
		out = append(out, map[string]any{"perNode": perNode, "fromPlugin": fromPlugin, "ask": ask})
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func decode[T any]() T {
	var v T
	must(json.NewDecoder(os.Stdin).Decode(&v))
	return v
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
