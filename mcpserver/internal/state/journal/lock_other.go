//go:build !unix

package journal

import "os"

// Without flock the journal excludes only the goroutines of one process
// (File.mu): on such a system, give every process a journal of its own.
func lockFile(*os.File) error { return nil }

func unlockFile(*os.File) error { return nil }
