package app

import (
	"context"
	"errors"

	"github.com/korral/storelink/mcpserver/internal/telemetry/otelsdk"
)

// startTelemetry sets up the OpenTelemetry SDK of a server (package
// otelsdk); opts.Metrics says whether `serve --metrics` asked for /metrics.
func (a *App) startTelemetry(context.Context) error {
	tel, err := otelsdk.Start(a.cfg.Telemetry, Version, a.opts.Metrics, a.log)
	var bad *otelsdk.ConfigError
	if errors.As(err, &bad) {
		return exit2(bad.Err)
	}
	if err != nil {
		return err
	}
	a.tel, a.closes = tel, append(a.closes, tel.Close)
	return nil
}
