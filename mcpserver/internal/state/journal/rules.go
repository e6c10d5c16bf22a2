package journal

import (
	"fmt"
	"os"
	"path/filepath"
)

// Rule is what the journal's file must be. Its lines become ledger entries
// at replay, so it is held to the rules of a secret: a file another user,
// or a program following a link planted in its place, could write would let
// them put words in StoreLink's mouth.
const Rule = "the outcome journal must be a regular file (not a symbolic link) owned by the user the server runs as, with mode 0600 (no group or other permission bits)"

// UnsafeError is Open's refusal of a file that breaks Rule. Fix is the
// command or setting that makes it right.
type UnsafeError struct {
	Path string
	// Problem says what is wrong, after the path: "has mode 0666".
	Problem string
	Fix     string
}

func (e *UnsafeError) Error() string {
	return fmt.Sprintf("journal: %s %s; %s", e.Path, e.Problem, Rule)
}

// symlinkError refuses abs, a symbolic link, naming where it points.
func symlinkError(abs string) error {
	e := &UnsafeError{Path: abs, Problem: "is a symbolic link"}
	target, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if t, rerr := os.Readlink(abs); rerr == nil {
			e.Problem += " (to " + t + ", which does not resolve)"
		}
		e.Fix = fmt.Sprintf("remove the link (rm %s); the server creates the journal there itself, mode 0600", abs)
		return e
	}
	e.Problem += " (to " + target + ")"
	e.Fix = fmt.Sprintf("set STATE_JOURNAL_PATH=%s, the file itself, not a link to it (or rm %s and let the server create the journal there, mode 0600)", target, abs)
	return e
}

// checkDir refuses a journal directory that other users may write to
// without the sticky bit: any of them could rename the journal away and
// put a file (or a link) of their own in its place between two opens. A
// group-writable directory is accepted, as a Kubernetes volume with
// fsGroup is one; "others" never.
func checkDir(dir string) error {
	st, err := os.Stat(dir)
	if err != nil || !modeBits {
		return nil // MkdirAll just made it, or this system has no such bits
	}
	if m := st.Mode(); m.Perm()&0o002 != 0 && m&os.ModeSticky == 0 {
		return &UnsafeError{Path: dir, Problem: fmt.Sprintf("is the journal's directory, and its mode %04o lets other users replace the journal in it", m.Perm()),
			Fix: fmt.Sprintf("chmod o-w %s (or keep the journal in a directory of its own: the server creates one, mode 0700)", dir)}
	}
	return nil
}

// checkFile holds the opened journal's file information to Rule.
func checkFile(abs string, st os.FileInfo) error {
	if !st.Mode().IsRegular() {
		return &UnsafeError{Path: abs, Problem: fmt.Sprintf("is not a regular file (%s)", st.Mode().Type()),
			Fix: "point STATE_JOURNAL_PATH at a regular file of its own (a path that does not exist yet is created, mode 0600)"}
	}
	var problems, fixes []string
	if owner, me, ok := owners(st); !ok {
		problems = append(problems, fmt.Sprintf("is owned by %s, not by %s, the user this process runs as", owner, me))
		fixes = append(fixes, fmt.Sprintf("chown %s %s", me, abs))
	}
	if perm := st.Mode().Perm(); modeBits && perm&0o077 != 0 {
		problems = append(problems, fmt.Sprintf("has mode %04o, which lets other users read or write it", perm))
		fixes = append(fixes, fmt.Sprintf("chmod 600 %s", abs))
	}
	if len(problems) == 0 {
		return nil
	}
	e := &UnsafeError{Path: abs, Problem: problems[0], Fix: fixes[0]}
	if len(problems) > 1 {
		e.Problem += " and " + problems[1]
		e.Fix += " && " + fixes[1]
	}
	return e
}
