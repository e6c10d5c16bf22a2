package bearer

import (
	"os"
	"syscall"
	"time"
)

// sysStamp returns the change time, inode and device of fi. The change time
// moves on every write and every metadata change and cannot be set by a
// user, so it reveals rewrites that put the modification time back.
func sysStamp(fi os.FileInfo) (change time.Time, ino, dev uint64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return time.Time{}, 0, 0
	}
	return time.Unix(st.Ctim.Unix()), st.Ino, st.Dev
}
