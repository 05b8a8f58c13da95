package main

import (
	"fmt"
	"sort"
	"strings"

	cadvisorapi "github.com/google/cadvisor/info/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/kubelet/cm/memorymanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/memorymanager/state"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager/bitmask"
)

type memCtr struct {
	Name      string            `json:"name"`
	Requests  map[string]string `json:"requests"`
	Init      bool              `json:"init"`
	Sidecar   bool              `json:"sidecar"`
	Burstable bool              `json:"burstable"`
}

type memStep struct {
	Pod        string   `json:"pod"`
	Containers []memCtr `json:"containers"`
	Hint       []int    `json:"hint"`
	Remove     string   `json:"remove"`
}

type memoryCase struct {
	Name  string `json:"name"`
	Nodes []struct {
		MemGi        float64 `json:"memGi"`
		Hugepages2Mi uint64  `json:"hugepages2Mi"`
	} `json:"nodes"`
	Reserved map[int]map[string]string `json:"reserved"`
	Steps    []memStep                 `json:"steps"`
}

type stepAnswer struct {
	Error  string   `json:"error,omitempty"`
	Nodes  []string `json:"nodes"`
	Blocks []string `json:"blocks"`
}

// store is the topology manager's Store with the step's hint for every container.
type store struct{ hint topologymanager.TopologyHint }

func (s *store) GetAffinity(string, string) topologymanager.TopologyHint { return s.hint }
func (s *store) GetPolicy() topologymanager.Policy                       { return nil }
func (s *store) Name() string                                            { return "container" }

func runMemory(cases []memoryCase) [][]stepAnswer {
	logger := klog.Background()
	out := [][]stepAnswer{}
	for _, c := range cases {
		mi := &cadvisorapi.MachineInfo{}
		for id, n := range c.Nodes {
			node := cadvisorapi.Node{Id: id, Memory: uint64(n.MemGi * (1 << 30))}
			if n.Hugepages2Mi > 0 {
				node.HugePages = []cadvisorapi.HugePagesInfo{{PageSize: 2048, NumPages: n.Hugepages2Mi}}
			}
			mi.Topology = append(mi.Topology, node)
		}
		reserved := map[int]map[v1.ResourceName]uint64{}
		for id := range c.Nodes {
			reserved[id] = map[v1.ResourceName]uint64{}
		}
		for id, m := range c.Reserved {
			for t, q := range m {
				qq := resource.MustParse(q)
				reserved[id][v1.ResourceName(t)] = uint64(qq.Value())
			}
		}
		st := &store{}
		p, err := memorymanager.NewPolicyStatic(logger, mi, reserved, st)
		if err != nil {
			panic(err)
		}
		s := state.NewMemoryState(logger)
		if err := p.Start(logger, s); err != nil {
			panic(err)
		}
		answers := []stepAnswer{}
		for _, step := range c.Steps {
			var stepErr error
			if step.Remove != "" {
				parts := strings.SplitN(step.Remove, "/", 2)
				p.RemoveContainer(logger, s, parts[0], parts[1])
			} else {
				st.hint = topologymanager.TopologyHint{}
				if step.Hint != nil {
					st.hint.NUMANodeAffinity, _ = bitmask.NewBitMask(step.Hint...)
					st.hint.Preferred = true
				}
				pod := memPod(step)
				for _, ctr := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
					if stepErr = p.Allocate(logger, s, pod, &ctr); stepErr != nil {
						break
					}
				}
			}
			a := stepAnswer{Nodes: []string{}, Blocks: []string{}}
			if stepErr != nil {
				a.Error = stepErr.Error()
			}
			ms := s.GetMachineState()
			for id := range c.Nodes {
				n := ms[id]
				cells := append([]int{}, n.Cells...)
				sort.Ints(cells)
				a.Nodes = append(a.Nodes, fmt.Sprintf("%d/%s", n.MemoryMap[v1.ResourceMemory].Free, joinInts(cells)))
			}
			for pod, cs := range s.GetMemoryAssignments() {
				for name, blocks := range cs {
					var parts []string
					for _, b := range blocks {
						parts = append(parts, fmt.Sprintf("%s:%d@%s", b.Type, b.Size, joinInts(b.NUMAAffinity)))
					}
					sort.Strings(parts)
					a.Blocks = append(a.Blocks, fmt.Sprintf("%s/%s=%s", pod, name, strings.Join(parts, ";")))
				}
			}
			sort.Strings(a.Blocks)
			answers = append(answers, a)
			if stepErr != nil {
				break
			}
		}
		out = append(out, answers)
	}
	return out
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

func memPod(step memStep) *v1.Pod {
	pod := &v1.Pod{}
	pod.Name, pod.Namespace, pod.UID = step.Pod, "default", types.UID(step.Pod)
	always := v1.ContainerRestartPolicyAlways
	for _, mc := range step.Containers {
		req := v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}
		for t, q := range mc.Requests {
			req[v1.ResourceName(t)] = resource.MustParse(q)
		}
		lim := req.DeepCopy()
		if mc.Burstable {
			lim[v1.ResourceMemory] = resource.MustParse("100Gi")
		}
		ctr := v1.Container{Name: mc.Name, Resources: v1.ResourceRequirements{Requests: req, Limits: lim}}
		if mc.Sidecar {
			ctr.RestartPolicy = &always
		}
		if mc.Init || mc.Sidecar {
			pod.Spec.InitContainers = append(pod.Spec.InitContainers, ctr)
		} else {
			pod.Spec.Containers = append(pod.Spec.Containers, ctr)
		}
	}
	return pod
}
