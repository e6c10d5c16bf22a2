//go:build !unix

package journal

import "os"

// Without O_NOFOLLOW, openFile's Lstat is the only check for a link.
const noFollow = 0

// modeBits: permission bits here are not Unix modes (a Windows file reads
// 0666), so they are not checked.
const modeBits = false

func isSymlinkErr(error) bool { return false }

// owners cannot tell a file's owner here; nor its mode.
func owners(os.FileInfo) (owner, me string, same bool) { return "", "", true }
