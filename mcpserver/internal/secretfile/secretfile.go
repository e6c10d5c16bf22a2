// Package secretfile refuses secret files that other users of the machine
// can read. The rule is PostgreSQL's for its TLS key: no permission for
// others, and none for the group unless root owns the file (so a Kubernetes
// Secret volume, root-owned with mode 0440, passes).
package secretfile

import (
	"fmt"
	"io/fs"
	"os"
)

// Check examines the file at path (following symbolic links) and returns an
// error naming its mode and the fix when other users can read or write it.
// An os.Stat error is returned as is. The message does not repeat the path.
func Check(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	return CheckInfo(path, fi)
}

// CheckInfo is Check for a file already examined; path is only for the
// message.
func CheckInfo(path string, fi fs.FileInfo) error {
	uid, ok := owner(fi)
	if !ok {
		return nil // not a Unix system: no owner and mode to check
	}
	perm := fi.Mode().Perm()
	bad := perm & 0o066
	if uid == 0 {
		bad = perm & 0o026
	}
	if bad == 0 {
		return nil
	}
	who := "other users"
	if bad&0o006 == 0 {
		who = "its group"
	}
	return fmt.Errorf("mode %04o lets %s read or change the file: chmod 600 %s (a file owned by root may be 0640, as in a Kubernetes Secret volume with defaultMode 0440)", perm, who, path)
}
