package app

import (
	"context"
	"errors"

	"github.com/korral/storelink/mcpserver/internal/telemetry"
)

// startTelemetry sets up the OpenTelemetry SDK of a server (package
// telemetry); opts.Metrics says whether `serve --metrics` asked for /metrics.
func (a *App) startTelemetry(context.Context) error {
	tel, err := telemetry.Start(a.cfg.Telemetry, Version, a.opts.Metrics, a.log)
	var bad *telemetry.ConfigError
	if errors.As(err, &bad) {
		return exit2(bad.Err)
	}
	if err != nil {
		return err
	}
	a.tel, a.closes = tel, append(a.closes, tel.Close)
	return nil
}
