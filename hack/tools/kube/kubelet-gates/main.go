// Prints, as JSON, the feature gates the pinned release's kubelet reads: every constant of
// k8s.io/kubernetes/pkg/features referenced in the non-test Go files of the packages that
// k8s.io/kubernetes/cmd/kubelet transitively imports from k8s.io/kubernetes (the gate's name is
// the constant's value: CPUCFSQuotaPeriod is "CustomCPUCFSQuotaPeriod"), with the files that
// read it and the GOOS builds (linux, windows) those files are part of. A gate read only in
// the windows build has no effect on a Linux node upstream either.
// src/features/kubelet-gates.test.ts checks kubelet-ts's classification against the output.
//
// Regenerate (from the repository's root):
//
//	(cd hack/tools/kube && go run ./kubelet-gates) > src/features/testdata/upstream-kubelet-gates.json
package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"
)

const (
	module   = "k8s.io/kubernetes"
	features = module + "/pkg/features"
	kubelet  = module + "/cmd/kubelet"
)

type gate struct {
	Name string `json:"name"`
	// The Go constant in pkg/features, when it differs from the gate's name.
	Constant string `json:"constant,omitempty"`
	// The builds whose files read it: "linux", "windows".
	GOOS []string `json:"goos"`
	// The reading files, relative to the module's root.
	ReadIn []string `json:"readIn"`
}

// The gate names of pkg/features' featuregate.Feature constants, by constant.
func gateNames() map[string]string {
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedTypes}, features)
	if err != nil || packages.PrintErrors(pkgs) > 0 {
		panic(fmt.Sprint("loading ", features, ": ", err))
	}
	names := map[string]string{}
	scope := pkgs[0].Types.Scope()
	for _, id := range scope.Names() {
		c, ok := scope.Lookup(id).(*types.Const)
		if !ok || !strings.HasSuffix(c.Type().String(), "featuregate.Feature") {
			continue
		}
		names[id] = constant.StringVal(c.Val())
	}
	return names
}

// The files of module packages cmd/kubelet builds with for goos, by module-relative path.
func kubeletFiles(goos string) map[string]bool {
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedImports | packages.NeedDeps | packages.NeedModule,
		Env:  append(os.Environ(), "GOOS="+goos, "GOARCH=amd64", "CGO_ENABLED=0"),
	}
	pkgs, err := packages.Load(cfg, kubelet)
	if err != nil || packages.PrintErrors(pkgs) > 0 {
		panic(fmt.Sprint("loading ", kubelet, " for ", goos, ": ", err))
	}
	files := map[string]bool{}
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		if p.Module == nil || p.Module.Path != module || p.PkgPath == features {
			return
		}
		for _, f := range p.GoFiles {
			rel := strings.TrimPrefix(f, p.Module.Dir+string(os.PathSeparator))
			if strings.HasSuffix(rel, "_test.go") {
				continue
			}
			files[p.Module.Dir+"\x00"+rel] = true
		}
	})
	return files
}

// The pkg/features constants a file references (features.X through its import name).
func referenced(path string) []string {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		panic(err)
	}
	var local string
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == features {
			local = "features"
			if imp.Name != nil {
				local = imp.Name.Name
			}
		}
	}
	if local == "" {
		return nil
	}
	if local == "." || local == "_" {
		panic(path + ": pkg/features imported as " + local)
	}
	var ids []string
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == local {
				ids = append(ids, sel.Sel.Name)
			}
		}
		return true
	})
	return ids
}

func main() {
	names := gateNames()
	byName := map[string]*gate{}
	for _, goos := range []string{"linux", "windows"} {
		for key := range kubeletFiles(goos) {
			dir, rel, _ := strings.Cut(key, "\x00")
			for _, id := range referenced(dir + string(os.PathSeparator) + rel) {
				name, ok := names[id]
				if !ok {
					continue // not a gate (a helper of the package)
				}
				g := byName[name]
				if g == nil {
					g = &gate{Name: name}
					if id != name {
						g.Constant = id
					}
					byName[name] = g
				}
				if !contains(g.GOOS, goos) {
					g.GOOS = append(g.GOOS, goos)
				}
				if !contains(g.ReadIn, rel) {
					g.ReadIn = append(g.ReadIn, rel)
				}
			}
		}
	}
	var out []gate
	for _, g := range byName {
		sort.Strings(g.ReadIn)
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
