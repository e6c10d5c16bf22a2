package release_test

// Checks of the release artefacts that `make release-check` builds into
// dist/ first (ADR 0011): archives, reproducibility, the container image
// booted as a non-root user, and the client module's release and fetch.
// Without the artefacts (a plain `go test`) they skip, saying how to run them.

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

// releaseStamp is what make release-check built dist/ with.
type releaseStamp struct {
	dist, version, commit, epoch, date string
}

func distStamp(t *testing.T) releaseStamp {
	t.Helper()
	s := releaseStamp{os.Getenv("STORELINK_DIST"), os.Getenv("STORELINK_VERSION"), os.Getenv("STORELINK_COMMIT"), os.Getenv("STORELINK_EPOCH"), os.Getenv("STORELINK_DATE")}
	if s.dist == "" || s.version == "" || s.commit == "" || s.epoch == "" || s.date == "" {
		t.Skip("checks dist/ as built by `make release-check`, which sets STORELINK_DIST and the release stamp")
	}
	return s
}

var releasePlatforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64"}

func archiveName(version, platform string) string {
	return "storelink_" + version + "_" + strings.ReplaceAll(platform, "/", "_")
}

// member is one file read from an archive.
type member struct {
	hdr  *tar.Header
	body []byte
}

// readTar reads a (possibly gzipped) tar file into memory, in order.
func readTar(t *testing.T, r io.Reader, gz bool) []member {
	t.Helper()
	if gz {
		zr, err := gzip.NewReader(r)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	var out []member
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, member{h, b})
	}
}

func readTarFile(t *testing.T, name string) []member {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return readTar(t, f, strings.HasSuffix(name, ".gz"))
}

func TestDistArchives(t *testing.T) {
	s := distStamp(t)
	sum := exec.Command("sha256sum", "-c", "SHA256SUMS")
	sum.Dir = s.dist
	if out, err := sum.CombinedOutput(); err != nil {
		t.Fatalf("sha256sum -c SHA256SUMS: %v\n%s", err, out)
	}
	thirdParty, err := os.ReadFile(filepath.Join(s.dist, "THIRD_PARTY"))
	if err != nil {
		t.Fatal(err)
	}
	for _, platform := range releasePlatforms {
		t.Run(platform, func(t *testing.T) {
			root := archiveName(s.version, platform)
			members := readTarFile(t, filepath.Join(s.dist, root+".tar.gz"))
			var names []string
			for _, m := range members {
				names = append(names, m.hdr.Name)
				if m.hdr.Uid != 0 || m.hdr.Gid != 0 || fmt.Sprint(m.hdr.ModTime.Unix()) != s.epoch {
					t.Errorf("%s: uid %d gid %d mtime %d, want 0, 0, %s", m.hdr.Name, m.hdr.Uid, m.hdr.Gid, m.hdr.ModTime.Unix(), s.epoch)
				}
			}
			want := []string{root + "/", root + "/LICENSE", root + "/README.md", root + "/THIRD_PARTY", root + "/mockstorelink", root + "/storelink-contract", root + "/storelink-mcp"}
			if !slices.Equal(names, want) {
				t.Fatalf("members %q, want %q (sorted)", names, want)
			}
			for _, m := range members[4:] {
				checkReleaseBinary(t, s, platform, m, thirdParty)
			}
			if !bytes.Equal(members[3].body, thirdParty) {
				t.Error("the archive's THIRD_PARTY differs from dist/THIRD_PARTY")
			}
		})
	}
}

// checkReleaseBinary reads what the toolchain recorded in a binary (`go
// version -m`): its platform, the build flags and every module linked in,
// each of which THIRD_PARTY must list; and it looks for the stamp. The binary of this machine's
// platform is also run.
func checkReleaseBinary(t *testing.T, s releaseStamp, platform string, m member, thirdParty []byte) {
	t.Helper()
	if m.hdr.Mode != 0o755 {
		t.Errorf("%s: mode %o, want 755", m.hdr.Name, m.hdr.Mode)
	}
	bin := filepath.Join(t.TempDir(), path.Base(m.hdr.Name))
	if err := os.WriteFile(bin, m.body, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m %s: %v", m.hdr.Name, err)
	}
	goos, goarch, _ := strings.Cut(platform, "/")
	info := string(out)
	for _, want := range []string{"\tbuild\tGOOS=" + goos + "\n", "\tbuild\tGOARCH=" + goarch + "\n", "\tbuild\tCGO_ENABLED=0\n", "\tbuild\t-trimpath=true\n"} {
		if !strings.Contains(info, want) {
			t.Errorf("%s: build info lacks %q:\n%s", m.hdr.Name, want, info)
		}
	}
	// -trimpath keeps -ldflags out of the build info; the stamped strings
	// themselves sit in the data of every binary that links buildinfo (its
	// function names stay in the symbol table that -s leaves).
	if bytes.Contains(m.body, []byte("github.com/korral/storelink/mcpserver/buildinfo.")) {
		for _, want := range []string{s.version, s.commit, s.date} {
			if !bytes.Contains(m.body, []byte(want)) {
				t.Errorf("%s: %q is not stamped in", m.hdr.Name, want)
			}
		}
	} else if path.Base(m.hdr.Name) == "storelink-mcp" {
		t.Errorf("%s does not link buildinfo", m.hdr.Name)
	}
	if path.Base(m.hdr.Name) == "storelink-mcp" {
		// The shipped server is the production build (ADR 0015).
		if _, linked := demoLinks(t, bin); len(linked) > 0 {
			t.Errorf("%s links %q, which only the embedded demo needs: build it with -tags %s", m.hdr.Name, linked, releaseTags)
		}
	}
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 3 && f[0] == "dep" && !strings.HasPrefix(f[1], "github.com/korral/storelink") &&
			!bytes.Contains(thirdParty, []byte("\n"+f[1]+" ")) {
			t.Errorf("%s links %s %s, which THIRD_PARTY does not list", m.hdr.Name, f[1], f[2])
		}
	}
	if platform == runtime.GOOS+"/"+runtime.GOARCH && path.Base(m.hdr.Name) == "storelink-mcp" {
		got, err := exec.Command(bin, "version").Output()
		if err != nil {
			t.Fatalf("storelink-mcp version: %v", err)
		}
		if want := fmt.Sprintf("storelink-mcp %s (commit %s, built %s)\n", s.version, s.commit, s.date); string(got) != want {
			t.Errorf("version = %q, want %q", got, want)
		}
	}
}

// copySource copies the working tree (tracked and untracked, not ignored
// files) to a new directory at another path and commits it there, so a
// rebuild sees the same sources as dist/ under a different path, clock
// zone and umask.
func copySource(t *testing.T) string {
	t.Helper()
	root := e2etest.Root(t)
	ls := exec.Command("git", "ls-files", "-z", "-co", "--exclude-standard")
	ls.Dir = root
	out, err := ls.Output()
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "elsewhere", "src")
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		st, err := os.Lstat(filepath.Join(root, name))
		if os.IsNotExist(err) {
			continue // deleted in the working tree
		} else if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, name), b, st.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	// The copy has an identity of its own, so that every git command run in
	// it (commits here, the annotated tags of make release-client) works on
	// a machine whose git has none.
	for _, args := range [][]string{{"init", "-q"}, {"config", "user.name", "r"}, {"config", "user.email", "r@example.com"}, {"add", "-A"}, {"commit", "-q", "-m", "copy"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dst
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dst
}

func TestDistReproducible(t *testing.T) {
	s := distStamp(t)
	src := copySource(t)
	out := filepath.Join(t.TempDir(), "dist")
	const platform = "linux/amd64"
	cmd := exec.Command("sh", "-c", `umask 027 && exec make -s release "$@"`, "make",
		"DIST="+out, "PLATFORMS="+platform, "VERSION="+s.version, "COMMIT="+s.commit, "EPOCH="+s.epoch, "DATE="+s.date)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "TZ=Pacific/Auckland", "LC_ALL=C")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("rebuild: %v\n%s", err, b)
	}
	for _, name := range []string{archiveName(s.version, platform) + ".tar.gz", bundleName(s.version, platform), "THIRD_PARTY"} {
		a, err := os.ReadFile(filepath.Join(s.dist, name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between dist/ (sha256 %x) and a rebuild from another path (sha256 %x)", name, sha256.Sum256(a), sha256.Sum256(b))
		}
	}
}

// ociConfig is the part of an image configuration the checks read.
type ociConfig struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Config       struct {
		User       string            `json:"User"`
		Entrypoint []string          `json:"Entrypoint"`
		Cmd        []string          `json:"Cmd"`
		Env        []string          `json:"Env"`
		Labels     map[string]string `json:"Labels"`
	} `json:"config"`
}

func checkImageConfig(t *testing.T, s releaseStamp, arch string, cfg ociConfig) {
	t.Helper()
	if cfg.OS != "linux" || cfg.Architecture != arch {
		t.Errorf("platform %s/%s, want linux/%s", cfg.OS, cfg.Architecture, arch)
	}
	if cfg.Config.User != "65532:65532" {
		t.Errorf("user %q, want the numeric non-root 65532:65532", cfg.Config.User)
	}
	if !slices.Equal(cfg.Config.Entrypoint, []string{"/usr/local/bin/storelink-mcp"}) {
		t.Errorf("entrypoint %q", cfg.Config.Entrypoint)
	}
	if !slices.Contains(cfg.Config.Env, "STATE_DB_PATH=/var/lib/storelink-mcp/state.db") {
		t.Errorf("env %q lacks the state database in the state directory", cfg.Config.Env)
	}
	for k, want := range map[string]string{
		"org.opencontainers.image.version":  s.version,
		"org.opencontainers.image.revision": s.commit,
		"org.opencontainers.image.licenses": "MIT",
		"org.opencontainers.image.source":   "https://github.com/korral/storelink",
	} {
		if got := cfg.Config.Labels[k]; got != want {
			t.Errorf("label %s = %q, want %q", k, got, want)
		}
	}
}

// blobs indexes an OCI layout's blobs by digest, checking each digest.
func blobs(t *testing.T, members []member) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, m := range members {
		hexSum, ok := strings.CutPrefix(m.hdr.Name, "blobs/sha256/")
		if !ok || m.hdr.Typeflag != tar.TypeReg {
			continue
		}
		if got := sha256.Sum256(m.body); hex.EncodeToString(got[:]) != hexSum {
			t.Errorf("blob %s has digest %x", m.hdr.Name, got)
		}
		out["sha256:"+hexSum] = m.body
	}
	return out
}

type ociIndex struct {
	MediaType string `json:"mediaType"`
	Manifests []struct {
		MediaType   string            `json:"mediaType"`
		Digest      string            `json:"digest"`
		Annotations map[string]string `json:"annotations"`
		Platform    *struct {
			OS           string `json:"os"`
			Architecture string `json:"architecture"`
		} `json:"platform"`
	} `json:"manifests"`
}

func unmarshal(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v in %.200s", err, b)
	}
}

func TestDistImageOCIArchive(t *testing.T) {
	s := distStamp(t)
	members := readTarFile(t, filepath.Join(s.dist, "storelink-mcp_"+s.version+"_image.oci.tar"))
	bs := blobs(t, members)
	var top ociIndex
	for _, m := range members {
		if m.hdr.Name == "index.json" {
			unmarshal(t, m.body, &top)
		}
	}
	if len(top.Manifests) != 1 || top.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != s.version ||
		top.Manifests[0].Annotations["io.containerd.image.name"] != "docker.io/korral/storelink-mcp:"+s.version {
		t.Fatalf("index.json = %+v, want one tagged image index", top)
	}
	var idx ociIndex
	unmarshal(t, bs[top.Manifests[0].Digest], &idx)
	var arches []string
	for _, d := range idx.Manifests {
		if d.Platform == nil || d.Platform.OS != "linux" {
			t.Fatalf("manifest %s without a linux platform", d.Digest)
		}
		arches = append(arches, d.Platform.Architecture)
		var man struct {
			Config struct{ Digest string }   `json:"config"`
			Layers []struct{ Digest string } `json:"layers"`
		}
		unmarshal(t, bs[d.Digest], &man)
		var cfg ociConfig
		unmarshal(t, bs[man.Config.Digest], &cfg)
		checkImageConfig(t, s, d.Platform.Architecture, cfg)
		if len(man.Layers) != 1 || bs[man.Layers[0].Digest] == nil {
			t.Errorf("%s: layers %+v, want one present blob", d.Platform.Architecture, man.Layers)
		}
	}
	if slices.Sort(arches); !slices.Equal(arches, []string{"amd64", "arm64"}) {
		t.Errorf("index holds %q, want amd64 and arm64", arches)
	}
}

// TestDistImageBootsAsNonRoot unpacks the docker archive of this machine's
// architecture the way an engine would, checks its configuration, and runs
// the binary inside the unpacked root filesystem as the image's user:
// `version`, then `serve --http` answering /healthz, and /readyz, which
// needs the ledger in the state directory that user must be able to write.
func TestDistImageBootsAsNonRoot(t *testing.T) {
	s := distStamp(t)
	if runtime.GOOS != "linux" || (runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64") {
		t.Skipf("the image is linux/amd64 and linux/arm64; this machine is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	members := readTarFile(t, filepath.Join(s.dist, "storelink-mcp_"+s.version+"_image_linux_"+runtime.GOARCH+".docker.tar"))
	files := map[string][]byte{}
	for _, m := range members {
		files[m.hdr.Name] = m.body
	}
	var manifest []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	unmarshal(t, files["manifest.json"], &manifest)
	if len(manifest) != 1 || !slices.Equal(manifest[0].RepoTags, []string{"korral/storelink-mcp:" + s.version}) || len(manifest[0].Layers) != 1 {
		t.Fatalf("manifest.json = %+v, want one image tagged korral/storelink-mcp:%s with one layer", manifest, s.version)
	}
	var cfg ociConfig
	unmarshal(t, files[manifest[0].Config], &cfg)
	checkImageConfig(t, s, runtime.GOARCH, cfg)

	if os.Geteuid() != 0 {
		t.Skip("booting the image needs root (chroot and a switch to uid 65532); CI runs as root")
	}
	rootfs := filepath.Join(t.TempDir(), "rootfs")
	unpackLayer(t, rootfs, files[manifest[0].Layers[0]])
	uid, gid, _ := strings.Cut(cfg.Config.User, ":")
	chroot := func(env []string, args ...string) *exec.Cmd {
		cmd := exec.Command("chroot", append([]string{"--userspec=" + uid + ":" + gid, "--groups=", rootfs}, append(cfg.Config.Entrypoint, args...)...)...)
		cmd.Env = append(slices.Clone(cfg.Config.Env), env...) // the image's environment, plus what a deployment sets
		return cmd
	}

	out, err := chroot(nil, "version").Output()
	if want := fmt.Sprintf("storelink-mcp %s (commit %s, built %s)\n", s.version, s.commit, s.date); err != nil || string(out) != want {
		t.Fatalf("version in the image = %q, %v; want %q", out, err, want)
	}

	// The image's server has no embedded demo StoreLink: without
	// UPSTREAM_BASE_URL it refuses to start, and a deployment gives it one
	// (a mock StoreLink on loopback here; the keyring inline, as the file
	// would have to be inside the root filesystem).
	refused := chroot(nil, "serve", "--http", "127.0.0.1:0")
	var refusal bytes.Buffer
	refused.Stdout, refused.Stderr = &refusal, &refusal
	if err := refused.Start(); err != nil {
		t.Fatal(err)
	}
	bound := time.AfterFunc(15*time.Second, func() { _ = refused.Process.Kill() }) // a server that did start is stopped
	err = refused.Wait()
	bound.Stop()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(refusal.String(), "UPSTREAM_BASE_URL is not set") {
		t.Errorf("serve without UPSTREAM_BASE_URL in the image = %v %q, want exit 2 naming the setting", err, refusal.String())
	}
	mock, err := mockstorelink.Start(mockstorelink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mock.Close() })
	keyring, err := json.Marshal(mock.Server.DefaultKeyring())
	if err != nil {
		t.Fatal(err)
	}
	p := e2etest.LaunchHTTP(t, chroot([]string{"UPSTREAM_BASE_URL=" + mock.URL, "STORELINK_KEYRING=" + string(keyring)}, "serve", "--http", "127.0.0.1:0"))
	for _, probe := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(p.Base + probe)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s = %d %s, want 200", probe, resp.StatusCode, body)
		}
	}
	p.Stop()
	if p.Exit != nil {
		t.Errorf("serve did not exit cleanly on SIGTERM: %v\n%s", p.Exit, p.Stderr.String())
	}
	st, err := os.Stat(filepath.Join(rootfs, "var/lib/storelink-mcp/state.db"))
	if err != nil {
		t.Fatalf("no ledger in the state directory: %v", err)
	}
	if st.Sys().(*syscall.Stat_t).Uid != 65532 {
		t.Errorf("state.db owned by uid %d, want the image's user 65532", st.Sys().(*syscall.Stat_t).Uid)
	}
}

// unpackLayer extracts a gzipped layer as an engine would: modes and
// numeric owners as recorded, paths kept inside root.
func unpackLayer(t *testing.T, root string, layer []byte) {
	t.Helper()
	for _, m := range readTar(t, bytes.NewReader(layer), true) {
		name := filepath.Join(root, filepath.FromSlash(path.Clean("/"+m.hdr.Name)))
		switch m.hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(name, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.WriteFile(name, m.body, 0o600); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("%s: unexpected member type %c", m.hdr.Name, m.hdr.Typeflag)
		}
		if err := os.Lchown(name, m.hdr.Uid, m.hdr.Gid); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(name, os.FileMode(m.hdr.Mode).Perm()|modeBits(m.hdr.Mode)); err != nil {
			t.Fatal(err)
		}
	}
}

// modeBits maps tar's sticky, setuid and setgid bits to Go's.
func modeBits(mode int64) os.FileMode {
	var m os.FileMode
	if mode&0o1000 != 0 {
		m |= os.ModeSticky
	}
	if mode&0o2000 != 0 {
		m |= os.ModeSetgid
	}
	if mode&0o4000 != 0 {
		m |= os.ModeSetuid
	}
	return m
}

// consumerMain is a program another Korral team would write against the
// client: the README's sample, whole.
const consumerMain = `package main

import (
	"context"
	"fmt"
	"os"

	"github.com/korral/storelink/storelinkclient"
)

func main() {
	baseURL, key := os.Args[1], os.Args[2]
	c, err := storelinkclient.NewClientWithResponses(baseURL,
		storelinkclient.WithResponseLimit(storelinkclient.DefaultResponseLimit))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	resp, err := c.GetInventoryWithResponse(context.Background(), "47",
		&storelinkclient.GetInventoryParams{SKU: "8847291"}, storelinkclient.WithStoreKey(key))
	inv, err := storelinkclient.Result(resp, err)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(inv.OnHandUnits)
}
`

// newConsumer writes a fresh module outside the workspace that imports the
// client, with extra go.mod lines.
func newConsumer(t *testing.T, goModExtra string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "consumer")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	gomod := "module example.com/consumer\n\ngo 1.26.0\n" + goModExtra
	for name, body := range map[string]string{"go.mod": gomod, "main.go": consumerMain} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// goIn runs the go command in dir outside any workspace.
func goIn(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append([]string{"GOWORK=off", "GOFLAGS=-mod=mod"}, env...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// runConsumer runs the consumer against a fresh mock StoreLink and checks
// it printed what the mock holds, after exactly one request.
func runConsumer(t *testing.T, dir string, env []string) {
	t.Helper()
	r, err := mockstorelink.Start(mockstorelink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	key := r.Server.DefaultKeyring()["47"]
	got := strings.TrimSpace(goIn(t, dir, env, "run", ".", r.URL, key))
	inventory := func(rec mockstorelink.RequestRecord) bool {
		return strings.HasPrefix(rec.Path, "/v1/stores/47/inventory")
	}
	if n := r.Server.RequestCount(inventory); n != 1 {
		t.Fatalf("the mock saw %d inventory requests, want 1", n)
	}
	req, _ := http.NewRequest(http.MethodGet, r.URL+"/v1/stores/47/inventory?sku=8847291", nil)
	req.Header.Set("X-Korral-Store-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var want struct {
		OnHandUnits json.Number `json:"on_hand_units"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&want); err != nil {
		t.Fatal(err)
	}
	if got != want.OnHandUnits.String() {
		t.Errorf("consumer printed %q, the mock holds %s on hand", got, want.OnHandUnits)
	}
}

// TestClientModuleConsumer compiles and runs a fresh module outside the
// workspace against the client through a replace of the local path: a
// missing require or a dependency on another module of ours breaks it.
func TestClientModuleConsumer(t *testing.T) {
	root := e2etest.Root(t)
	dir := newConsumer(t, "\nrequire github.com/korral/storelink/storelinkclient v0.0.0\n\nreplace github.com/korral/storelink/storelinkclient => "+filepath.Join(root, "storelinkclient")+"\n")
	goIn(t, dir, nil, "mod", "tidy")
	runConsumer(t, dir, nil)
}

// TestDistClientReleaseAndFetch runs `make release-client` in a copy of the
// repository: the first tag skips the API comparison, a patch release that
// adds API and a v0 patch that removes it are refused, a minor release is
// tagged. Then a fresh module fetches the first release over git, with the
// commands the README gives other teams, and runs against the mock.
func TestDistClientReleaseAndFetch(t *testing.T) {
	distStamp(t)
	src := copySource(t)
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = src
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	release := func(version string) (string, bool) {
		t.Helper()
		cmd := exec.Command("make", "-s", "release-client", "VERSION="+version)
		cmd.Dir = src
		out, err := cmd.CombinedOutput()
		return string(out), err == nil
	}
	extra := filepath.Join(src, "storelinkclient", "extra.go")
	commit := func(body string) {
		t.Helper()
		if body == "" {
			if err := os.Remove(extra); err != nil {
				t.Fatal(err)
			}
		} else if err := os.WriteFile(extra, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		git("add", "-A")
		git("commit", "-q", "-m", "change the client")
	}

	if out, ok := release("v0.1.0"); !ok || !strings.Contains(out, "skipped, no earlier storelinkclient/v* tag") {
		t.Fatalf("first release: ok=%v\n%s", ok, out)
	}
	if out, ok := release("v0.1.0"); ok || !strings.Contains(out, "already exists") {
		t.Fatalf("the same tag again: ok=%v\n%s", ok, out)
	}
	commit("package storelinkclient\n\n// Extra is new API.\nconst Extra = 1\n")
	if out, ok := release("v0.1.1"); ok || !strings.Contains(out, "additions need a new minor version") {
		t.Fatalf("patch release adding API: ok=%v\n%s", ok, out)
	}
	if out, ok := release("v0.2.0"); !ok || !strings.Contains(out, "Compatible changes") {
		t.Fatalf("minor release adding API: ok=%v\n%s", ok, out)
	}
	commit("")
	if out, ok := release("v0.2.1"); ok || !strings.Contains(out, "breaks the API of v0.2.0") {
		t.Fatalf("patch release removing API: ok=%v\n%s", ok, out)
	}
	if out, ok := release("banana"); ok || !strings.Contains(out, "not a semantic version") {
		t.Fatalf("bad version: ok=%v\n%s", ok, out)
	}

	// Fetch the first release over git with the README's own commands:
	// GOPRIVATE sends it past the public proxy and checksum database, and
	// git's insteadOf decides where it comes from. The README maps GitHub
	// to SSH; a longer rule here maps this repository to the copy.
	home := t.TempDir()
	cacheOut, err := exec.Command("go", "env", "GOMODCACHE", "GOPROXY", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(cacheOut))
	env := []string{
		// The build cache would follow HOME; keep the real one.
		"HOME=" + home, "GOCACHE=" + f[2], "GIT_CONFIG_NOSYSTEM=1", "GOENV=" + filepath.Join(home, "goenv"),
		// git config --global writes here, never to the caller's own file
		// (which GIT_CONFIG_GLOBAL may name, /dev/null included).
		"GIT_CONFIG_GLOBAL=" + filepath.Join(home, ".gitconfig"),
		// A module cache of its own, so the copy's tag never lands in the
		// real one; the real cache serves the public dependencies first.
		"GOMODCACHE=" + filepath.Join(home, "mod"), "GOFLAGS=-mod=mod -modcacherw",
		"GOPROXY=file://" + filepath.Join(f[0], "cache", "download") + "," + f[1],
	}
	readme, err := os.ReadFile(e2etest.Path(t, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	dir := newConsumer(t, "")
	for _, line := range []string{
		`go env -w GOPRIVATE=github.com/korral/*`,
		`git config --global url."ssh://git@github.com/korral/".insteadOf "https://github.com/korral/"`,
		`git config --global url."file://` + src + `".insteadOf "https://github.com/korral/storelink"`,
		`go get github.com/korral/storelink/storelinkclient@v0.1.0`,
	} {
		if !strings.Contains(line, src) && !bytes.Contains(readme, []byte("    "+line+"\n")) {
			t.Errorf("the README no longer shows %q", line)
		}
		cmd := exec.Command("bash", "-c", line)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), append([]string{"GOWORK=off"}, env...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
		if strings.HasPrefix(line, "go get") && !strings.Contains(string(out), "github.com/korral/storelink/storelinkclient v0.1.0") {
			t.Errorf("go get did not report the tagged version:\n%s", out)
		}
	}
	runConsumer(t, dir, env)
}

// TestOperationsDocCommands runs every `sh` block of docs/operations.md, in
// order, in one directory holding the release files: the installed binary
// then serves the later blocks, which act on a running server's keyring,
// token file and ledger. `console` blocks need systemd or a cluster; any
// other kind of block is refused, so no command escapes both.
func TestOperationsDocCommands(t *testing.T) {
	s := distStamp(t)
	if runtime.GOOS+"/"+runtime.GOARCH != "linux/amd64" {
		t.Skip("the document's install commands name the linux/amd64 archive")
	}
	doc, err := os.ReadFile(e2etest.Path(t, "docs/operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, m := range regexp.MustCompile("(?ms)^```([a-z]*)\n(.*?)^```\n").FindAllStringSubmatch(string(doc), -1) {
		switch m[1] {
		case "sh":
			blocks = append(blocks, m[2])
		case "console":
		case "nginx":
			// A reverse proxy's configuration, shown to copy: not a command.
		default:
			t.Errorf("a %q block: commands go in sh blocks (run here) or console blocks (need systemd or Kubernetes); an nginx block holds configuration", m[1])
		}
	}
	if len(blocks) < 5 {
		t.Fatalf("found %d sh blocks; the document has more", len(blocks))
	}

	work := t.TempDir()
	for _, name := range []string{"SHA256SUMS", archiveName(s.version, "linux/amd64") + ".tar.gz"} {
		b, err := os.ReadFile(filepath.Join(s.dist, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := e2etest.NewWorld(t)
	// An order whose POST timed out, for the `unknown` runbook to find.
	writer := e2etest.StartServer(t, w.Env("ALLOW_WRITES=true", "UPSTREAM_TIMEOUT=400ms"))
	w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultHang, OperationID: mockstorelink.OpCreateReplenishmentOrder, Delay: 10 * time.Second})
	if c := e2etest.Code(writer.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true))); c != "WRITE_OUTCOME_UNKNOWN" {
		t.Fatalf("a hung POST gave %s", c)
	}
	w.Mock.Server.ClearFaults()
	writer.Stop()
	tokens := filepath.Join(w.Dir, "tokens")
	e2etest.WriteTokenFile(t, tokens, "dairy-team "+e2etest.TokenDairy+"\nbrno "+e2etest.TokenBrno+"\n", time.Now().Add(-time.Minute))
	p := e2etest.StartHTTP(t, w.Env("MCP_AUTH_TOKENS_FILE="+tokens))
	home := filepath.Join(work, "home")
	env := append(os.Environ(), "HOME="+home, "PATH="+filepath.Join(home, ".local", "bin")+":"+os.Getenv("PATH"),
		"VERSION="+s.version, "KEYRING="+w.KeyringPath, "TOKENS="+tokens, "MCP_URL="+p.Base,
		"REVOKED_TOKEN="+e2etest.TokenDairy, "STATE_DB_PATH="+w.StatePath,
		// The server's environment, as the document asks for its commands: the
		// released binary has no demo StoreLink whose keyring it could fall
		// back on (ADR 0015).
		"UPSTREAM_BASE_URL="+w.Mock.URL, "STORELINK_KEYRING_FILE="+w.KeyringPath)
	outputs := make([]string, len(blocks))
	for i, b := range blocks {
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", b)
		cmd.Dir, cmd.Env = work, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("block %d failed: %v\n%s\noutput:\n%s", i+1, err, b, out)
		}
		outputs[i] = string(out)
	}
	all := strings.Join(outputs, "\n")
	for _, want := range []string{
		"storelink-mcp " + s.version + " (commit " + s.commit, // the installed binary
		"\n401\n",                              // the revoked token
		`"breaker":"closed"`,                   // /readyz
		`"error_code":"WRITE_OUTCOME_UNKNOWN"`, // the audit trail
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the commands' output lacks %q:\n%s", want, all)
		}
	}
	if kr, _ := os.ReadFile(w.KeyringPath); !strings.Contains(string(kr), "new-key-for-store-47") {
		t.Errorf("the keyring was not replaced: %s", kr)
	}
	if _, err := os.Stat(w.KeyringPath + ".new"); !os.IsNotExist(err) {
		t.Error("the rotation left its temporary file behind")
	}
	// The server still takes the other holder's token.
	req, _ := http.NewRequest(http.MethodPost, p.Base+"/mcp", strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+e2etest.TokenBrno)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized {
		t.Error("revoking one token locked out another holder")
	}
}
