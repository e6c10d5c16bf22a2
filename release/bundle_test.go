package release_test

// Checks of the MCP bundles and server.json that `make release` writes (ADR 0022).

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/korral/storelink/internal/e2etest"
)

func bundleName(version, platform string) string {
	return "storelink-mcp_" + version + "_" + strings.ReplaceAll(platform, "/", "_") + ".mcpb"
}

// bundleManifest is the part of manifest.json these checks read.
type bundleManifest struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Server  struct {
		Type       string    `json:"type"`
		EntryPoint string    `json:"entry_point"`
		MCPConfig  mcpConfig `json:"mcp_config"`
	} `json:"server"`
	Compatibility struct {
		Platforms []string `json:"platforms"`
	} `json:"compatibility"`
	UserConfig map[string]struct {
		Type      string `json:"type"`
		Required  bool   `json:"required"`
		Default   any    `json:"default"`
		Sensitive bool   `json:"sensitive"`
	} `json:"user_config"`
}

// mcpConfig is how a host starts the server.
type mcpConfig struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

// unzip unpacks a bundle into dir with modes and returns the members' bodies by name.
func unzip(t *testing.T, name, dir string) map[string][]byte {
	t.Helper()
	zr, err := zip.OpenReader(name)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	out := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[f.Name] = b
		if dir != "" {
			if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(f.Name)), b, f.Mode().Perm()); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out
}

// TestDistBundles checks each platform's bundle: members, the archive's
// binary, and the release's version in the manifest.
func TestDistBundles(t *testing.T) {
	s := distStamp(t)
	for _, p := range releasePlatforms {
		name := filepath.Join(s.dist, bundleName(s.version, p))
		if _, err := os.Stat(name); err != nil {
			if p == "linux/amd64" || os.Getenv("CI") != "" {
				t.Errorf("%s: %v", p, err)
			}
			continue // a narrower PLATFORMS
		}
		members := unzip(t, name, "")
		var names []string
		for n := range members {
			names = append(names, n)
		}
		slices.Sort(names)
		if got := strings.Join(names, " "); got != "LICENSE README.md THIRD_PARTY manifest.json storelink-mcp" {
			t.Errorf("%s members: %s", p, got)
		}
		for _, m := range readTarFile(t, filepath.Join(s.dist, archiveName(s.version, p)+".tar.gz")) {
			if path := strings.TrimPrefix(m.hdr.Name, archiveName(s.version, p)+"/"); members[path] != nil && !bytes.Equal(m.body, members[path]) {
				t.Errorf("%s: %s differs between the archive and the bundle", p, path)
			}
		}
		var man bundleManifest
		unmarshal(t, members["manifest.json"], &man)
		if man.Version != strings.TrimPrefix(s.version, "v") || man.Server.Type != "binary" || man.Server.EntryPoint != "storelink-mcp" ||
			!slices.Equal(man.Compatibility.Platforms, []string{strings.Split(p, "/")[0]}) {
			t.Errorf("%s manifest: version %q type %q entry %q platforms %v", p, man.Version, man.Server.Type, man.Server.EntryPoint, man.Compatibility.Platforms)
		}
		for _, want := range []string{"storelink_url", "storelink_keyring_file", "state_db_path", "allow_writes", "read_only", "write_approval"} {
			if _, ok := man.UserConfig[want]; !ok {
				t.Errorf("%s: user_config lacks %s", p, want)
			}
		}
	}
}

// hostDirs are the system directories a host offers a manifest (${HOME} and the like).
func hostDirs(home string) map[string]string {
	return map[string]string{"HOME": home, "DESKTOP": filepath.Join(home, "Desktop"), "DOCUMENTS": filepath.Join(home, "Documents"), "DOWNLOADS": filepath.Join(home, "Downloads")}
}

// resolve fills in a manifest's mcp_config as mcpb's getMcpConfigForManifest
// does: defaults, then user values, then `${name}` replaced (unknown ones kept).
func resolve(man bundleManifest, dir, home string, user map[string]any) mcpConfig {
	merged := map[string]any{}
	for k, o := range man.UserConfig {
		if o.Default != nil {
			merged[k] = o.Default
		}
	}
	for k, v := range user {
		merged[k] = v
	}
	vars := map[string]string{"__dirname": dir, "pathSeparator": "/", "/": "/"}
	for k, v := range hostDirs(home) {
		vars[k] = v
	}
	for k, v := range merged {
		switch v := v.(type) {
		case bool:
			vars["user_config."+k] = map[bool]string{true: "true", false: "false"}[v]
		case string:
			vars["user_config."+k] = v
		default:
			b, _ := json.Marshal(v)
			vars["user_config."+k] = string(b)
		}
	}
	ref := regexp.MustCompile(`\$\{([^}]+)\}`)
	sub := func(s string) string {
		return ref.ReplaceAllStringFunc(s, func(m string) string {
			if v, ok := vars[m[2:len(m)-1]]; ok {
				return v
			}
			return m
		})
	}
	c := mcpConfig{Command: sub(man.Server.MCPConfig.Command), Env: map[string]string{}}
	for _, a := range man.Server.MCPConfig.Args {
		c.Args = append(c.Args, sub(a))
	}
	for k, v := range man.Server.MCPConfig.Env {
		c.Env[k] = sub(v)
	}
	return c
}

// resolveWithMCPB is resolve done by the mcpb library (STORELINK_MCPB); user
// values go on stdin, never in arguments.
func resolveWithMCPB(t *testing.T, manifest []byte, dir, home string, user map[string]any) (mcpConfig, bool) {
	t.Helper()
	bin := os.Getenv("STORELINK_MCPB")
	if bin == "" {
		return mcpConfig{}, false
	}
	lib := filepath.Join(filepath.Dir(filepath.Dir(bin)), "@anthropic-ai", "mcpb", "dist", "index.js")
	const script = `const lib = await import(process.argv[1]);
let input = ""; for await (const c of process.stdin) input += c;
const o = JSON.parse(input);
process.stdout.write(JSON.stringify(await lib.getMcpConfigForManifest(o)));`
	in, _ := json.Marshal(map[string]any{"manifest": json.RawMessage(manifest), "extensionPath": dir, "systemDirs": hostDirs(home), "userConfig": user, "pathSeparator": "/"})
	cmd := exec.Command("node", "--input-type=module", "-e", script, "file://"+lib)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mcpb's getMcpConfigForManifest: %v", err)
	}
	var c mcpConfig
	unmarshal(t, out, &c)
	return c, true
}

// installBundle unpacks the bundle under a path with spaces and fills in its
// mcp_config, checked against mcpb's when installed.
func installBundle(t *testing.T, name, home string, user map[string]any) mcpConfig {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "Claude Extensions", "korral-storelink") // a host's path has spaces
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	members := unzip(t, name, dir)
	var man bundleManifest
	unmarshal(t, members["manifest.json"], &man)
	cfg := resolve(man, dir, home, user)
	if lib, ok := resolveWithMCPB(t, members["manifest.json"], dir, home, user); ok {
		if d := cmp.Diff(lib, cfg); d != "" {
			t.Errorf("mcpb resolves the manifest otherwise (-mcpb +ours):\n%s", d)
		}
	} else if os.Getenv("CI") != "" {
		t.Error("STORELINK_MCPB is unset: make release-check sets it")
	}
	for k, v := range cfg.Env {
		if strings.Contains(v, "${") {
			t.Errorf("%s=%s: a placeholder the host would leave in place", k, v)
		}
	}
	if cfg.Command != filepath.Join(dir, "storelink-mcp") {
		t.Errorf("command %q, want the unpacked binary", cfg.Command)
	}
	return cfg
}

// TestDistBundleStartsAsHostWould installs the linux/amd64 bundle, starts it
// as the manifest says against a mock and lists the tools, with the keyring
// file and with keys in the sensitive setting (which must not reach the log).
func TestDistBundleStartsAsHostWould(t *testing.T) {
	s := distStamp(t)
	if runtime.GOOS+"/"+runtime.GOARCH != "linux/amd64" {
		t.Skip("starts the linux/amd64 bundle's binary")
	}
	name := filepath.Join(s.dist, bundleName(s.version, "linux/amd64"))
	w := e2etest.NewWorld(t)
	keyring, err := os.ReadFile(w.KeyringPath)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]string
	unmarshal(t, keyring, &keys)
	for _, tc := range []struct {
		name string
		user map[string]any
	}{
		{"keyring file", map[string]any{"storelink_url": w.Mock.URL, "storelink_keyring_file": w.KeyringPath, "state_db_path": w.StatePath, "allow_writes": true}},
		{"sensitive keyring", map[string]any{"storelink_url": w.Mock.URL, "storelink_keyring": string(keyring), "state_db_path": filepath.Join(w.Dir, "other.db"), "read_only": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := installBundle(t, name, w.Dir, tc.user)

			cmd := exec.Command(cfg.Command, cfg.Args...)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + w.Dir}
			for k, v := range cfg.Env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			var stderr e2etest.SyncBuffer
			cmd.Stderr = &stderr
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			client := mcp.NewClient(&mcp.Implementation{Name: "bundle-host", Version: "1"}, nil)
			cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				t.Fatalf("initialize: %v\nstderr:\n%s", err, stderr.String())
			}
			t.Cleanup(func() {
				if cmd.ProcessState == nil && cmd.Process != nil {
					_ = cmd.Process.Kill()
				}
			})
			if got := cs.InitializeResult().ServerInfo.Version; got != s.version {
				t.Errorf("server version %q, want %q", got, s.version)
			}
			res, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatalf("tools/list: %v\nstderr:\n%s", err, stderr.String())
			}
			var tools []string
			for _, tool := range res.Tools {
				tools = append(tools, tool.Name)
			}
			readOnly := tc.user["read_only"] == true
			if !slices.Contains(tools, "korral_check_stock_risk") || slices.Contains(tools, "korral_raise_replenishment_order") != !readOnly {
				t.Errorf("tools %v with read_only=%v", tools, readOnly)
			}
			if err := cs.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
			if cmd.ProcessState == nil {
				t.Error("the server still runs after the session closed")
			}
			for store, key := range keys {
				if strings.Contains(stderr.String(), key) {
					t.Errorf("the log holds store %s's key", store)
				}
			}
		})
	}
}

// TestDistServerJSON validates dist/server.json against the pinned registry
// schema and checks its version and each bundle's SHA-256.
func TestDistServerJSON(t *testing.T) {
	s := distStamp(t)
	raw, err := os.ReadFile(filepath.Join(s.dist, "server.json"))
	if err != nil {
		t.Fatal(err)
	}
	validateServerJSON(t, raw)
	var sj struct {
		Version  string `json:"version"`
		Packages []struct {
			RegistryType string `json:"registryType"`
			Identifier   string `json:"identifier"`
			Version      string `json:"version"`
			FileSHA256   string `json:"fileSha256"`
		} `json:"packages"`
	}
	unmarshal(t, raw, &sj)
	want := strings.TrimPrefix(s.version, "v")
	if sj.Version != want {
		t.Errorf("server.json version %q, want %q", sj.Version, want)
	}
	bundles, _ := filepath.Glob(filepath.Join(s.dist, "*.mcpb"))
	if len(sj.Packages) != len(bundles) || len(bundles) == 0 {
		t.Fatalf("%d packages for %d bundles", len(sj.Packages), len(bundles))
	}
	for _, p := range sj.Packages {
		base := p.Identifier[strings.LastIndex(p.Identifier, "/")+1:]
		b, err := os.ReadFile(filepath.Join(s.dist, base))
		if err != nil {
			t.Errorf("%s names no bundle of dist/: %v", p.Identifier, err)
			continue
		}
		sum := sha256.Sum256(b)
		if p.RegistryType != "mcpb" || p.Version != want || p.FileSHA256 != hex.EncodeToString(sum[:]) ||
			!strings.HasSuffix(p.Identifier, "/releases/download/"+s.version+"/"+base) {
			t.Errorf("package %+v does not describe %s (sha256 %x)", p, base, sum)
		}
	}
}

// serverSchemaSHA256 pins release/server.schema.json, the registry's
// 2025-12-11 schema copied from modelcontextprotocol/registry at
// e361b5ff5a925b36a38eda0544bca8230a84558b; never edited (ADR 0022).
const serverSchemaSHA256 = "d4c163f299ece68b7432f4e44c4108f2fdb663d99dc088c8344142e5b0a4b520"

// serverSchema compiles the pinned registry schema, asserting formats.
func serverSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(e2etest.Path(t, "release/server.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	const id = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
	if err := c.AddResource(id, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(id)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// schemaError is why raw breaks the pinned schema, or nil.
func schemaError(t *testing.T, raw []byte) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return serverSchema(t).Validate(v)
}

func validateServerJSON(t *testing.T, raw []byte) {
	t.Helper()
	if err := schemaError(t, raw); err != nil {
		t.Errorf("server.json breaks the registry's schema: %v\n%s", err, raw)
	}
}

// TestServerSchemaRejects shows the pinned schema catches what the registry
// refuses. It needs no release.
func TestServerSchemaRejects(t *testing.T) {
	b, err := os.ReadFile(e2etest.Path(t, "release/server.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != serverSchemaSHA256 {
		t.Fatalf("release/server.schema.json has sha256 %x, not the pinned copy's %s: replace it with the registry's file and update the sum", sum, serverSchemaSHA256)
	}
	good := `{"name":"io.github.korral/storelink","description":"d","version":"1.0.0","packages":[{"registryType":"mcpb","identifier":"https://x/a.mcpb","fileSha256":"` + strings.Repeat("a", 64) + `","transport":{"type":"stdio"}}]}`
	validateServerJSON(t, []byte(good))
	for _, bad := range []string{
		`{"name":"storelink","description":"d","version":"1.0.0"}`,                                   // no namespace
		`{"name":"io.github.korral/storelink","version":"1.0.0"}`,                                    // no description
		`{"name":"io.github.korral/storelink","description":"d","version":"1.0.0","websiteUrl":"x"}`, // not a URI
		strings.Replace(good, `"type":"stdio"`, `"type":"pipe"`, 1),
		strings.Replace(good, strings.Repeat("a", 64), "abc", 1),
	} {
		if schemaError(t, []byte(bad)) == nil {
			t.Errorf("the schema accepts %s", bad)
		}
	}
}
