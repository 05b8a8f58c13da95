// Prints the pinned kubelet's command line as JSON: every flag NewKubeletCommand registers
// (KubeletFlags.AddFlags, AddKubeletConfigFlags, AddGlobalFlags, --help), its value type, its
// deprecation, and for a KubeletConfiguration flag the v1beta1 field it sets, found by setting
// the flag on a fresh configuration and diffing the v1beta1 JSON (not by reading names).
// src/cli/upstream-flags.test.ts checks kubelet-ts's command line against the output.
//
// Regenerate (from the repository's root):
//
//	(cd hack/tools/kube && go run ./kubelet-flags) > src/cli/testdata/upstream-flags.json
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"sort"

	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/kubernetes/cmd/kubelet/app/options"
	// Its init sets the kubelet's own defaults of cAdvisor's flags (housekeeping_interval 10s,
	// no event storage), as in the kubelet binary.
	_ "k8s.io/kubernetes/pkg/kubelet/cadvisor"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	kubeletconfigconv "k8s.io/kubernetes/pkg/kubelet/apis/config/v1beta1"
)

type flag struct {
	Name       string `json:"name"`
	Type       string `json:"type"`
	Default    string `json:"default"`
	Deprecated string `json:"deprecated,omitempty"`
	// The v1beta1 field path the flag sets ("staticPodPath", "authentication.anonymous.enabled").
	Field string `json:"field,omitempty"`
}

// One value each flag type parses, different from every default.
var samples = map[string][]string{
	"bool":                               {"true", "false"},
	"duration":                           {"1h2m3s"},
	"int32":                              {"4242"},
	"int64":                              {"4242"},
	"int":                                {"4242"},
	"string":                             {"/sample"},
	"ip":                                 {"10.1.2.3"},
	"Level":                              {"7"},
	"stringSlice":                        {"a,b"},
	"mapStringString":                    {"k=v"},
	"mapStringBool":                      {"K=true"},
	"colonSeparatedMultimapStringString": {"a:b"},
	"mapStringString(no split)":          {"k=v"},
}

func v1beta1JSON(kc *kubeletconfig.KubeletConfiguration) map[string]any {
	v := &kubeletconfigv1beta1.KubeletConfiguration{}
	if err := kubeletconfigconv.Convert_config_KubeletConfiguration_To_v1beta1_KubeletConfiguration(kc, v, nil); err != nil {
		panic(err)
	}
	b, _ := json.Marshal(v)
	out := map[string]any{}
	_ = json.Unmarshal(b, &out)
	return out
}

// The paths where a and b differ, down to the first non-object value.
func diff(prefix string, a, b map[string]any) []string {
	var paths []string
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	for k := range keys {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		am, aok := a[k].(map[string]any)
		bm, bok := b[k].(map[string]any)
		if aok && bok && k != "featureGates" && k != "evictionHard" && k != "evictionSoft" && k != "systemReserved" && k != "kubeReserved" {
			paths = append(paths, diff(p, am, bm)...)
		} else if !reflect.DeepEqual(a[k], b[k]) {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	return paths
}

// The field a KubeletConfiguration flag sets: set it alone on a fresh configuration.
func fieldOf(name, typ string) string {
	candidates := append(samples[typ], "1", "a=1", "1Mi", "memory.available<1Gi", "0:memory=1Gi", "k=v:NoSchedule", "text")
	for _, value := range candidates {
		kc, err := options.NewKubeletConfiguration()
		if err != nil {
			panic(err)
		}
		base := v1beta1JSON(kc)
		fs := pflag.NewFlagSet("", pflag.ContinueOnError)
		fs.SetNormalizeFunc(cliflag.WordSepNormalizeFunc)
		fs.SetOutput(io.Discard) // the deprecation notices
		options.AddKubeletConfigFlags(fs, kc)
		if err := fs.Set(name, value); err != nil {
			continue
		}
		paths := diff("", base, v1beta1JSON(kc))
		if len(paths) == 0 {
			continue // the sample is the default
		}
		if len(paths) > 1 {
			panic(fmt.Sprintf("--%s=%s sets %v", name, value, paths))
		}
		return paths[0]
	}
	panic("no value sets --" + name)
}

func main() {
	fs := pflag.NewFlagSet("kubelet", pflag.ContinueOnError)
	fs.SetNormalizeFunc(cliflag.WordSepNormalizeFunc)
	kc, err := options.NewKubeletConfiguration()
	if err != nil {
		panic(err)
	}
	options.NewKubeletFlags().AddFlags(fs)
	options.AddKubeletConfigFlags(fs, kc)
	options.AddGlobalFlags(fs)
	fs.BoolP("help", "h", false, "help for kubelet")

	configFlags := pflag.NewFlagSet("", pflag.ContinueOnError)
	configFlags.SetNormalizeFunc(cliflag.WordSepNormalizeFunc)
	options.AddKubeletConfigFlags(configFlags, kc)

	var flags []flag
	fs.VisitAll(func(f *pflag.Flag) {
		out := flag{Name: f.Name, Type: f.Value.Type(), Default: f.DefValue, Deprecated: f.Deprecated}
		if configFlags.Lookup(f.Name) != nil {
			out.Field = fieldOf(f.Name, out.Type)
		}
		flags = append(flags, out)
	})
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(flags); err != nil {
		panic(err)
	}
}
