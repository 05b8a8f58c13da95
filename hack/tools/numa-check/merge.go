package main

import (
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager/bitmask"
)

type mergeCase struct {
	Name          string                 `json:"name"`
	Policy        string                 `json:"policy"`
	Nodes         []int                  `json:"nodes"`
	Distances     [][]uint64             `json:"distances"`
	PreferClosest bool                   `json:"preferClosest"`
	Providers     []map[string]*[][2]any `json:"providers"`
}

type mergeAnswer struct {
	Nodes     []int `json:"nodes"`
	Preferred bool  `json:"preferred"`
	Admit     bool  `json:"admit"`
}

func runMerge(cases []mergeCase) []mergeAnswer {
	out := []mergeAnswer{}
	for _, c := range cases {
		distances := topologymanager.NUMADistances{}
		for _, n := range c.Nodes {
			if c.Distances != nil {
				distances[n] = c.Distances[n]
			} else {
				distances[n] = nil
			}
		}
		info := &topologymanager.NUMAInfo{Nodes: c.Nodes, NUMADistances: distances}
		opts := topologymanager.PolicyOptions{PreferClosestNUMA: c.PreferClosest, MaxAllowableNUMANodes: 8}
		var p topologymanager.Policy
		switch c.Policy {
		case "best-effort":
			p = topologymanager.NewBestEffortPolicy(info, opts)
		case "restricted":
			p = topologymanager.NewRestrictedPolicy(info, opts)
		case "single-numa-node":
			p = topologymanager.NewSingleNumaNodePolicy(info, opts)
		}
		var providers []map[string][]topologymanager.TopologyHint
		for _, prov := range c.Providers {
			if prov == nil {
				providers = append(providers, nil)
				continue
			}
			m := map[string][]topologymanager.TopologyHint{}
			for r, hs := range prov {
				if hs == nil {
					m[r] = nil
					continue
				}
				list := []topologymanager.TopologyHint{}
				for _, h := range *hs {
					th := topologymanager.TopologyHint{Preferred: h[1].(bool)}
					if h[0] != nil {
						var bits []int
						for _, b := range h[0].([]any) {
							bits = append(bits, int(b.(float64)))
						}
						th.NUMANodeAffinity, _ = bitmask.NewBitMask(bits...)
					}
					list = append(list, th)
				}
				m[r] = list
			}
			providers = append(providers, m)
		}
		hint, admit := p.Merge(klog.Background(), providers)
		a := mergeAnswer{Preferred: hint.Preferred, Admit: admit}
		if hint.NUMANodeAffinity != nil {
			a.Nodes = hint.NUMANodeAffinity.GetBits()
		}
		out = append(out, a)
	}
	return out
}
