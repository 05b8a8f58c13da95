package main

import (
	"fmt"
	"strings"

	cadvisorapi "github.com/google/cadvisor/info/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/kubelet/cm/cpumanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/cpumanager/state"
	"k8s.io/kubernetes/pkg/kubelet/cm/cpumanager/topology"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
)

// runPolicy answers one case: per step each container's CPUs ("shared", "error: ...") and the
// shared pool after it; or the policy's error at creation or start.
func runPolicy(logger klog.Logger, c tcase, mi *cadvisorapi.MachineInfo) (out []any) {
	defer func() {
		if r := recover(); r != nil {
			out = append(out, fmt.Sprintf("panic: %v", r))
		}
	}()
	topo, err := topology.Discover(logger, mi)
	if err != nil {
		return []any{"error: " + err.Error()}
	}
	p, err := cpumanager.NewStaticPolicy(logger, topo, c.NumReserved, mustParse(c.Reserved),
		topologymanager.NewFakeManagerWithPolicy(topologymanager.NewNonePolicy()), c.Options)
	if err != nil {
		return []any{"error: " + err.Error()}
	}
	s := state.NewMemoryState(logger)
	if err := p.Start(logger, s); err != nil {
		return []any{"start error: " + err.Error()}
	}
	if c.Default != "" {
		s.SetDefaultCPUSet(mustParse(c.Default))
	}
	for _, st := range c.Steps {
		if st.Remove != "" {
			pod, name, _ := strings.Cut(st.Remove, "/")
			_ = p.RemoveContainer(logger, s, pod, name)
			out = append(out, map[string]any{"default": s.GetDefaultCPUSet().String()})
			continue
		}
		pod := podOf(st)
		res := map[string]any{}
		for _, k := range append(append([]v1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
			if err := p.Allocate(logger, s, pod, &k); err != nil {
				res[k.Name] = "error: " + err.Error()
				break
			}
			if cs, ok := s.GetCPUSet(st.Pod, k.Name); ok {
				res[k.Name] = cs.String()
			} else {
				res[k.Name] = "shared"
			}
		}
		res["default"] = s.GetDefaultCPUSet().String()
		out = append(out, res)
	}
	return out
}

// podOf: the step's pod, Guaranteed unless a container is marked burstable (requests only).
func podOf(st step) *v1.Pod {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: st.Pod, UID: types.UID(st.Pod)}}
	always := v1.ContainerRestartPolicyAlways
	for _, ct := range st.Containers {
		rl := v1.ResourceList{v1.ResourceCPU: resource.MustParse(ct.CPU), v1.ResourceMemory: resource.MustParse("1G")}
		r := v1.ResourceRequirements{Requests: rl, Limits: rl}
		if ct.Burstable {
			r = v1.ResourceRequirements{Requests: rl}
		}
		k := v1.Container{Name: ct.Name, Resources: r}
		if ct.Restartable {
			k.RestartPolicy = &always
		}
		if ct.Init {
			pod.Spec.InitContainers = append(pod.Spec.InitContainers, k)
		} else {
			pod.Spec.Containers = append(pod.Spec.Containers, k)
		}
	}
	return pod
}
