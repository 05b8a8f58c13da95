// Writes kubelet-ts's protobuf definitions of the built-in API types the kubelet reads and writes
// (proto/k8s/...), and the fixtures its codec's table tests decode (src/apiserver/protobuf/testdata).
//
// The .proto files are ours: walked from the Go types of the pinned k8s.io/api and
// k8s.io/apimachinery with reflect (each field's protobuf struct tag gives its number and wire type),
// not copied from upstream's generated.proto; src/apiserver/protobuf/proto-compat.test.ts checks
// them against those files. Each field also carries what the codec needs to yield the very object
// the JSON path yields and that the .proto of upstream does not say: its JSON tag ((k8s.json):
// name, omitempty, inline) and whether the Go field is a pointer ((k8s.ptr): set means present, even
// when zero). The few types with a hand-written wire form (metav1.Time, Quantity, IntOrString...) are
// marked with (k8s.special) so the codec converts them to and from their JSON strings.
//
// Regenerate (from the repository's root):
//
//	(cd hack/tools/kube && go run ./kube-proto proto ../../../proto/k8s)
//	(cd hack/tools/kube && go run ./kube-proto fixtures ../../../src/apiserver/protobuf/testdata)
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The API groups the kubelet talks to; every kind of each is defined (the client asks for
// protobuf by group/version, so a kind left out would be one it could not read).
var addToScheme = []func(*runtime.Scheme) error{
	corev1.AddToScheme, coordinationv1.AddToScheme, certificatesv1.AddToScheme, storagev1.AddToScheme,
	nodev1.AddToScheme, resourcev1.AddToScheme, authenticationv1.AddToScheme, authorizationv1.AddToScheme,
}

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range addToScheme {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: kube-proto proto|fixtures DIR")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "proto":
		err = writeProtos(os.Args[2])
	case "fixtures":
		err = writeFixtures(os.Args[2])
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

type protoField struct {
	num  int
	line string
}

type protoMessage struct {
	name    string
	special string
	fields  []protoField
}

type protoFile struct {
	goPath   string
	messages map[string]*protoMessage
	imports  map[string]bool
}

type generator struct {
	files map[string]*protoFile
}

func protoPackage(goPath string) string { return strings.ReplaceAll(goPath, "/", ".") }

func fileName(goPath string) string { return filepath.Join(goPath, "types.proto") }

// The types whose wire form is written by hand upstream (their Go fields carry no protobuf tags).
var specials = map[reflect.Type]struct {
	kind   string
	fields []string
}{
	reflect.TypeOf(metav1.Time{}):          {"time", []string{"optional int64 seconds = 1", "optional int32 nanos = 2"}},
	reflect.TypeOf(metav1.MicroTime{}):     {"microtime", []string{"optional int64 seconds = 1", "optional int32 nanos = 2"}},
	reflect.TypeOf(metav1.Duration{}):      {"duration", []string{"optional int64 duration = 1"}},
	reflect.TypeOf(metav1.FieldsV1{}):      {"rawjson", []string{"optional bytes Raw = 1"}},
	reflect.TypeOf(resource.Quantity{}):    {"quantity", []string{"optional string string = 1"}},
	reflect.TypeOf(intstr.IntOrString{}):   {"intorstring", []string{"optional int64 type = 1", "optional int32 intVal = 2", "optional string strVal = 3"}},
	reflect.TypeOf(runtime.RawExtension{}): {"rawjson", []string{"optional bytes raw = 1"}},
}

func (g *generator) file(goPath string) *protoFile {
	f := g.files[goPath]
	if f == nil {
		f = &protoFile{goPath: goPath, messages: map[string]*protoMessage{}, imports: map[string]bool{}}
		g.files[goPath] = f
	}
	return f
}

// ref names message t as seen from the package `from`, defining it on first sight.
func (g *generator) ref(t reflect.Type, from string) string {
	f := g.file(t.PkgPath())
	if from != t.PkgPath() {
		g.file(from).imports[t.PkgPath()] = true
	}
	name := t.Name()
	if _, done := f.messages[name]; !done {
		m := &protoMessage{name: name}
		f.messages[name] = m
		if s, ok := specials[t]; ok {
			m.special = s.kind
			for i, l := range s.fields {
				m.fields = append(m.fields, protoField{i + 1, l})
			}
		} else if t.Kind() == reflect.Slice {
			// A named slice as a map's value (authentication/v1 ExtraValue): a message of items.
			m.special = "items"
			m.fields = append(m.fields, protoField{1, fmt.Sprintf("repeated %s items = 1", g.element(t.Elem(), t.PkgPath(), ""))})
		} else {
			g.message(t, m)
		}
	}
	if from == t.PkgPath() {
		return name
	}
	return protoPackage(t.PkgPath()) + "." + name
}

// element is the proto type of a value of Go type t (a field's, a list's element, a map's value).
func (g *generator) element(t reflect.Type, from, wire string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	case reflect.Int32:
		if wire == "zigzag" {
			return "sint32"
		}
		return "int32"
	case reflect.Int64, reflect.Int:
		if wire == "zigzag" {
			return "sint64"
		}
		return "int64"
	case reflect.Uint32:
		return "uint32"
	case reflect.Uint64:
		return "uint64"
	case reflect.Float64:
		return "double"
	case reflect.Struct:
		return g.ref(t, from)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "bytes"
		}
		if t.Name() != "" {
			return g.ref(t, from)
		}
	}
	panic(fmt.Sprintf("no proto type for %s (in %s)", t, from))
}

func (g *generator) message(t reflect.Type, m *protoMessage) {
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("protobuf")
		if tag == "" || tag == "-" {
			continue
		}
		parts := strings.Split(tag, ",")
		wire := parts[0]
		num, err := strconv.Atoi(parts[1])
		if err != nil {
			panic(fmt.Sprintf("%s.%s: protobuf tag %q", t, sf.Name, tag))
		}
		// Untagged (an embedded struct): go-to-protobuf's name, the Go name's first letter lowered.
		name := strings.ToLower(sf.Name[:1]) + sf.Name[1:]
		for _, p := range parts[2:] {
			if v, ok := strings.CutPrefix(p, "name="); ok {
				name = v
			}
		}
		ft := sf.Type
		ptr := ft.Kind() == reflect.Pointer
		if ptr {
			ft = ft.Elem()
		}
		var decl string
		switch {
		case ft.Kind() == reflect.Map:
			decl = fmt.Sprintf("map<%s, %s> %s = %d", g.element(ft.Key(), t.PkgPath(), ""), g.element(ft.Elem(), t.PkgPath(), ""), name, num)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() != reflect.Uint8:
			decl = fmt.Sprintf("repeated %s %s = %d", g.element(ft.Elem(), t.PkgPath(), wire), name, num)
		default:
			decl = fmt.Sprintf("optional %s %s = %d", g.element(ft, t.PkgPath(), wire), name, num)
		}
		opts := []string{fmt.Sprintf("(k8s.json) = %q", sf.Tag.Get("json"))}
		if ptr {
			opts = append(opts, "(k8s.ptr) = true")
		}
		m.fields = append(m.fields, protoField{num, fmt.Sprintf("%s [%s]", decl, strings.Join(opts, ", "))})
	}
	sort.Slice(m.fields, func(a, b int) bool { return m.fields[a].num < m.fields[b].num })
}

const header = `// Written by hack/tools/kube/kube-proto from the Go types of the pinned release (do not edit):
// the wire form of the API types the kubelet reads and writes, as protobufjs loads them.
// (k8s.json) is the Go field's JSON tag, (k8s.ptr) marks a pointer field, (k8s.special) a type
// whose JSON form is a string or raw JSON (src/apiserver/protobuf/convert.ts).
syntax = "proto2";
`

func writeProtos(dir string) error {
	g := &generator{files: map[string]*protoFile{}}
	s := newScheme()
	var kinds []reflect.Type
	for _, t := range s.AllKnownTypes() {
		if strings.HasPrefix(t.PkgPath(), "k8s.io/api/") {
			kinds = append(kinds, t)
		}
	}
	// The envelope, watch frames and errors.
	kinds = append(kinds, reflect.TypeOf(runtime.Unknown{}), reflect.TypeOf(metav1.WatchEvent{}), reflect.TypeOf(metav1.Status{}))
	sort.Slice(kinds, func(a, b int) bool { return kinds[a].String() < kinds[b].String() })
	for _, t := range kinds {
		g.ref(t, t.PkgPath())
	}
	for goPath, f := range g.files {
		var b bytes.Buffer
		b.WriteString(header)
		fmt.Fprintf(&b, "package %s;\n\n", protoPackage(goPath))
		var imports []string
		for i := range f.imports {
			imports = append(imports, i)
		}
		sort.Strings(imports)
		for _, i := range imports {
			fmt.Fprintf(&b, "import %q;\n", fileName(i))
		}
		var names []string
		for n := range f.messages {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			m := f.messages[n]
			fmt.Fprintf(&b, "\nmessage %s {\n", n)
			if m.special != "" {
				fmt.Fprintf(&b, "  option (k8s.special) = %q;\n", m.special)
			}
			for _, fl := range m.fields {
				fmt.Fprintf(&b, "  %s;\n", fl.line)
			}
			b.WriteString("}\n")
		}
		out := filepath.Join(dir, fileName(goPath))
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}
