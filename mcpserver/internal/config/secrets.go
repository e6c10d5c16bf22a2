package config

import (
	"os"
	"strconv"
	"strings"

	"github.com/korral/storelink/mcpserver/internal/consent"
	"github.com/korral/storelink/mcpserver/internal/secretfile"
)

// secret reads NAME or NAME_FILE, never both. It returns the value, the
// variable it came from, the file path if any, and whether the read
// succeeded. Errors never contain the value.
func (l *loader) secret(name string) (value, from, path string, ok bool) {
	inline, path := l.getenv(name), l.getenv(name+"_FILE")
	switch {
	case inline != "" && path != "":
		l.fail("%s and %s_FILE are both set: keep one", name, name)
		return "", name, "", false
	case path != "":
		from = name + "_FILE=" + shown(path)
		b, err := l.readFile(path)
		if err != nil {
			l.fail("%s: cannot read the file: %v", from, err)
			return "", from, "", false
		}
		if len(strings.TrimSpace(string(b))) == 0 {
			l.fail("%s: the file is empty", from)
			return "", from, "", false
		}
		if !l.privateFile(from, path) {
			return "", from, "", false
		}
		return string(b), from, path, true
	default:
		return inline, name, "", true
	}
}

// hostConsentKey reads the host consent sealing key from the file NAME
// names. There is no default and no inline variable: a shared key would
// allow forged consents, and the environment leaks into process listings.
func (l *loader) hostConsentKey(name string, wanted bool) []byte {
	path := l.getenv(name)
	switch {
	case path == "" && wanted:
		l.fail("WRITE_APPROVAL=host needs %s: write a key with `openssl rand -hex 32 > FILE` (mode 0600), set %s=FILE, and give every replica the same file", name, name)
		return nil
	case path == "":
		return nil
	case !wanted:
		l.fail("%s is set but WRITE_APPROVAL is not \"host\": nothing would use the key; set WRITE_APPROVAL=host or unset it", name)
		return nil
	}
	from := name + "=" + shown(path)
	b, err := l.readFile(path)
	if err != nil {
		l.fail("%s: cannot read the file: %v", from, err)
		return nil
	}
	if !l.privateFile(from, path) {
		return nil
	}
	key, err := consent.ParseKey(b)
	if err != nil {
		l.fail("%s: %v", from, err)
		return nil
	}
	return key
}

// privateFile refuses a secret file that other users can read (package
// secretfile) and reports whether it passed. A path not on disk (tests'
// in-memory files) is checked by the read alone.
func (l *loader) privateFile(from, path string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return true
	}
	if err := secretfile.CheckInfo(shellWord(path), fi); err != nil {
		l.fail("%s: %v", from, err)
		return false
	}
	return true
}

// shellWord quotes path for a command line when a shell or terminal would
// act on it.
func shellWord(path string) string {
	for _, r := range path {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:@,", r)) {
			return strconv.Quote(path)
		}
	}
	return path
}

// privateFiles applies privateFile to the token files of `serve`, so every
// command, doctor included, reports a readable one.
func (l *loader) privateFiles(names ...string) {
	for _, name := range names {
		if path := l.getenv(name); path != "" {
			l.privateFile(name+"="+shown(path), path)
		}
	}
}
