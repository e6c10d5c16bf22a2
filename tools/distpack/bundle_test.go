package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestWriteZipIsAFunctionOfItsEntries(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "storelink-mcp")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	mtime := time.Unix(1796042127, 0).UTC()
	a := []entry{{name: "manifest.json", mode: 0o644, body: []byte("{}")}, {name: "storelink-mcp", mode: 0o755, src: bin}, {name: "README.md", mode: 0o644, body: []byte("r")}}
	b := []entry{a[2], a[1], a[0]}
	var first, second bytes.Buffer
	if err := writeZip(&first, a, mtime); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(bin, time.Now(), time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := writeZip(&second, b, mtime); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Bytes(), second.Bytes()) {
		t.Fatal("same entries in another order or with another file time gave different zips")
	}
	zr, err := zip.NewReader(bytes.NewReader(first.Bytes()), int64(first.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		if !f.Modified.Equal(mtime) {
			t.Errorf("%s: modified %v, want %v", f.Name, f.Modified, mtime)
		}
		want := os.FileMode(0o644)
		if f.Name == "storelink-mcp" {
			want = 0o755
		}
		if f.Mode() != want {
			t.Errorf("%s: mode %v, want %v", f.Name, f.Mode(), want)
		}
	}
	if got := strings.Join(names, " "); got != "README.md manifest.json storelink-mcp" {
		t.Errorf("members %q, want sorted", got)
	}
}

// TestBundleManifest pins what the host passes: every user_config entry
// reaches the server as exactly one variable, every optional one has a
// default (a host leaves `${user_config.x}` in place otherwise), and the
// only sensitive entry is the inline keyring.
func TestBundleManifest(t *testing.T) {
	b, err := bundleManifest("v1.2.3", "darwin", "https://github.com/korral/storelink")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Version string `json:"version"`
		Server  struct {
			Type      string `json:"type"`
			MCPConfig struct {
				Command string            `json:"command"`
				Args    []string          `json:"args"`
				Env     map[string]string `json:"env"`
			} `json:"mcp_config"`
		} `json:"server"`
		Compatibility struct {
			Platforms []string `json:"platforms"`
		} `json:"compatibility"`
		UserConfig map[string]map[string]any `json:"user_config"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Version != "1.2.3" || m.Server.Type != "binary" || m.Server.MCPConfig.Command != "${__dirname}/storelink-mcp" ||
		strings.Join(m.Server.MCPConfig.Args, " ") != "stdio" || strings.Join(m.Compatibility.Platforms, " ") != "darwin" {
		t.Errorf("manifest: %s", b)
	}
	ref := regexp.MustCompile(`^\$\{user_config\.([a-z_]+)\}$`)
	used := map[string]bool{}
	for env, v := range m.Server.MCPConfig.Env {
		k := ref.FindStringSubmatch(v)
		if k == nil || m.UserConfig[k[1]] == nil {
			t.Errorf("%s=%s names no user_config entry", env, v)
			continue
		}
		used[k[1]] = true
	}
	var sensitive []string
	for k, o := range m.UserConfig {
		if !used[k] {
			t.Errorf("user_config %s reaches no variable", k)
		}
		if _, ok := o["default"]; !ok && o["required"] != true {
			t.Errorf("user_config %s is optional without a default", k)
		}
		if o["sensitive"] == true {
			sensitive = append(sensitive, k)
		}
	}
	if strings.Join(sensitive, " ") != "storelink_keyring" {
		t.Errorf("sensitive entries %v, want only storelink_keyring", sensitive)
	}
	if _, err := bundleManifest("v1", "windows", "x"); err == nil {
		t.Error("a bundle for windows, which no release builds, was made")
	}
}

func TestRunBundleAndRegistry(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "storelink-mcp")
	readme := filepath.Join(dir, "README.md")
	os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(readme, []byte("r"), 0o644)
	out := filepath.Join(dir, "storelink-mcp_v1.2.3_linux_amd64.mcpb")
	if err := run([]string{"bundle", "-o", out, "-version", "v1.2.3", "-os", "linux", "-source", "https://github.com/korral/storelink", "-epoch", "0", bin, readme}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"bundle", "-o", out, "-version", "v1.2.3", "-os", "linux", "-source", "s", "-epoch", "0", readme, bin}, io.Discard, io.Discard); err == nil {
		t.Error("a bundle whose first file is not storelink-mcp was made")
	}
	sj := filepath.Join(dir, "server.json")
	if err := run([]string{"registry", "-o", sj, "-version", "v1.2.3", "-source", "https://github.com/korral/storelink", out}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(sj)
	for _, want := range []string{`"name": "io.github.korral/storelink"`, `"version": "1.2.3"`, `"registryType": "mcpb"`,
		`"identifier": "https://github.com/korral/storelink/releases/download/v1.2.3/storelink-mcp_v1.2.3_linux_amd64.mcpb"`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("server.json lacks %s:\n%s", want, b)
		}
	}
}
