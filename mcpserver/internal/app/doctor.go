package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/korral/storelink/mcpserver/internal/doctor"
	"github.com/korral/storelink/mcpserver/internal/keyring"
	"github.com/korral/storelink/mcpserver/internal/state/backend"
	"github.com/korral/storelink/mcpserver/internal/upstream"
)

// Doctor runs the deployment's checks (package doctor), one line each to
// w; the result is an *Error with code 1 when any failed.
func Doctor(ctx context.Context, opts Options, w io.Writer) error {
	a, err := New(ctx, opts, ConfigOnly)
	if err != nil {
		// The configuration's own error, without the "configuration: "
		// prefix: one failed check per line.
		var e *Error
		if errors.As(err, &e) && errors.Unwrap(e.Err) != nil {
			return doctorResult(doctor.ConfigFailed(w, errors.Unwrap(e.Err)))
		}
		return err
	}
	cfg, readFile := a.cfg, opts.readFile()
	// Doctor checks the deployment as it runs, on the real clock.
	if err := cfg.CheckRun(false, false); err != nil {
		return exit2(fmt.Errorf("configuration: %w", err))
	}
	return doctorResult(doctor.Run(ctx, w, doctor.Options{
		Config: cfg, OpenState: backend.Open, DatabaseKind: backend.Kind(cfg),
		Keys: func(log *slog.Logger) upstream.Keys {
			return keyring.NewSource(cfg.Keyring, cfg.KeyringFile, readFile, log)
		},
	}))
}

func doctorResult(failed int) error {
	if failed > 0 {
		return &Error{Code: 1, Err: fmt.Errorf("doctor: %d check(s) failed", failed)}
	}
	return nil
}
