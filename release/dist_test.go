package release_test

// Checks of the release artefacts `make release-check` builds in dist/
// (ADR 0011). Without them (a plain `go test`) they skip, saying how to run them.

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/korral/storelink/internal/e2etest"
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

// checkReleaseBinary checks a binary's `go version -m` (platform, build
// flags, modules listed in THIRD_PARTY) and its stamp, and runs this
// platform's binary.
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
	// are in the data of every binary linking buildinfo.
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

// copySource copies the working tree (not ignored files) elsewhere and
// commits it, so a rebuild differs in path, clock zone and umask only.
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
	// An identity of its own, for machines whose git has none.
	for _, args := range [][]string{{"init", "-q"}, {"config", "user.name", "r"}, {"config", "user.email", "r@example.com"}, {"add", "-A"}, {"commit", "-q", "-m", "copy"}} {
		runIn(t, dst, "git", args...)
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

// unmarshal decodes JSON read from an artefact, failing the test on error.
func unmarshal(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v in %.200s", err, b)
	}
}
