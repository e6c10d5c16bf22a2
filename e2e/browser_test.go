package e2e_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browser starts chromium (found by e2etest.NeedTool), headless, with a
// fresh profile and a window of width×height, and returns its context for
// chromedp. The test's end closes the browser and waits for it; three
// minutes bound it in any case.
func browser(t *testing.T, chromium string, width, height int) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.Flag("headless", "new"), chromedp.NoSandbox,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(width, height))
	// Cancelling the allocator ends the browser process and waits for it.
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancelBrowser := chromedp.NewContext(allocCtx, chromedp.WithErrorf(t.Logf))
	t.Cleanup(func() { cancelBrowser(); cancelAlloc(); cancel() })
	return bctx
}
