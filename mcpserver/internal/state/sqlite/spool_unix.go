//go:build unix

package sqlite

import (
	"errors"
	"os"
	"syscall"
)

// spoolSupported: flock tells a live spool from one whose process ended.
const spoolSupported = true

// tryLock takes an exclusive flock on f without waiting; ok is false when
// another open file holds it.
func tryLock(f *os.File) (ok bool, err error) {
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		case errors.Is(err, syscall.EINTR):
			continue
		default:
			return false, err
		}
	}
}

// isLinked reports whether f still has a name: a spool removed after its
// move has none.
func isLinked(f *os.File) (bool, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return false, err
	}
	return st.Nlink > 0, nil
}
