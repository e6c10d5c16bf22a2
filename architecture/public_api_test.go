package architecture_test

import (
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestPublicAPINamesNoInternalType: code outside a module cannot name a type
// from the module's internal packages, so a public package whose exported
// functions, fields or methods use one promises an API nobody can call
// (ADR 0033). The test reads each package's compiled export data.
func TestPublicAPINamesNoInternalType(t *testing.T) {
	exports := exportData(t)
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	var public []*types.Package
	for path := range exports {
		if !ours(path) || isInternal(path) {
			continue
		}
		pkg, err := imp.Import(path)
		if err != nil {
			t.Fatalf("import %s: %v", path, err)
		}
		if pkg.Name() != "main" {
			public = append(public, pkg)
		}
	}
	aliased := aliasedInternalTypes(public)
	for _, pkg := range public {
		for _, leak := range internalTypesIn(pkg, aliased) {
			t.Errorf("%s: %s", pkg.Path(), leak)
		}
	}
	checked := len(public)
	if checked < 5 {
		t.Fatalf("checked only %d public packages: the package list is wrong", checked)
	}
}

// TestInternalTypeScanCatchesALeak checks the scan itself on a package built
// here: an exported function whose result is a type of an internal package.
func TestInternalTypeScanCatchesALeak(t *testing.T) {
	internal := types.NewPackage("github.com/korral/storelink/example/internal/secret", "secret")
	key := types.NewNamed(types.NewTypeName(token.NoPos, internal, "Key", nil), types.Typ[types.String], nil)
	public := types.NewPackage("github.com/korral/storelink/example/api", "api")
	res := types.NewTuple(types.NewVar(token.NoPos, public, "", types.NewPointer(key)))
	fn := types.NewFunc(token.NoPos, public, "Open", types.NewSignatureType(nil, nil, nil, nil, res, false))
	public.Scope().Insert(fn)
	if leaks := internalTypesIn(public, nil); len(leaks) != 1 || !strings.Contains(leaks[0], "secret.Key") {
		t.Fatalf("leaks = %q, want the one through Open", leaks)
	}
	// Exported under an alias, the type can be named from outside.
	public.Scope().Insert(types.NewTypeName(token.NoPos, public, "Key", types.NewAlias(types.NewTypeName(token.NoPos, public, "Key", nil), key)))
	if leaks := internalTypesIn(public, aliasedInternalTypes([]*types.Package{public})); len(leaks) != 0 {
		t.Fatalf("leaks = %q with the alias api.Key, want none", leaks)
	}
}

// exportData maps every package of the workspace's modules, and each of
// their dependencies, to its compiled export data.
func exportData(t *testing.T) map[string]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", "github.com/korral/storelink/...")
	cmd.Dir = repoRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	m := map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		path, file, _ := strings.Cut(line, "\t")
		if file != "" {
			m[path] = file
		}
	}
	return m
}

func ours(path string) bool { return strings.HasPrefix(path, "github.com/korral/storelink") }

func isInternal(path string) bool {
	return slices.Contains(strings.Split(path, "/"), "internal")
}

// aliasedInternalTypes are the internal types that a public package exports
// under an alias of its own: outside code can name those through the alias.
func aliasedInternalTypes(public []*types.Package) map[*types.TypeName]bool {
	m := map[*types.TypeName]bool{}
	for _, pkg := range public {
		for _, name := range pkg.Scope().Names() {
			if tn, ok := pkg.Scope().Lookup(name).(*types.TypeName); ok && tn.Exported() && tn.IsAlias() {
				if n, ok := types.Unalias(tn.Type()).(*types.Named); ok {
					m[n.Obj()] = true
				}
			}
		}
	}
	return m
}

// internalTypesIn lists each exported name of pkg whose signature, fields or
// methods use a type declared in an internal package and not exported under
// an alias (aliased). An aliased type is checked in turn.
func internalTypesIn(pkg *types.Package, aliased map[*types.TypeName]bool) []string {
	var leaks []string
	for _, name := range pkg.Scope().Names() {
		obj := pkg.Scope().Lookup(name)
		if !obj.Exported() {
			continue
		}
		w := &typeWalk{seen: map[types.Type]bool{}, aliased: aliased}
		if tn, ok := obj.(*types.TypeName); ok && !tn.IsAlias() {
			named := tn.Type().(*types.Named)
			w.walk(named.Underlying())
			for m := range named.Methods() {
				if m.Exported() {
					w.walk(m.Type())
				}
			}
		} else {
			w.walk(obj.Type())
		}
		for _, l := range w.leaks {
			leaks = append(leaks, fmt.Sprintf("%s names %s", name, l))
		}
	}
	return leaks
}

// typeWalk visits the types a caller would have to name to use a value.
type typeWalk struct {
	seen    map[types.Type]bool
	aliased map[*types.TypeName]bool
	leaks   []string
}

func (w *typeWalk) walk(t types.Type) {
	if t == nil || w.seen[t] {
		return
	}
	w.seen[t] = true
	switch t := t.(type) {
	case *types.Alias:
		w.walk(types.Unalias(t))
	case *types.Named:
		p := t.Obj().Pkg()
		switch {
		case p == nil || !ours(p.Path()):
		case isInternal(p.Path()) && !w.aliased[t.Obj()]:
			w.leaks = append(w.leaks, p.Name()+"."+t.Obj().Name())
			return
		case isInternal(p.Path()) || !t.Obj().Exported():
			// Reachable through an alias, or unexported: what it exposes
			// is part of this API.
			w.walk(t.Underlying())
			for m := range t.Methods() {
				if m.Exported() {
					w.walk(m.Type())
				}
			}
		}
		for a := range t.TypeArgs().Types() {
			w.walk(a)
		}
	case *types.Pointer:
		w.walk(t.Elem())
	case *types.Slice:
		w.walk(t.Elem())
	case *types.Array:
		w.walk(t.Elem())
	case *types.Chan:
		w.walk(t.Elem())
	case *types.Map:
		w.walk(t.Key())
		w.walk(t.Elem())
	case *types.Signature:
		for v := range t.Params().Variables() {
			w.walk(v.Type())
		}
		for v := range t.Results().Variables() {
			w.walk(v.Type())
		}
	case *types.Struct:
		for f := range t.Fields() {
			if f.Exported() || f.Embedded() {
				w.walk(f.Type())
			}
		}
	case *types.Interface:
		for m := range t.Methods() {
			if m.Exported() {
				w.walk(m.Type())
			}
		}
		for e := range t.EmbeddedTypes() {
			w.walk(e)
		}
	}
}
