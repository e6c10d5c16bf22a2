package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/korral/storelink/mcpserver/internal/config"
	"github.com/korral/storelink/mcpserver/internal/doctor"
	"github.com/korral/storelink/mcpserver/internal/tools"
	"github.com/korral/storelink/mcpserver/internal/upstream"
)

// Doctor runs the deployment's checks (package doctor), one line each to
// w; the result is an *Error with code 1 when any failed.
func Doctor(ctx context.Context, opts Options, w io.Writer) error {
	readFile := opts.readFile()
	cfg, err := config.Load(opts.Getenv, readFile)
	if err != nil {
		return doctorResult(doctor.ConfigFailed(w, err))
	}
	// Doctor checks the deployment as it runs, on the real clock.
	if err := RefuseMockNow(cfg); err != nil {
		return err
	}
	return doctorResult(doctor.Run(ctx, w, doctor.Options{
		Config: cfg, OpenState: OpenState, DatabaseKind: DatabaseKind(cfg),
		Keys: func(log *slog.Logger) upstream.Keys {
			return tools.NewKeySource(cfg.Keyring, cfg.KeyringFile, readFile, log)
		},
	}))
}

func doctorResult(failed int) error {
	if failed > 0 {
		return &Error{Code: 1, Err: fmt.Errorf("doctor: %d check(s) failed", failed)}
	}
	return nil
}
