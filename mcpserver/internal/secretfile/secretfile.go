// Package secretfile refuses secret files that other users of the machine
// can read: the keyring, the token files, the host consent key, the webhook
// secret and the database URL.
//
// The rule is PostgreSQL's for its TLS key: no permission for others; none for
// the group either, unless the file is owned by root. That exception lets a
// process that does not run as root read a Kubernetes Secret volume (owned by
// root, group fsGroup, mode 0440) or a root-owned file given to its group.
package secretfile

import (
	"fmt"
	"io/fs"
	"os"
)

// Check examines the file at path (following symbolic links, as reading
// it does) and returns an error naming its mode and the fix when other
// users can read or write it. An error of os.Stat is returned as is.
// The error does not repeat the path before the mode: callers lead with
// the variable that names the file.
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
		return nil // no owner and mode to judge by (not a Unix system)
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
