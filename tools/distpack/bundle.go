package main

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The MCP Bundle (.mcpb) of storelink-mcp (ADR 0022). distpack writes the
// zip itself so it is reproducible: members sorted, commit time, modes
// 0755 or 0644.

// bundleManifestVersion is the manifest format, the one `mcpb init` of
// @anthropic-ai/mcpb 2.1.2 writes and every Claude Desktop since reads.
const bundleManifestVersion = "0.2"

// bundleBinary is the bundle's one executable; the manifest names it.
const bundleBinary = "storelink-mcp"

// userOption is one entry of the manifest's user_config: a setting the host
// asks for at install time and keeps (sensitive ones in the OS keychain).
type userOption struct {
	Type        string `json:"type"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Required    bool   `json:"required,omitempty"`
	Default     any    `json:"default,omitempty"`
	Sensitive   bool   `json:"sensitive,omitempty"`
}

// bundleSetting ties a user_config key to the environment variable the
// server reads it from.
type bundleSetting struct {
	Key string `json:"key"`
	Env string `json:"env"`
	userOption
}

// userConfigJSON is what the host asks for, in the order it shows it. It
// is generated from the server's settings table (mcpserver/internal/config,
// which this module cannot import) by `make generate`.
//
//go:embed user_config.gen.json
var userConfigJSON []byte

// bundleSettings reads userConfigJSON.
func bundleSettings() ([]bundleSetting, error) {
	var s []bundleSetting
	if err := json.Unmarshal(userConfigJSON, &s); err != nil {
		return nil, fmt.Errorf("bundle: user_config.gen.json: %w", err)
	}
	return s, nil
}

// manifest is manifest.json, its fields in the order the mcpb docs show.
type manifest struct {
	ManifestVersion string            `json:"manifest_version"`
	Name            string            `json:"name"`
	DisplayName     string            `json:"display_name"`
	Version         string            `json:"version"`
	Description     string            `json:"description"`
	LongDescription string            `json:"long_description"`
	Author          map[string]string `json:"author"`
	Repository      map[string]string `json:"repository"`
	Homepage        string            `json:"homepage"`
	License         string            `json:"license"`
	Keywords        []string          `json:"keywords"`
	Server          manifestServer    `json:"server"`
	Compatibility   map[string]any    `json:"compatibility"`
	UserConfig      orderedOptions    `json:"user_config"`
}

type manifestServer struct {
	Type       string    `json:"type"`
	EntryPoint string    `json:"entry_point"`
	MCPConfig  mcpConfig `json:"mcp_config"`
}

type mcpConfig struct {
	Command string         `json:"command"`
	Args    []string       `json:"args"`
	Env     orderedStrings `json:"env"`
}

// orderedOptions marshals user_config in the order given, the order a
// host shows the settings in.
type orderedOptions []bundleSetting

func (o orderedOptions) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, s := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(s.Key)
		v, err := json.Marshal(s.userOption)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// orderedStrings is a JSON object of strings in the order given.
type orderedStrings [][2]string

func (o orderedStrings) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, kv := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv[0])
		v, _ := json.Marshal(kv[1])
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// platformOS maps GOOS to the platform names of the mcpb manifest.
var platformOS = map[string]string{"linux": "linux", "darwin": "darwin"}

// bundleManifest is the manifest of the bundle of version for goos.
func bundleManifest(version, goos, source string) ([]byte, error) {
	platform, ok := platformOS[goos]
	if !ok {
		return nil, fmt.Errorf("bundle: no mcpb platform for GOOS %q", goos)
	}
	settings, err := bundleSettings()
	if err != nil {
		return nil, err
	}
	env := orderedStrings{}
	for _, s := range settings {
		env = append(env, [2]string{s.Env, "${user_config." + s.Key + "}"})
	}
	m := manifest{
		ManifestVersion: bundleManifestVersion,
		Name:            "korral-storelink",
		DisplayName:     "Korral StoreLink",
		Version:         strings.TrimPrefix(version, "v"),
		Description:     "Check stock risk across Korral stores and raise confirmed replenishment orders through StoreLink.",
		LongDescription: "Stock risk per store (daily sales, on-hand, stockout window, earliest delivery) and replenishment orders that are previewed first and sent only when confirmed, allowed, and approved as configured. Logs go to stderr; secrets stay out of arguments.",
		Author:          map[string]string{"name": "Korral"},
		Repository:      map[string]string{"type": "git", "url": source},
		Homepage:        source,
		License:         "MIT",
		Keywords:        []string{"storelink", "retail", "replenishment", "stock"},
		Server: manifestServer{
			Type:       "binary",
			EntryPoint: bundleBinary,
			MCPConfig: mcpConfig{
				Command: "${__dirname}/" + bundleBinary,
				Args:    []string{"stdio"},
				Env:     env,
			},
		},
		Compatibility: map[string]any{"platforms": []string{platform}},
		UserConfig:    orderedOptions(settings),
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeZip writes entries sorted by name, stamped with mtime, deflated at
// the best level.
func writeZip(w io.Writer, entries []entry, mtime time.Time) error {
	entries = slices.Clone(entries)
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	zw := zip.NewWriter(w)
	zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(out, flate.BestCompression)
	})
	for i, e := range entries {
		if e.dir {
			return fmt.Errorf("zip: %s: directories are implied", e.name)
		}
		if i > 0 && e.name == entries[i-1].name {
			return fmt.Errorf("zip: %s added twice", e.name)
		}
		body := e.body
		if e.src != "" {
			b, err := os.ReadFile(e.src)
			if err != nil {
				return err
			}
			body = b
		}
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: mtime}
		h.SetMode(os.FileMode(e.mode))
		fw, err := zw.CreateHeader(h)
		if err != nil {
			return fmt.Errorf("zip: %s: %w", e.name, err)
		}
		if _, err := fw.Write(body); err != nil {
			return fmt.Errorf("zip: %s: %w", e.name, err)
		}
	}
	return zw.Close()
}

func runBundle(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("bundle", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "output `file` (.mcpb)")
	version := fs.String("version", "", "release `version` (vX.Y.Z)")
	goos := fs.String("os", "", "`GOOS` the binary was built for")
	source := fs.String("source", "", "source repository `URL`")
	epoch := fs.Int64("epoch", -1, "modification time of every member, in Unix `seconds` (the commit time)")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if *out == "" || *version == "" || *goos == "" || *source == "" || *epoch < 0 || fs.NArg() == 0 {
		return usageError{fmt.Errorf("bundle needs -o, -version, -os, -source, -epoch and the files, %s first", bundleBinary)}
	}
	if filepath.Base(fs.Arg(0)) != bundleBinary {
		return usageError{fmt.Errorf("bundle: the first file must be %s, the manifest's entry point", bundleBinary)}
	}
	man, err := bundleManifest(*version, *goos, *source)
	if err != nil {
		return err
	}
	files, err := fileEntries(".", fs.Args())
	if err != nil {
		return err
	}
	// files[0] is the root directory, which a zip leaves implied;
	// files[1] the binary.
	if files[1].mode != 0o755 {
		return fmt.Errorf("bundle: %s is not executable", fs.Arg(0))
	}
	entries := append([]entry{{name: "manifest.json", mode: 0o644, body: man}}, files[1:]...)
	return writeFileAtomic(*out, func(w io.Writer) error {
		return writeZip(w, entries, time.Unix(*epoch, 0).UTC())
	})
}

// registryServer is the MCP Registry's server.json (schema 2025-12-11,
// release/server.schema.json): one mcpb package per bundle.
type registryServer struct {
	Schema      string            `json:"$schema"`
	Name        string            `json:"name"`
	Title       string            `json:"title"`
	Description string            `json:"description"`
	Version     string            `json:"version"`
	Repository  map[string]string `json:"repository"`
	WebsiteURL  string            `json:"websiteUrl"`
	Packages    []registryPackage `json:"packages"`
}

type registryPackage struct {
	RegistryType string            `json:"registryType"`
	Identifier   string            `json:"identifier"`
	Version      string            `json:"version"`
	FileSHA256   string            `json:"fileSha256"`
	Transport    map[string]string `json:"transport"`
}

// registrySchema is the server.json schema the registry publishes, of which
// release/server.schema.json is a pinned copy.
const registrySchema = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"

// serverJSON describes bundles for the registry, each with its release URL
// and SHA-256.
func serverJSON(version, source string, bundles []string) ([]byte, error) {
	owner := strings.TrimPrefix(source, "https://github.com/")
	if owner == source || !strings.Contains(owner, "/") {
		return nil, fmt.Errorf("registry: source %q is not a https://github.com/OWNER/REPO URL", source)
	}
	s := registryServer{
		Schema:      registrySchema,
		Name:        "io.github." + strings.Split(owner, "/")[0] + "/storelink",
		Title:       "Korral StoreLink",
		Description: "Stock risk across Korral stores and confirmed replenishment orders through StoreLink.",
		Version:     strings.TrimPrefix(version, "v"),
		Repository:  map[string]string{"url": source, "source": "github"},
		WebsiteURL:  source,
	}
	bundles = slices.Clone(bundles)
	slices.SortFunc(bundles, func(a, b string) int { return strings.Compare(filepath.Base(a), filepath.Base(b)) })
	for _, b := range bundles {
		body, err := os.ReadFile(b)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(body)
		s.Packages = append(s.Packages, registryPackage{
			RegistryType: "mcpb",
			Identifier:   source + "/releases/download/" + version + "/" + filepath.Base(b),
			Version:      s.Version,
			FileSHA256:   hex.EncodeToString(sum[:]),
			Transport:    map[string]string{"type": "stdio"},
		})
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func runRegistry(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("registry", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "output `file` (server.json)")
	version := fs.String("version", "", "release `version` (vX.Y.Z)")
	source := fs.String("source", "", "source repository `URL` (https://github.com/OWNER/REPO)")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if *out == "" || *version == "" || *source == "" || fs.NArg() == 0 {
		return usageError{fmt.Errorf("registry needs -o, -version, -source and at least one bundle")}
	}
	b, err := serverJSON(*version, *source, fs.Args())
	if err != nil {
		return err
	}
	return writeFileAtomic(*out, func(w io.Writer) error { _, err := w.Write(b); return err })
}
