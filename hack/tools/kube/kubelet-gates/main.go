// Prints, as JSON, the feature gates the pinned release's kubelet reads: every gate constant of
// the gate packages below (k8s.io/kubernetes/pkg/features and the library gates the kubelet's
// gate set also registers: the apiserver's, client-go's, component-base's logging, zpages and
// metrics ones) referenced in the non-test Go files of the packages k8s.io/kubernetes/cmd/kubelet
// transitively imports, from any module (the gate's name is the constant's value:
// CPUCFSQuotaPeriod is "CustomCPUCFSQuotaPeriod"), with the package that declares it, the files
// that read it and the GOOS builds (linux, windows) those files are part of. A gate read only in
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
	module  = "k8s.io/kubernetes"
	kubelet = module + "/cmd/kubelet"
)

// The packages that declare gates of the kubelet's gate set. A library's package also reads its
// own gates unqualified (component-base's logs/api/v1 does).
var gatePackages = []string{
	module + "/pkg/features",
	"k8s.io/apiserver/pkg/features",
	"k8s.io/client-go/features",
	"k8s.io/component-base/logs/api/v1",
	"k8s.io/component-base/metrics/features",
	"k8s.io/component-base/zpages/features",
}

type gate struct {
	Name string `json:"name"`
	// The Go constant, when it differs from the gate's name.
	Constant string `json:"constant,omitempty"`
	// The package that declares it.
	Package string `json:"package"`
	// The builds whose files read it: "linux", "windows".
	GOOS []string `json:"goos"`
	// The reading files: module-relative in k8s.io/kubernetes, module@path in the others.
	ReadIn []string `json:"readIn"`
}

// A gate package's constants: gate names by constant, and the files that declare them.
type gatePackage struct {
	names    map[string]string
	declares map[string]bool
}

// Each gate package's Feature-typed constants (featuregate.Feature; client-go's own Feature type).
func gateNames() map[string]gatePackage {
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedTypes | packages.NeedSyntax | packages.NeedFiles}, gatePackages...)
	if err != nil || packages.PrintErrors(pkgs) > 0 {
		panic(fmt.Sprint("loading the gate packages: ", err))
	}
	out := map[string]gatePackage{}
	for _, p := range pkgs {
		gp := gatePackage{names: map[string]string{}, declares: map[string]bool{}}
		scope := p.Types.Scope()
		for _, id := range scope.Names() {
			c, ok := scope.Lookup(id).(*types.Const)
			if !ok || !strings.HasSuffix(c.Type().String(), ".Feature") {
				continue
			}
			gp.names[id] = constant.StringVal(c.Val())
			gp.declares[p.Fset.Position(c.Pos()).Filename] = true
		}
		if len(gp.names) == 0 {
			panic(p.PkgPath + ": no gate constants")
		}
		out[p.PkgPath] = gp
	}
	return out
}

// A Go file of a package cmd/kubelet builds with.
type file struct {
	path    string // on disk
	label   string // as listed in readIn
	pkgPath string
}

// The files of the packages cmd/kubelet builds with for goos.
func kubeletFiles(goos string) []file {
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedImports | packages.NeedDeps | packages.NeedModule,
		Env:  append(os.Environ(), "GOOS="+goos, "GOARCH=amd64", "CGO_ENABLED=0"),
	}
	pkgs, err := packages.Load(cfg, kubelet)
	if err != nil || packages.PrintErrors(pkgs) > 0 {
		panic(fmt.Sprint("loading ", kubelet, " for ", goos, ": ", err))
	}
	var files []file
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		if p.Module == nil || !strings.HasPrefix(p.Module.Path, "k8s.io/") {
			return
		}
		for _, f := range p.GoFiles {
			rel := strings.TrimPrefix(f, p.Module.Dir+string(os.PathSeparator))
			if strings.HasSuffix(rel, "_test.go") {
				continue
			}
			label := rel
			if p.Module.Path != module {
				label = p.Module.Path + "@" + rel
			}
			files = append(files, file{path: f, label: label, pkgPath: p.PkgPath})
		}
	})
	return files
}

// A gate read: the declaring package and the constant.
type ref struct{ pkg, id string }

// The gate constants a file references: pkg.X through a gate package's import name, and a gate
// package's own files' bare constants (not the files declaring them).
func referenced(f file, gates map[string]gatePackage) []ref {
	tree, err := parser.ParseFile(token.NewFileSet(), f.path, nil, parser.SkipObjectResolution)
	if err != nil {
		panic(err)
	}
	local := map[string]string{}
	for _, imp := range tree.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if _, ok := gates[p]; !ok {
			continue
		}
		name := p[strings.LastIndex(p, "/")+1:]
		if p == "k8s.io/component-base/logs/api/v1" {
			name = "v1"
		}
		if imp.Name != nil {
			name = imp.Name.Name
		}
		if name == "." || name == "_" {
			panic(f.path + ": " + p + " imported as " + name)
		}
		local[name] = p
	}
	own, isGatePkg := gates[f.pkgPath]
	if isGatePkg && own.declares[f.path] {
		isGatePkg = false
	}
	if f.pkgPath == gatePackages[0] {
		return nil // the kubelet's gate set: it registers the library gates, reading none
	}
	var refs []ref
	selected := map[*ast.Ident]bool{} // x.Name's Name: a field or method, not the package's constant
	ast.Inspect(tree, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			selected[n.Sel] = true
			if x, ok := n.X.(*ast.Ident); ok && local[x.Name] != "" {
				refs = append(refs, ref{local[x.Name], n.Sel.Name})
				return false
			}
		case *ast.Ident:
			if isGatePkg && !selected[n] && own.names[n.Name] != "" {
				refs = append(refs, ref{f.pkgPath, n.Name})
			}
		}
		return true
	})
	return refs
}

func main() {
	gates := gateNames()
	byName := map[string]*gate{}
	for _, goos := range []string{"linux", "windows"} {
		for _, f := range kubeletFiles(goos) {
			for _, r := range referenced(f, gates) {
				name, ok := gates[r.pkg].names[r.id]
				if !ok {
					continue // not a gate (a helper of the package)
				}
				g := byName[name]
				if g == nil {
					g = &gate{Name: name, Package: r.pkg}
					if r.id != name {
						g.Constant = r.id
					}
					byName[name] = g
				}
				if !contains(g.GOOS, goos) {
					g.GOOS = append(g.GOOS, goos)
				}
				if !contains(g.ReadIn, f.label) {
					g.ReadIn = append(g.ReadIn, f.label)
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
