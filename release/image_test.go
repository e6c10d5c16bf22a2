package release_test

// The container image in dist/: the two-architecture OCI archive, and this
// machine's docker archive booted as the non-root user.

import (
	"archive/tar"
	"bytes"
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
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

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

// TestDistImageBootsAsNonRoot unpacks this machine's docker archive, checks
// its configuration, and runs `version` and `serve --http` (/healthz,
// /readyz) as the image's user.
func TestDistImageBootsAsNonRoot(t *testing.T) {
	s := distStamp(t)
	if runtime.GOOS != "linux" || (runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64") {
		t.Skipf("the image is linux/amd64 and linux/arm64; this machine is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	layer, cfg := readDockerImage(t, s)
	if os.Geteuid() != 0 {
		t.Skip("booting the image needs root (chroot and a switch to uid 65532); CI runs as root")
	}
	img := &bootedImage{rootfs: filepath.Join(t.TempDir(), "rootfs"), cfg: cfg}
	unpackLayer(t, img.rootfs, layer)

	out, err := img.command(nil, "version").Output()
	if want := fmt.Sprintf("storelink-mcp %s (commit %s, built %s)\n", s.version, s.commit, s.date); err != nil || string(out) != want {
		t.Fatalf("version in the image = %q, %v; want %q", out, err, want)
	}
	img.refusesWithoutUpstream(t)
	img.servesProbes(t)
	st, err := os.Stat(filepath.Join(img.rootfs, "var/lib/storelink-mcp/state.db"))
	if err != nil {
		t.Fatalf("no ledger in the state directory: %v", err)
	}
	if st.Sys().(*syscall.Stat_t).Uid != 65532 {
		t.Errorf("state.db owned by uid %d, want the image's user 65532", st.Sys().(*syscall.Stat_t).Uid)
	}
}

// readDockerImage reads and checks this machine's docker archive and returns its one layer.
func readDockerImage(t *testing.T, s releaseStamp) ([]byte, ociConfig) {
	t.Helper()
	files := map[string][]byte{}
	for _, m := range readTarFile(t, filepath.Join(s.dist, "storelink-mcp_"+s.version+"_image_linux_"+runtime.GOARCH+".docker.tar")) {
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
	return files[manifest[0].Layers[0]], cfg
}

// bootedImage is an unpacked root filesystem whose entry point runs under chroot as the image's user.
type bootedImage struct {
	rootfs string
	cfg    ociConfig
}

// command runs the entry point with args in the image's environment plus a deployment's.
func (img *bootedImage) command(env []string, args ...string) *exec.Cmd {
	uid, gid, _ := strings.Cut(img.cfg.Config.User, ":")
	cmd := exec.Command("chroot", append([]string{"--userspec=" + uid + ":" + gid, "--groups=", img.rootfs}, append(img.cfg.Config.Entrypoint, args...)...)...)
	cmd.Env = append(slices.Clone(img.cfg.Config.Env), env...)
	return cmd
}

// refusesWithoutUpstream: with no embedded demo, no UPSTREAM_BASE_URL means exit 2.
func (img *bootedImage) refusesWithoutUpstream(t *testing.T) {
	t.Helper()
	refused := img.command(nil, "serve", "--http", "127.0.0.1:0")
	var refusal bytes.Buffer
	refused.Stdout, refused.Stderr = &refusal, &refusal
	if err := refused.Start(); err != nil {
		t.Fatal(err)
	}
	bound := time.AfterFunc(15*time.Second, func() { _ = refused.Process.Kill() }) // a server that did start is stopped
	err := refused.Wait()
	bound.Stop()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(refusal.String(), "UPSTREAM_BASE_URL is not set") {
		t.Errorf("serve without UPSTREAM_BASE_URL in the image = %v %q, want exit 2 naming the setting", err, refusal.String())
	}
}

// servesProbes serves against a mock with an inline keyring, checks both
// probes answer 200, and stops with SIGTERM.
func (img *bootedImage) servesProbes(t *testing.T) {
	t.Helper()
	mock, err := mockstorelink.Start(mockstorelink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mock.Close() })
	keyring, err := json.Marshal(mock.Server.DefaultKeyring())
	if err != nil {
		t.Fatal(err)
	}
	p := e2etest.LaunchHTTP(t, img.command([]string{"UPSTREAM_BASE_URL=" + mock.URL, "STORELINK_KEYRING=" + string(keyring)}, "serve", "--http", "127.0.0.1:0"))
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
}

// unpackLayer extracts a gzipped layer with recorded modes and owners, keeping paths inside root.
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
