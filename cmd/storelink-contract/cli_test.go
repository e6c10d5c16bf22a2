package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := writeKeyring(t, map[string]string{"47": "k47"})
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"47": 12`), 0o600); err != nil {
		t.Fatal(err)
	}
	url := "http://127.0.0.1:1"
	cases := map[string]struct {
		args []string
		want string
	}{
		"no command":           {nil, "missing command"},
		"unknown command":      {[]string{"probe"}, `unknown command "probe"`},
		"bad header":           {[]string{"check", "--base-url", url, "--keyring-file", good, "--header", "X-Gw secret"}, `want "Name: value"`},
		"key header":           {[]string{"check", "--base-url", url, "--keyring-file", good, "--header", "X-Korral-Store-Key: secret"}, "store key header"},
		"unknown operation":    {[]string{"check", "--base-url", url, "--keyring-file", good, "--operation", "getStock"}, `operation "getStock" is not in the contract`},
		"missing CA file":      {[]string{"check", "--base-url", url, "--keyring-file", good, "--ca-cert", filepath.Join(dir, "none.pem")}, "--ca-cert"},
		"CA file without PEM":  {[]string{"check", "--base-url", url, "--keyring-file", good, "--ca-cert", good}, "no PEM certificate"},
		"no base URL":          {[]string{"check", "--keyring-file", good}, "--base-url and --keyring-file are required"},
		"unknown flag":         {[]string{"check", "--base-url", url, "--keyring-file", good, "--verbose"}, "flag provided but not defined"},
		"missing keyring":      {[]string{"check", "--base-url", url, "--keyring-file", filepath.Join(dir, "none.json")}, "no such file"},
		"invalid keyring":      {[]string{"check", "--base-url", url, "--keyring-file", bad}, "not valid JSON"},
		"bad format":           {[]string{"check", "--base-url", url, "--keyring-file", good, "--format", "xml"}, "want table, json or junit"},
		"bad rate":             {[]string{"check", "--base-url", url, "--keyring-file", good, "--rate", "fast"}, "requests per second"},
		"writes, no store":     {[]string{"check", "--base-url", url, "--keyring-file", good, "--allow-writes"}, "no write store named"},
		"store, no writes":     {[]string{"check", "--base-url", url, "--keyring-file", good, "--write-store", "47"}, "writes are not allowed"},
		"store not in keyring": {[]string{"check", "--base-url", url, "--keyring-file", good, "--store", "55"}, `store "55" has no key`},
		"stray argument":       {[]string{"check", "--base-url", url, "--keyring-file", good, "now"}, `unexpected argument "now"`},
	}
	for name, tc := range cases {
		code, stdout, stderr := cli(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", name, code, stderr, tc.want)
		}
		if strings.Count(stderr, "\n") != 1 || strings.Contains(stderr, "secret") {
			t.Errorf("%s: stderr is not one line without the header's value: %q", name, stderr)
		}
		if stdout != "" {
			t.Errorf("%s: a usage error printed a report: %q", name, stdout)
		}
	}
}

func TestHelp(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
		code, stdout, stderr := cli(t, args...)
		if code != 0 || stderr != "" || !strings.Contains(stdout, "storelink-contract check --base-url URL --keyring-file FILE") {
			t.Errorf("%v: exit %d\n%s", args, code, stdout)
		}
	}
	for _, args := range [][]string{{"check", "-h"}, {"check", "--base-url", "x", "--help"}, {"demo", "--help"}} {
		code, stdout, stderr := cli(t, args...)
		if code != 0 || stderr != "" || !strings.Contains(stdout, "Usage: storelink-contract "+args[0]) || !strings.Contains(stdout, "-format") {
			t.Errorf("%v: exit %d\nstdout: %s\nstderr: %s", args, code, stdout, stderr)
		}
	}
	code, stdout, _ := cli(t, "check", "--help")
	for _, f := range []string{"-allow-writes", "-max-requests", "-rate", "-header", "-ca-cert", "-operation"} {
		if code != 0 || !strings.Contains(stdout, f) {
			t.Errorf("check --help does not list %s:\n%s", f, stdout)
		}
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"version", "--version"} {
		code, stdout, _ := cli(t, arg)
		if code != 0 || !strings.HasPrefix(stdout, "storelink-contract ") || !strings.Contains(stdout, "(commit ") {
			t.Errorf("%s: exit %d %q", arg, code, stdout)
		}
	}
}
