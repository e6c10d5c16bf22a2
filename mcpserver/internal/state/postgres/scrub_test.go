package postgres

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// pgx does not quote passwords today; scrub is what keeps that true should a
// driver version ever do.
func TestScrub(t *testing.T) {
	const pw = "s3cr3t-pw"
	err := scrub(fmt.Errorf("%w: dial postgres://u:%s@h/db:\n\tattempt 2", state.ErrUnavailable, pw), pw)
	if strings.Contains(err.Error(), pw) || strings.Contains(err.Error(), "\n") {
		t.Errorf("scrubbed error = %q", err)
	}
	if !errors.Is(err, state.ErrUnavailable) {
		t.Errorf("scrub lost state.ErrUnavailable: %v", err)
	}
	plain := errors.New("syntax error")
	if got := scrub(plain, pw); got != plain {
		t.Errorf("scrub changed an error without the password: %v", got)
	}
}
