// Prints, as JSON, the files the pinned kubelet's image pull manager (pkg/kubelet/images/
// pullmanager, KEP-2535) writes under <root-dir>/image_manager for a fixed scenario, its
// answers, and the credential hashes its keyring computes. src/images/pulled/upstream.test.ts
// plays the same scenario through kubelet-ts and compares the files byte for byte, so that a
// node switched between the two kubelets keeps its records.
//
// Regenerate (from the repository's root):
//
//	(cd hack/tools/kube && go run ./pulled-records) > src/images/pulled/testdata/upstream-records.json
package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"

	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/credentialprovider"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	"k8s.io/kubernetes/pkg/kubelet/images/pullmanager"
)

type step struct {
	Step   string            `json:"step"`
	Result *bool             `json:"result,omitempty"`
	Files  map[string]string `json:"files"`
}

var timestamp = regexp.MustCompile(`"lastUpdatedTime":"[^"]*"`)

func main() {
	ctx := context.Background()
	logger := klog.Background()
	dir, err := os.MkdirTemp("", "pulled-records-")
	must(err)
	defer os.RemoveAll(dir)
	accessor, err := pullmanager.NewFSPullRecordsAccessor(logger, dir)
	must(err)
	m, err := pullmanager.NewImagePullManager(ctx, accessor, pullmanager.NeverVerifyPreloadedPullPolicy(), nil, 10)
	must(err)

	var steps []step
	snap := func(name string, result *bool) {
		files := map[string]string{}
		must(filepath.WalkDir(filepath.Join(dir, "image_manager"), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			// The time is the writer's clock: the test compares the rest.
			files[rel] = timestamp.ReplaceAllString(string(b), `"lastUpdatedTime":"T"`)
			return nil
		}))
		steps = append(steps, step{Step: name, Result: result, Files: files})
	}
	secretA := kubeletconfig.ImagePullSecret{UID: "ua", Namespace: "a", Name: "pull", CredentialHash: "ha"}
	copyC := kubeletconfig.ImagePullSecret{UID: "uc", Namespace: "c", Name: "copy", CredentialHash: "ha"}
	sa := kubeletconfig.ImagePullServiceAccount{UID: "sa-uid", Namespace: "a", Name: "builder"}
	check := func(name, image, ref string, secrets []kubeletconfig.ImagePullSecret, account *kubeletconfig.ImagePullServiceAccount) {
		r, err := m.MustAttemptImagePull(ctx, image, ref, func() ([]kubeletconfig.ImagePullSecret, *kubeletconfig.ImagePullServiceAccount, error) {
			return secrets, account, nil
		})
		must(err)
		snap(name, &r)
	}

	must(m.RecordPullIntent(logger, "r.io/app:1"))
	snap("intent r.io/app:1", nil)
	m.RecordImagePulled(ctx, "r.io/app:1", "sha256:img", &kubeletconfig.ImagePullCredentials{KubernetesSecrets: []kubeletconfig.ImagePullSecret{secretA}})
	snap("pulled r.io/app:1 as sha256:img with secret a/pull", nil)
	check("check r.io/app:1, no secrets", "r.io/app:1", "sha256:img", nil, nil)
	check("check r.io/app:2, secret c/copy with the same hash", "r.io/app:2", "sha256:img", []kubeletconfig.ImagePullSecret{copyC}, nil)
	check("check r.io/app:1, secret a/pull rotated", "r.io/app:1", "sha256:img", []kubeletconfig.ImagePullSecret{{UID: "ua", Namespace: "a", Name: "pull", CredentialHash: "rotated"}}, nil)
	must(m.RecordPullIntent(logger, "r.io/alias:latest"))
	m.RecordImagePulled(ctx, "r.io/alias:latest", "sha256:img", &kubeletconfig.ImagePullCredentials{NodePodsAccessible: true})
	snap("pulled r.io/alias:latest as sha256:img anonymously", nil)
	must(m.RecordPullIntent(logger, "r.io/tok:1"))
	m.RecordImagePulled(ctx, "r.io/tok:1", "sha256:tok", &kubeletconfig.ImagePullCredentials{KubernetesServiceAccounts: []kubeletconfig.ImagePullServiceAccount{sa}})
	snap("pulled r.io/tok:1 as sha256:tok with service account a/builder", nil)
	check("check r.io/tok:1, service account a/builder", "r.io/tok:1", "sha256:tok", nil, &sa)
	check("check r.io/tok:1, no service account", "r.io/tok:1", "sha256:tok", nil, nil)
	check("check r.io/preloaded:1, no record", "r.io/preloaded:1", "sha256:pre", nil, nil)
	must(m.RecordPullIntent(logger, "r.io/failing:1"))
	m.RecordImagePullFailed(ctx, "r.io/failing:1")
	snap("pull of r.io/failing:1 failed", nil)

	hash := func(user, pass, email string) string {
		return credentialprovider.NewTrackedAuthConfig(&credentialprovider.AuthConfig{Username: user, Password: pass, Email: email}, nil).AuthConfigHash
	}
	hashes := map[string]string{
		"ok/pw/e@x": hash("ok", "pw", "e@x"),
		"a<b/p&/":   hash("a<b", "p&", ""),
		"//":        hash("", "", ""),
	}
	out, err := json.MarshalIndent(map[string]any{"steps": steps, "hashes": hashes}, "", "  ")
	must(err)
	os.Stdout.Write(append(out, '\n'))
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
