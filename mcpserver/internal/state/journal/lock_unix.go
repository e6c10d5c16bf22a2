//go:build unix

package journal

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock on f, waiting for other
// processes (and other open files of this one) to release theirs.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}

func unlockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
