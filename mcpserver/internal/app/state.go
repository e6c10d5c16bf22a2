package app

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/korral/storelink/mcpserver/internal/state/backend"
)

// Migrate brings the state database the configuration names to the
// current schema and writes what it applied to w (storelink-mcp migrate).
func (a *App) Migrate(ctx context.Context, w io.Writer) error {
	if err := a.cfg.CheckRun(false, false); err != nil {
		return exit2(fmt.Errorf("configuration: %w", err))
	}
	err := backend.Migrate(ctx, a.cfg, w)
	if cfgErr := (*backend.ConfigError)(nil); errors.As(err, &cfgErr) {
		return exit2(err)
	}
	return err
}
