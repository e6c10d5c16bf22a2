package app

import (
	"context"
	"fmt"
	"time"

	"github.com/korral/storelink/mcpserver/internal/notify"
)

// notifyCloseTimeout bounds how long a stopping server keeps delivering
// the notices still queued, retries included.
const notifyCloseTimeout = 10 * time.Second

// notifier starts the webhook notifier of staged orders when
// APPROVAL_WEBHOOK_URL is set (configuration requires approval mode and a
// signing secret with it), and registers its Close; nil otherwise.
func (a *App) notifier() (*notify.Notifier, error) {
	cfg := a.cfg
	if cfg.ApprovalWebhookURL == "" {
		return nil, nil
	}
	n, err := notify.New(notify.Options{URL: cfg.ApprovalWebhookURL, Secret: []byte(cfg.ApprovalWebhookSecret),
		ConsoleURL: cfg.ConsolePublicURL, Logger: a.log})
	if err != nil {
		return nil, exit2(fmt.Errorf("configuration: APPROVAL_WEBHOOK_URL: %w", err))
	}
	a.log.Info("approval.webhook_enabled", "host", cfg.WebhookHost(), "console_url", cfg.ConsolePublicURL != "")
	a.closes = append(a.closes, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), notifyCloseTimeout)
		defer cancel()
		return n.Close(ctx)
	})
	return n, nil
}
