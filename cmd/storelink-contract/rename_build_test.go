package main

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/openapi"
	"github.com/korral/storelink/openapi/contract"
)

// structFields reads the generated structs of a Go file: type name to
// each field's name and JSON name.
func structFields(t *testing.T, file string) map[string]map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]string{}
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, spec := range gd.Specs {
			ts, ok := spec.(*ast.TypeSpec)
			if !ok {
				continue
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				continue
			}
			fields := map[string]string{}
			for _, fld := range st.Fields.List {
				if len(fld.Names) != 1 || fld.Tag == nil {
					continue
				}
				tag, _ := strconv.Unquote(fld.Tag.Value)
				name, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
				fields[fld.Names[0].Name] = name
			}
			out[ts.Name.Name] = fields
		}
	}
	return out
}

// TestSuggestedRenamesKeepTheBuild: suggest's renames, regenerated, keep
// every generated type and Go field, and the whole workspace builds and
// vets unchanged.
func TestSuggestedRenamesKeepTheBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds oapi-codegen and the workspace")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	sug, renamed := suggestForeignRenames(t)
	dir := t.TempDir()
	spec := filepath.Join(dir, "storelink.yaml")
	if err := os.WriteFile(spec, sug.Patched, 0o644); err != nil {
		t.Fatal(err)
	}
	// The generator pinned in tools/go.mod, as go generate runs it.
	gen := filepath.Join(dir, "oapi-codegen")
	runTool(t, filepath.Join(root, "tools"), []string{"GOWORK=off"}, "go", "build", "-o", gen, "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen")
	overlay := map[string]string{filepath.Join(root, "openapi", "storelink.yaml"): spec}
	for _, pkg := range []string{"storelinkclient", "mockstorelink/internal/api"} {
		committed := filepath.Join(root, pkg, "storelink.gen.go")
		regenerated := regenerate(t, root, dir, gen, spec, pkg)
		overlay[committed] = regenerated
		checkGoFields(t, pkg, structFields(t, committed), structFields(t, regenerated), renamed)
	}
	b, err := json.Marshal(map[string]any{"Replace": overlay})
	if err != nil {
		t.Fatal(err)
	}
	ov := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ov, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// Every package of the workspace builds, and vet type-checks its
	// tests, against the regenerated code.
	runTool(t, root, nil, "go", "build", "-overlay", ov, "github.com/korral/storelink/...")
	runTool(t, root, nil, "go", "vet", "-overlay", ov, "github.com/korral/storelink/...")
}

// suggestForeignRenames checks the foreign double, adds a rename of a bare
// $ref property, and returns the suggestion and its renames: Go field to
// StoreLink's JSON name.
func suggestForeignRenames(t *testing.T) (*contract.Suggestion, map[string]string) {
	t.Helper()
	_, srv, keyring := startForeign(t)
	_, report, _ := cli(t, foreignCheckArgs(srv.URL, keyring)...)
	causes, err := contract.ReadCauses(strings.NewReader(report))
	if err != nil {
		t.Fatal(err)
	}
	causes = append(causes, contract.Cause{ID: "rename:tz", Kind: contract.FindingRename, Count: 1, Operations: []string{"listStores"},
		Evidence: &contract.Evidence{Component: "StoreSummary", Property: "timezone", Found: "tz", JSONType: "string"}})
	sug, err := contract.Suggest(openapi.YAML, causes)
	if err != nil {
		t.Fatal(err)
	}
	renamed := map[string]string{}
	for _, p := range sug.Proposals {
		if !strings.HasPrefix(p.Change, "rename ") {
			continue
		}
		// "rename C.old to new (Go field G)"
		f := strings.Fields(p.Change)
		renamed[strings.TrimSuffix(f[len(f)-1], ")")] = f[3]
	}
	for _, goName := range []string{"OnHandUnits", "MinimumOrderUnits", "QuantityUnits", "SubmittedAt", "ExpectedArrival", "Timezone"} {
		if renamed[goName] == "" {
			t.Fatalf("no rename kept the Go field %s: %+v", goName, sug.Proposals)
		}
	}
	return sug, renamed
}

// runTool runs a command in dir and fails the test on error.
func runTool(t *testing.T, dir string, env []string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	t.Logf("%s %s: %s", filepath.Base(name), args[0], time.Since(start).Round(time.Second))
}

// regenerate runs the generator on the patched spec with the package's
// configuration and templates, copied to a directory of their own (the
// configuration names its output file), and returns the generated file.
func regenerate(t *testing.T, root, dir, gen, spec, pkg string) string {
	t.Helper()
	out := filepath.Join(dir, strings.ReplaceAll(pkg, "/", "_"))
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(root, pkg))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if n := e.Name(); strings.HasSuffix(n, ".tmpl") || n == "oapi-codegen.yaml" || n == "go.mod" {
			b, err := os.ReadFile(filepath.Join(root, pkg, n))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(out, n), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	runTool(t, out, nil, gen, "-config", "oapi-codegen.yaml", spec)
	return filepath.Join(out, "storelink.gen.go")
}

// checkGoFields checks that every type and Go field is still there (the
// patch may add properties and responses, so more may be), each renamed
// field reading StoreLink's JSON name.
func checkGoFields(t *testing.T, pkg string, before, after map[string]map[string]string, renamed map[string]string) {
	t.Helper()
	if len(before) < 10 {
		t.Fatalf("%s: %d generated structs read", pkg, len(before))
	}
	for typ, fields := range before {
		if after[typ] == nil {
			t.Errorf("%s: type %s is gone", pkg, typ)
		}
		for goName := range fields {
			if _, ok := after[typ][goName]; !ok {
				t.Errorf("%s: %s.%s is gone: %v", pkg, typ, goName, slices.Sorted(maps.Keys(after[typ])))
			}
		}
	}
	seen := map[string]bool{}
	for typ, fields := range before {
		for goName, jsonName := range after[typ] {
			if want, ok := renamed[goName]; ok && fields[goName] != jsonName {
				if jsonName != want {
					t.Errorf("%s: %s.%s reads %q, want %q", pkg, typ, goName, jsonName, want)
				}
				seen[goName] = true
			}
		}
	}
	for goName := range renamed {
		if !seen[goName] {
			t.Errorf("%s: no field %s reads StoreLink's name %s", pkg, goName, renamed[goName])
		}
	}
}
