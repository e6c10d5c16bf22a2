//go:build unix

package secretfile

import (
	"io/fs"
	"syscall"
)

func owner(fi fs.FileInfo) (uid uint32, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Uid, true
}
