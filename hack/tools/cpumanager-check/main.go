// cpumanager-check runs upstream's static CPU manager policy (k8s.io/kubernetes v1.36.3,
// pkg/kubelet/cm/cpumanager) over the cases of src/cpumanager/testdata/static-policy-cases.ts,
// read as JSON on stdin (cases.ts writes them), and prints its answers as JSON: what the `want`
// of each case must be. It builds cAdvisor's MachineInfo from the same sysfs facts kubelet-ts's
// discoverTopology reads. Run by hack/cpumanager-check.sh.
package main

import (
	"encoding/json"
	"os"

	cadvisorapi "github.com/google/cadvisor/info/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"
	"k8s.io/utils/cpuset"
)

type sysCPU struct {
	CPU       int  `json:"cpu"`
	PackageID int  `json:"packageId"`
	CoreID    int  `json:"coreId"`
	L3ID      *int `json:"l3Id"`
}

type numa struct {
	ID   int    `json:"id"`
	CPUs string `json:"cpus"`
}

type ctr struct {
	Name        string `json:"name"`
	CPU         string `json:"cpu"`
	Init        bool   `json:"init"`
	Restartable bool   `json:"restartable"`
	Burstable   bool   `json:"burstable"`
}

// A step allocates a pod's containers in admission's order, or removes one ("pod/container").
type step struct {
	Pod        string `json:"pod"`
	Containers []ctr  `json:"containers"`
	Remove     string `json:"remove"`
}

type tcase struct {
	Name        string            `json:"name"`
	CPUs        []sysCPU          `json:"cpus"`
	Numa        []numa            `json:"numa"`
	NumReserved int               `json:"numReserved"`
	Reserved    string            `json:"reserved"`
	Options     map[string]string `json:"options"`
	Default     string            `json:"default"`
	Steps       []step            `json:"steps"`
}

func main() {
	// The alpha options are in the cases too.
	_ = utilfeature.DefaultMutableFeatureGate.Set("CPUManagerPolicyAlphaOptions=true")
	var cases []tcase
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		panic(err)
	}
	logger := klog.Background()
	out := []map[string]any{}
	for _, c := range cases {
		out = append(out, map[string]any{"name": c.Name, "steps": runPolicy(logger, c, machineInfo(c))})
	}
	_ = json.NewEncoder(os.Stdout).Encode(out)
}

// machineInfo is what cAdvisor would report for these sysfs facts: per NUMA node, its cores by
// (socket, core_id) with their threads, and each core's L3 cache as its uncore cache.
func machineInfo(c tcase) *cadvisorapi.MachineInfo {
	mi := &cadvisorapi.MachineInfo{NumCores: len(c.CPUs)}
	sockets := map[int]bool{}
	for _, n := range c.Numa {
		set := mustParse(n.CPUs)
		node := cadvisorapi.Node{Id: n.ID}
		index := map[[2]int]int{}
		for _, sc := range c.CPUs {
			if !set.Contains(sc.CPU) {
				continue
			}
			sockets[sc.PackageID] = true
			k := [2]int{sc.PackageID, sc.CoreID}
			i, ok := index[k]
			if !ok {
				core := cadvisorapi.Core{Id: sc.CoreID, SocketID: sc.PackageID}
				if sc.L3ID != nil {
					core.UncoreCaches = []cadvisorapi.Cache{{Id: *sc.L3ID, Level: 3}}
				}
				node.Cores = append(node.Cores, core)
				i = len(node.Cores) - 1
				index[k] = i
			}
			node.Cores[i].Threads = append(node.Cores[i].Threads, sc.CPU)
		}
		mi.Topology = append(mi.Topology, node)
	}
	mi.NumSockets = len(sockets)
	return mi
}

func mustParse(s string) cpuset.CPUSet {
	c, err := cpuset.Parse(s)
	if err != nil {
		panic(err)
	}
	return c
}
