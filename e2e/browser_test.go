package e2e_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browserLimit bounds one test's browser, from its start to the test's
// end, unless the test sets its own (browserFor).
const browserLimit = 3 * time.Minute

// browser starts headless chromium with a fresh profile and a width×height
// window and returns its chromedp context; closed at the test's end or
// after browserLimit.
func browser(t *testing.T, chromium string, width, height int) context.Context {
	t.Helper()
	return browserFor(t, browserLimit, chromium, width, height)
}

// browserFor is browser bounded by limit instead of browserLimit.
func browserFor(t *testing.T, limit time.Duration, chromium string, width, height int) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.Flag("headless", "new"), chromedp.NoSandbox,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(width, height))
	// Cancelling the allocator ends the browser process and waits for it.
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancelBrowser := chromedp.NewContext(allocCtx, chromedp.WithErrorf(t.Logf))
	t.Cleanup(func() { cancelBrowser(); cancelAlloc(); cancel() })
	return bctx
}

// page drives one browser tab; each step fails the test on an error, adding
// logs (a server's stderr) when set.
type page struct {
	t    *testing.T
	ctx  context.Context
	logs func() string
}

// do runs browser steps.
func (p page) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, steps...); err != nil {
		logs := ""
		if p.logs != nil {
			logs = "\nserver stderr:\n" + tail(p.logs(), 4000)
		}
		p.t.Fatalf("%s: %v%s", what, err, logs)
	}
}

// submit clicks a button that posts a form and waits for the answer.
func (p page) submit(what, sel string) {
	p.t.Helper()
	if _, err := chromedp.RunResponse(p.ctx, chromedp.Click(chromedp.CSS(sel))); err != nil {
		p.t.Fatalf("%s: %v", what, err)
	}
}

// text is the text of the element sel.
func (p page) text(sel string) string {
	p.t.Helper()
	s, err := chromedp.Run(p.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		p.t.Fatalf("read %s: %v", sel, err)
	}
	return s
}

// wantText checks the text of sel holds every part.
func (p page) wantText(sel string, parts ...string) {
	p.t.Helper()
	got := p.text(sel)
	for _, part := range parts {
		if !strings.Contains(got, part) {
			p.t.Errorf("%s reads %q, which lacks %q", sel, got, part)
		}
	}
}

// shot saves a full-page screenshot as name in the artefact directory.
func (p page) shot(name string) {
	p.t.Helper()
	png, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(p.t.ArtifactDir(), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.t.Fatal(err)
	}
	p.t.Logf("screenshot: %s", path)
}

// readableJS lists what a reader of the page at its window's width cannot
// read: a page wider than the window, an element that runs past the window's
// right edge (unless a scrolling or clipping box holds it), and visible text
// drawn below 11 px (SVG text is measured after the SVG's scaling).
const readableJS = `(() => {
  const out = [];
  const de = document.documentElement;
  const width = de.clientWidth;
  if (de.scrollWidth > width + 1) out.push("the page is " + de.scrollWidth + " px wide in a " + width + " px window");
  const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
    (typeof el.className === "string" && el.className ? "." + el.className.trim().split(/\s+/).join(".") : "");
  const held = (el) => {
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      if (getComputedStyle(a).overflowX !== "visible") return true;
    }
    return false;
  };
  for (const el of document.querySelectorAll("body *")) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    const st = getComputedStyle(el);
    if (st.visibility === "hidden" || st.display === "none") continue;
    if (r.right > width + 1 && !held(el)) out.push(name(el) + " ends at " + Math.round(r.right) + " px");
    const text = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim() !== "");
    if (!text) continue;
    let size = parseFloat(st.fontSize);
    const svg = el.ownerSVGElement;
    if (svg && svg.getScreenCTM()) size *= Math.abs(svg.getScreenCTM().a);
    if (size < 11) out.push(name(el) + " text " + JSON.stringify(el.textContent.trim().slice(0, 30)) + " at " + size.toFixed(1) + " px");
  }
  return out.slice(0, 20);
})()`

// assertReadable fails the test when the document in ctx (a page or a view's
// frame) overflows its window or draws text below 11 px; what names the page
// and width in the message.
func assertReadable(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	problems, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](readableJS))
	if err != nil {
		t.Fatalf("%s: layout check: %v", what, err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", what, p)
	}
}
