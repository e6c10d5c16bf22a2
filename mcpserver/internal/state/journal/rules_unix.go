//go:build unix

package journal

import (
	"errors"
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// noFollow makes an open fail on a symbolic link in the last component.
const noFollow = syscall.O_NOFOLLOW

// modeBits: the file's permission bits mean what they say.
const modeBits = true

// isSymlinkErr reports an open refused by noFollow (ELOOP; EMLINK on some
// BSDs).
func isSymlinkErr(err error) bool {
	return errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK)
}

// owners names st's owner and this process's user, and reports whether they
// are the same.
func owners(st os.FileInfo) (owner, me string, same bool) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return "", "", true
	}
	uid := os.Geteuid()
	return userName(int(sys.Uid)), userName(uid), int(sys.Uid) == uid
}

// userName is uid's login name, or the number when it has none.
func userName(uid int) string {
	id := strconv.Itoa(uid)
	if u, err := user.LookupId(id); err == nil && u.Username != "" {
		return u.Username
	}
	return id
}
