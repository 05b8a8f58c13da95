// Prints, as JSON, every feature gate of the pinned release's kubelet with its spec at the
// release's version (default, stage, locked to its default): utilfeature.DefaultMutableFeatureGate
// after the kubelet's packages registered theirs in their init (k8s.io/kubernetes/pkg/features
// with client-go's and zpages', cmd/kubelet/app's logging gates, and whatever else the kubelet
// links), as featureGate.GetAll resolves them: the gate set that upstream's --feature-gates takes
// and its kubernetes_feature_enabled metric shows. src/features/gates.test.ts checks FEATURE_GATES
// against the output.
//
// Regenerate (from the repository's root):
//
//	(cd hack/tools/kube && go run ./feature-gates) > src/features/testdata/upstream-feature-gates.json
package main

import (
	"encoding/json"
	"os"
	"sort"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	_ "k8s.io/kubernetes/cmd/kubelet/app"
)

type spec struct {
	Name    string `json:"name"`
	Default bool   `json:"default"`
	// ALPHA, BETA, GA or DEPRECATED (featuregate's GA is the empty string).
	Stage  string `json:"stage"`
	Locked bool   `json:"locked,omitempty"`
}

func main() {
	var out []spec
	for name, s := range utilfeature.DefaultMutableFeatureGate.GetAll() {
		stage := string(s.PreRelease)
		if s.PreRelease == featuregate.GA {
			stage = "GA"
		}
		out = append(out, spec{Name: string(name), Default: s.Default, Stage: stage, Locked: s.LockToDefault})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
}
