package main

import (
	"archive/tar"
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWriteTarIsAFunctionOfItsEntries(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "tool")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	mtime := time.Unix(1796042127, 0)
	a := []entry{{name: "r", mode: 0o755, dir: true}, {name: "r/tool", mode: 0o755, src: bin}, {name: "r/b", mode: 0o644, body: []byte("b")}}
	b := []entry{a[2], a[1], a[0]}
	var first, second bytes.Buffer
	if err := writeTarGz(&first, a, mtime); err != nil {
		t.Fatal(err)
	}
	// The file's own time and mode on disk must not leak into the archive.
	if err := os.Chtimes(bin, time.Now(), time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := writeTarGz(&second, b, mtime); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Bytes(), second.Bytes()) {
		t.Fatal("same entries in another order or with another file time gave different archives")
	}

	var raw bytes.Buffer
	if err := writeTar(&raw, b, mtime); err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(&raw)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if !h.ModTime.Equal(mtime) || h.Uid != 0 || h.Gid != 0 || h.Uname != "root" {
			t.Errorf("%s: mtime %v uid %d gid %d uname %q, want %v, 0, 0, root", h.Name, h.ModTime, h.Uid, h.Gid, h.Uname, mtime)
		}
	}
	if got := strings.Join(names, " "); got != "r/ r/b r/tool" {
		t.Errorf("members %q, want sorted %q", got, "r/ r/b r/tool")
	}
}

func TestWriteTarRefusesDuplicates(t *testing.T) {
	err := writeTar(io.Discard, []entry{{name: "a", body: []byte("1")}, {name: "a", body: []byte("2")}}, time.Unix(0, 0))
	if err == nil || !strings.Contains(err.Error(), "added twice") {
		t.Fatalf("err = %v, want a duplicate error", err)
	}
}

func TestSumsMatchSHA256SumFormat(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"b.tar.gz": "abc", "a.tar": ""} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := sums([]string{filepath.Join(dir, "b.tar.gz"), filepath.Join(dir, "a.tar")})
	if err != nil {
		t.Fatal(err)
	}
	want := "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  a.tar\n" +
		"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  b.tar.gz\n"
	if string(got) != want {
		t.Errorf("sums =\n%s\nwant\n%s", got, want)
	}
}

func TestIdentify(t *testing.T) {
	tests := map[string]string{
		"Apache License\n Version 2.0, January 2004":                                                                                          "Apache-2.0",
		"Permission is hereby granted, free of charge, to any\nperson obtaining a copy":                                                       "MIT",
		"Redistribution and use in source and binary forms, with or without modification...\n* Neither the name of Google Inc. nor the names": "BSD-3-Clause",
		"Redistribution and use in source and binary forms, with or without modification, are permitted provided that...":                     "BSD-2-Clause",
		"Permission to use, copy, modify, and/or distribute this software for any purpose with or without fee":                                "ISC",
		"Mozilla Public License Version 2.0":                                                                                                  "MPL-2.0",
		"GNU GENERAL PUBLIC LICENSE Version 3":                                                                                                "",
		"All rights reserved. Do not copy.":                                                                                                   "",
	}
	for text, want := range tests {
		if got := identify(text); got != want {
			t.Errorf("identify(%.40q) = %q, want %q", text, got, want)
		}
	}
}

func TestReadComponentRefusesUnknownTerms(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "LICENSE"), []byte("GNU GENERAL PUBLIC LICENSE Version 3"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readComponent("example.com/gpl", "v1.0.0", dir); err == nil || !strings.Contains(err.Error(), "review its terms") {
		t.Fatalf("err = %v, want a refusal naming the review", err)
	}
	if _, err := readComponent("example.com/none", "v1.0.0", t.TempDir()); err == nil {
		t.Fatal("a module without a licence file was accepted")
	}
}

func TestImageConfigAndLayer(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "storelink-mcp")
	if err := os.WriteFile(bin, []byte("binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := imageSpec{repository: "korral/storelink-mcp", version: "v1.2.3", revision: "abc", source: "https://example.com/src", created: time.Unix(1796042127, 0).UTC()}
	img, err := buildImage("arm64", bin, spec)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Architecture != "arm64" || cf.OS != "linux" || cf.Config.User != "65532:65532" ||
		strings.Join(cf.Config.Entrypoint, " ") != binaryPath || !cf.Created.Time.Equal(spec.created) {
		t.Errorf("config: arch %q os %q user %q entrypoint %q created %v", cf.Architecture, cf.OS, cf.Config.User, cf.Config.Entrypoint, cf.Created)
	}
	for k, want := range map[string]string{"org.opencontainers.image.version": "v1.2.3", "org.opencontainers.image.licenses": "MIT", "org.opencontainers.image.source": spec.source, "org.opencontainers.image.revision": "abc"} {
		if got := cf.Config.Labels[k]; got != want {
			t.Errorf("label %s = %q, want %q", k, got, want)
		}
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers = %d, %v; want one", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	seen := map[string]*tar.Header{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		seen[h.Name] = h
	}
	if h := seen["var/lib/storelink-mcp/"]; h == nil || h.Uid != nonrootID || h.Gid != nonrootID || h.Mode != 0o700 {
		t.Errorf("state directory header = %+v, want owned by %d with mode 0700", h, nonrootID)
	}
	if h := seen["usr/local/bin/storelink-mcp"]; h == nil || h.Mode != 0o755 || h.Uid != 0 {
		t.Errorf("binary header = %+v, want root-owned 0755", h)
	}
}

func TestCABundleParses(t *testing.T) {
	rest, n := caBundle(), 0
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			t.Fatalf("certificate %d: %v", n, err)
		}
		n++
	}
	if n < 100 {
		t.Errorf("bundle holds %d certificates; a public root store has well over 100", n)
	}
}
