//go:build !unix

package secretfile

import "io/fs"

// owner has nothing to say where file modes do not guard files (Windows
// uses access control lists, which this package does not read).
func owner(fs.FileInfo) (uid uint32, ok bool) { return 0, false }
