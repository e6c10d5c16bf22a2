//go:build !unix

package sqlite

import (
	"errors"
	"os"
)

// spoolSupported: without flock a live spool cannot be told from one whose
// process ended, so tool calls' records go to the table (RecordAudit).
const spoolSupported = false

func tryLock(*os.File) (bool, error) { return false, errors.New("no flock on this system") }

func isLinked(*os.File) (bool, error) { return false, nil }
