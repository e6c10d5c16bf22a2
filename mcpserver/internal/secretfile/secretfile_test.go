//go:build unix

package secretfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// file writes a file with mode, owned by uid when the test can give it
// away (as root), else by the test's own user; it reports the owner.
func file(t *testing.T, mode os.FileMode, uid int) (string, int) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(p, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(p, uid, -1); err != nil {
			t.Fatal(err)
		}
		return p, uid
	}
	return p, os.Geteuid()
}

func TestCheck(t *testing.T) {
	const nobody = 65534
	cases := []struct {
		mode os.FileMode
		// ok by a root owner, ok by anyone else
		root, user bool
	}{
		{0o600, true, true},
		{0o400, true, true},
		{0o640, true, false},
		{0o440, true, false},
		{0o660, false, false},
		{0o604, false, false},
		{0o644, false, false},
		{0o666, false, false},
		{0o602, false, false},
	}
	for _, c := range cases {
		for _, uid := range []int{0, nobody} {
			p, got := file(t, c.mode, uid)
			want := c.user
			if got == 0 {
				want = c.root
			}
			err := Check(p)
			if (err == nil) != want {
				t.Errorf("mode %04o owned by uid %d: Check = %v; want ok %v", c.mode, got, err, want)
				continue
			}
			if err != nil {
				if msg := err.Error(); !strings.Contains(msg, p) || !strings.Contains(msg, fmt.Sprintf("mode %04o", c.mode)) || !strings.Contains(msg, "chmod 600 "+p) || strings.Contains(msg, "\n") {
					t.Errorf("mode %04o: message %q should be one line naming the file, its mode and chmod 600", c.mode, msg)
				}
			}
		}
	}
}

func TestCheckMissing(t *testing.T) {
	if err := Check(filepath.Join(t.TempDir(), "nope")); !os.IsNotExist(err) {
		t.Errorf("Check(missing) = %v; want the stat error", err)
	}
}
