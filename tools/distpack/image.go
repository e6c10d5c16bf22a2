package main

import (
	"bytes"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// The image's fixed shape. The numeric user is distroless' "nonroot", so
// volume permissions prepared for those images fit this one too.
const (
	nonrootID  = 65532
	binaryPath = "/usr/local/bin/storelink-mcp"
	stateDir   = "/var/lib/storelink-mcp"
	caFile     = "/etc/ssl/certs/ca-certificates.crt"
	docDir     = "/usr/share/doc/storelink-mcp"
	httpPort   = "8080"
)

// imageSpec is what varies between builds of the image.
type imageSpec struct {
	repository string // e.g. korral/storelink-mcp
	version    string
	revision   string
	source     string
	created    time.Time
	docs       []string // files copied to docDir (LICENSE, THIRD_PARTY)
}

// caBundle renders the Mozilla (NSS) root store that golang.org/x/crypto
// ships, pinned by tools/go.sum, as the PEM file Go's crypto/x509 reads on
// Linux. Roots that carry constraints PEM cannot express (e.g. distrust
// after a date) are left out rather than trusted without them.
func caBundle() []byte {
	var b bytes.Buffer
	for r := range bundle.Roots() {
		if r.Constraint != nil {
			continue
		}
		_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate})
	}
	return b.Bytes()
}

// rootfs lists the image's only layer: the static binary, CA certificates,
// a passwd entry for the numeric user, the state directory it owns, /tmp
// for SQLite's temporary files, and the licence files.
func rootfs(binary string, spec imageSpec) []entry {
	dir := func(name string, mode int64) entry { return entry{name: name, mode: mode, dir: true} }
	es := []entry{
		dir("etc", 0o755), dir("etc/ssl", 0o755), dir("etc/ssl/certs", 0o755),
		dir("usr", 0o755), dir("usr/local", 0o755), dir("usr/local/bin", 0o755),
		dir("usr/share", 0o755), dir("usr/share/doc", 0o755), dir(strings.TrimPrefix(docDir, "/"), 0o755),
		dir("var", 0o755), dir("var/lib", 0o755),
		{name: strings.TrimPrefix(stateDir, "/"), mode: 0o700, uid: nonrootID, gid: nonrootID, dir: true},
		dir("tmp", 0o1777),
		{name: "etc/passwd", mode: 0o644, body: fmt.Appendf(nil, "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:%s:/sbin/nologin\n", nonrootID, nonrootID, stateDir)},
		{name: "etc/group", mode: 0o644, body: fmt.Appendf(nil, "root:x:0:\nnonroot:x:%d:\n", nonrootID)},
		{name: strings.TrimPrefix(caFile, "/"), mode: 0o644, body: caBundle()},
		{name: strings.TrimPrefix(binaryPath, "/"), mode: 0o755, src: binary},
	}
	for _, d := range spec.docs {
		es = append(es, entry{name: path.Join(strings.TrimPrefix(docDir, "/"), filepath.Base(d)), mode: 0o644, src: d})
	}
	return es
}

// buildImage assembles the image of one linux architecture on an empty
// base, with OCI media types throughout.
func buildImage(arch, binary string, spec imageSpec) (v1.Image, error) {
	var layerTar bytes.Buffer
	if err := writeTar(&layerTar, rootfs(binary, spec), spec.created); err != nil {
		return nil, err
	}
	data := layerTar.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	created := v1.Time{Time: spec.created}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:   layer,
		History: v1.History{Created: created, CreatedBy: "tools/distpack image", Comment: "storelink-mcp " + spec.version},
	})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Created = "linux", arch, created
	cf.Config = v1.Config{
		User:       fmt.Sprintf("%d:%d", nonrootID, nonrootID),
		Entrypoint: []string{binaryPath},
		// Serving HTTP on every interface needs MCP_AUTH_TOKENS_FILE; the
		// server refuses to start without it, which is the safe default.
		Cmd:          []string{"serve", "--http", ":" + httpPort},
		WorkingDir:   stateDir,
		ExposedPorts: map[string]struct{}{httpPort + "/tcp": {}},
		Volumes:      map[string]struct{}{stateDir: {}},
		StopSignal:   "SIGTERM",
		Env: []string{
			"PATH=/usr/local/bin",
			"HOME=" + stateDir,
			"STATE_DB_PATH=" + stateDir + "/state.db",
		},
		Labels: map[string]string{
			"org.opencontainers.image.title":       "storelink-mcp",
			"org.opencontainers.image.description": "Korral StoreLink MCP server",
			"org.opencontainers.image.vendor":      "Korral",
			"org.opencontainers.image.licenses":    "MIT",
			"org.opencontainers.image.source":      spec.source,
			"org.opencontainers.image.version":     spec.version,
			"org.opencontainers.image.revision":    spec.revision,
			"org.opencontainers.image.created":     spec.created.Format(time.RFC3339),
		},
	}
	return mutate.ConfigFile(img, cf)
}

func runImage(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var spec imageSpec
	outDir := fs.String("out-dir", "", "`directory` for the archives")
	fs.StringVar(&spec.repository, "repository", "korral/storelink-mcp", "image `name` the archives tag")
	fs.StringVar(&spec.version, "version", "", "release `version` (image tag and label)")
	fs.StringVar(&spec.revision, "revision", "", "source `commit`")
	fs.StringVar(&spec.source, "source", "", "source repository `URL`")
	epoch := fs.Int64("epoch", -1, "creation time, in Unix `seconds` (the commit time)")
	fs.Func("doc", "`file` to ship under "+docDir+" (repeatable)", func(s string) error {
		spec.docs = append(spec.docs, s)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if *outDir == "" || spec.version == "" || spec.revision == "" || spec.source == "" || *epoch < 0 || fs.NArg() == 0 {
		return usageError{fmt.Errorf("image needs -out-dir, -version, -revision, -source, -epoch and at least one linux/ARCH=BINARY")}
	}
	spec.created = time.Unix(*epoch, 0).UTC()
	tag, err := name.NewTag(spec.repository + ":" + spec.version)
	if err != nil {
		return usageError{fmt.Errorf("image tag: %w", err)}
	}

	index := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, arg := range fs.Args() {
		plat, binary, ok := strings.Cut(arg, "=")
		arch, okOS := strings.CutPrefix(plat, "linux/")
		if !ok || !okOS || arch == "" {
			return usageError{fmt.Errorf("%q: want linux/ARCH=BINARY", arg)}
		}
		img, err := buildImage(arch, binary, spec)
		if err != nil {
			return fmt.Errorf("image for %s: %w", plat, err)
		}
		// One docker archive per architecture: `docker load` of any
		// engine version reads it, and podman's too.
		out := filepath.Join(*outDir, fmt.Sprintf("storelink-mcp_%s_image_linux_%s.docker.tar", spec.version, arch))
		if err := writeFileAtomic(out, func(w io.Writer) error { return tarball.Write(tag, img, w) }); err != nil {
			return err
		}
		fmt.Fprintln(stdout, out)
		index = mutate.AppendManifests(index, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}},
		})
	}
	out := filepath.Join(*outDir, fmt.Sprintf("storelink-mcp_%s_image.oci.tar", spec.version))
	if err := writeOCIArchive(out, index, tag, spec.created); err != nil {
		return err
	}
	fmt.Fprintln(stdout, out)
	return nil
}

// writeOCIArchive writes the multi-architecture index as an OCI image
// layout in a tar file, for `skopeo copy --all oci-archive:` or `crane
// push --index` to a registry. The layout's index.json names the index by
// tag, the way engines expect.
func writeOCIArchive(out string, index v1.ImageIndex, tag name.Tag, created time.Time) error {
	tmp, err := os.MkdirTemp("", "distpack-oci-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	outer := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), mutate.IndexAddendum{
		Add: index,
		Descriptor: v1.Descriptor{Annotations: map[string]string{
			"org.opencontainers.image.ref.name": tag.TagStr(),
			"io.containerd.image.name":          engineName(tag),
		}},
	})
	if _, err := layout.Write(tmp, outer); err != nil {
		return err
	}
	var es []entry
	err = filepath.WalkDir(tmp, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == tmp {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, tmp+string(filepath.Separator)))
		if d.IsDir() {
			es = append(es, entry{name: rel, mode: 0o755, dir: true})
		} else {
			es = append(es, entry{name: rel, mode: 0o644, src: p})
		}
		return nil
	})
	if err != nil {
		return err
	}
	return writeFileAtomic(out, func(w io.Writer) error { return writeTar(w, es, created) })
}

// engineName is the tag's fully qualified name as containerd spells it:
// Docker Hub is docker.io there, not the API host index.docker.io.
func engineName(tag name.Tag) string {
	if tag.RegistryStr() == name.DefaultRegistry {
		return "docker.io/" + tag.RepositoryStr() + ":" + tag.TagStr()
	}
	return tag.Name()
}
