package tools

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/korral/storelink/mcpserver/internal/projection"
	"github.com/korral/storelink/mcpserver/internal/views"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// appsHost is a client that declares the MCP Apps extension, as a host
// built on @modelcontextprotocol/ext-apps does.
func appsHost() *mcp.ClientOptions {
	caps := &mcp.ClientCapabilities{}
	caps.AddExtension(views.Extension, map[string]any{"mimeTypes": []string{views.MIMEType}})
	return &mcp.ClientOptions{Capabilities: caps}
}

func viewSessions(t *testing.T) (plain, apps session) {
	t.Helper()
	db := sharedLedger(t)
	writes := func(o *Options) { o.Writes = &WriteOptions{MaxOrderUnits: 500, AllowWrites: true, Ledger: db} }
	kr := mustKeyring(t, `{"47":"k1","102":"k2","311":"k3"}`)
	return connect(t, newFake(), kr, writes), connectAs(t, newFake(), kr, writes, appsHost())
}

// TestToolsNameTheirViewsOnlyForAppsHosts: a host declaring the extension
// sees _meta.ui.resourceUri on the risk check and the order tool; other
// clients get the list without _meta. Both lists fit the budgets.
func TestToolsNameTheirViewsOnlyForAppsHosts(t *testing.T) {
	plain, apps := viewSessions(t)
	ctx := context.Background()
	pl, err := plain.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	al, err := apps.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"korral_check_stock_risk": views.StockRiskURI, "korral_raise_replenishment_order": views.OrderURI}
	for _, tool := range pl.Tools {
		if tool.Meta != nil {
			t.Errorf("plain client: %s carries _meta %v", tool.Name, tool.Meta)
		}
	}
	got := map[string]string{}
	for _, tool := range al.Tools {
		if tool.Meta == nil {
			continue
		}
		ui, _ := tool.Meta["ui"].(map[string]any)
		uri, _ := ui["resourceUri"].(string)
		got[tool.Name] = uri
		if flat, _ := tool.Meta["ui/resourceUri"].(string); flat != uri {
			t.Errorf("%s: ui/resourceUri %q, ui.resourceUri %q", tool.Name, flat, uri)
		}
		tool.Meta = nil
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("views named (-want +got):\n%s", diff)
	}
	if al.CacheScope != "private" || pl.CacheScope != "public" {
		t.Errorf("cacheScope: apps host %q, plain client %q", al.CacheScope, pl.CacheScope)
	}
	al.CacheScope = pl.CacheScope
	pb, _ := json.Marshal(pl)
	ab, _ := json.Marshal(al)
	if string(pb) != string(ab) {
		t.Errorf("apart from _meta the lists differ:\nplain %s\napps  %s", pb, ab)
	}
	// The budgets hold for the longer list too (its _meta put back).
	al2, _ := apps.cs.ListTools(ctx, nil)
	whole, _ := json.Marshal(al2)
	if len(whole) > ToolsListBudgetBytes || ModelVisibleBytes(al2.Tools) != ModelVisibleBytes(pl.Tools) {
		t.Errorf("apps host: tools/list %d bytes (budget %d), model-visible %d vs %d", len(whole), ToolsListBudgetBytes,
			ModelVisibleBytes(al2.Tools), ModelVisibleBytes(pl.Tools))
	}
}

// TestViewsAreServedAsResources: both views are listed and read as MCP Apps
// documents with a CSP naming no domain.
func TestViewsAreServedAsResources(t *testing.T) {
	_, apps := viewSessions(t)
	ctx := context.Background()
	list, err := apps.cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range list.Resources {
		uris = append(uris, r.URI)
		if r.MIMEType != views.MIMEType {
			t.Errorf("%s: mimeType %q", r.URI, r.MIMEType)
		}
	}
	if diff := cmp.Diff([]string{views.OrderURI, views.StockRiskURI}, sorted(uris)); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
	for _, uri := range uris {
		res, err := apps.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		if len(res.Contents) != 1 {
			t.Fatalf("%s: %d contents", uri, len(res.Contents))
		}
		c := res.Contents[0]
		if c.URI != uri || c.MIMEType != views.MIMEType || !strings.HasPrefix(c.Text, "<!DOCTYPE html>") {
			t.Errorf("%s: uri %q mimeType %q text starts %.40q", uri, c.URI, c.MIMEType, c.Text)
		}
		b, _ := json.Marshal(c.Meta)
		if diff := cmp.Diff(`{"ui":{"csp":{"baseUriDomains":[],"connectDomains":[],"frameDomains":[],"resourceDomains":[]},"prefersBorder":true}}`, string(b)); diff != "" {
			t.Errorf("%s: _meta (-want +got):\n%s", uri, diff)
		}
		checkSelfContained(t, uri, c.Text)
	}
}

// checkSelfContained fails for a document that could load or reach
// anything, write markup from data, or call a tool.
func checkSelfContained(t *testing.T, uri, html string) {
	t.Helper()
	for _, bad := range []*regexp.Regexp{
		regexp.MustCompile(`<script[^>]+src`), regexp.MustCompile(`<link\b`), regexp.MustCompile(`<img\b`),
		regexp.MustCompile(`@import|url\(`), regexp.MustCompile(`\bfetch\(|XMLHttpRequest|WebSocket|EventSource|sendBeacon`),
		regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write`),
		// A view never raises an order: it calls no tool at all.
		regexp.MustCompile(`tools/call|korral_raise_replenishment_order|callServerTool`),
	} {
		if m := bad.FindString(html); m != "" {
			t.Errorf("%s contains %q", uri, m)
		}
	}
}

// TestViewsAreCachedPrivatelyForAppsHosts: the tool list naming the views
// must not be kept by a shared cache.
func TestViewsAreCachedPrivatelyForAppsHosts(t *testing.T) {
	c := &mcp.Cacheable{}
	req := &mcp.ListToolsRequest{Params: &mcp.ListToolsParams{}}
	req.Params.SetMeta(map[string]any{mcp.MetaKeyClientCapabilities: map[string]any{"extensions": map[string]any{views.Extension: map[string]any{}}}})
	cacheable(context.Background(), req, c)
	if c.CacheScope != "private" {
		t.Errorf("apps host: cacheScope %q", c.CacheScope)
	}
	c = &mcp.Cacheable{}
	cacheable(context.Background(), &mcp.ListToolsRequest{Params: &mcp.ListToolsParams{}}, c)
	if c.CacheScope != "public" {
		t.Errorf("other client: cacheScope %q", c.CacheScope)
	}
}

// TestViewStylesEveryVerdict: every value of every closed set a view shows
// as a badge (the risk answers, the confidence, the quantity check's
// verdict, the raise mode, the order statuses), read from the sets the
// answers are built from, has a rule of its own in the views' stylesheet
// (.badge.<kind>-<value>); the three verdicts look different; and the
// stylesheet styles no value the server does not send, as `.badge.block`
// did while the server sent `refuse`. Every data quality flag has words in
// the views' fallback map.
func TestViewStylesEveryVerdict(t *testing.T) {
	sets := map[string][]string{
		"stockout":   values(projection.Answers()),
		"arrival":    values(projection.Answers()),
		"confidence": values(projection.Confidences()),
		"verdict":    values(verdicts()),
		"mode":       values(raiseModes()),
		"status":     values(orderStatuses()),
	}
	html := views.All()[0].HTML
	css := html[strings.Index(html, "<style>"):strings.Index(html, "</style>")]
	rules := stylesheetRules(css)
	var scripts string
	for _, v := range views.All() {
		scripts += v.HTML[strings.Index(v.HTML, "<script>"):]
	}
	for kind, vals := range sets {
		if !strings.Contains(scripts, kind+"-") && !strings.Contains(scripts, `badge("`+kind+`"`) {
			t.Errorf("no view writes a %s-… class", kind)
		}
		for _, v := range vals {
			if rules[".badge."+kind+"-"+v] == "" {
				t.Errorf("style.css has no rule for .badge.%s-%s: the view would show %s %q unstyled", kind, v, kind, v)
			}
		}
	}
	if ok, review, refuse := rules[".badge.verdict-ok"], rules[".badge.verdict-review"], rules[".badge.verdict-refuse"]; ok == review || review == refuse || ok == refuse {
		t.Errorf("two verdicts share a style: ok {%s}, review {%s}, refuse {%s}", ok, review, refuse)
	}
	badge := regexp.MustCompile(`^\.badge\.([a-z]+)-([a-z_]+)$`)
	for sel := range rules {
		if !strings.HasPrefix(sel, ".badge.") {
			continue
		}
		m := badge.FindStringSubmatch(sel)
		if m == nil || !slices.Contains(sets[m[1]], m[2]) {
			t.Errorf("style.css styles %s, which is no value the server sends", sel)
		}
	}
	for _, f := range projection.Flags() {
		if !regexp.MustCompile(`\b` + string(f) + `: "[A-Z]`).MatchString(scripts) {
			t.Errorf("bridge.js's FLAG_WORDS has no words for the flag %q", f)
		}
	}
}

// stylesheetRules maps each selector of a stylesheet's plain rules to its
// declarations (rules inside @media are left out).
func stylesheetRules(css string) map[string]string {
	css = regexp.MustCompile(`(?s)/\*.*?\*/`).ReplaceAllString(css, "")
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`([^{}]+)\{([^{}]*)\}`).FindAllStringSubmatch(css, -1) {
		if strings.Contains(m[1], "@") {
			continue
		}
		for _, sel := range strings.Split(m[1], ",") {
			out[strings.TrimSpace(sel)] += strings.TrimSpace(m[2])
		}
	}
	return out
}
