// Package views holds the MCP Apps views (the io.modelcontextprotocol/ui
// extension): self-contained HTML documents a host renders in a sandboxed
// frame beside a tool's result. Each view draws the tool result's structured
// content alone; it loads nothing, reaches no network and calls no tool
// (ADR 0020).
//
// The documents are hand-written: page.html is the frame, style.css and
// bridge.js (the postMessage JSON-RPC between a view and its host) are
// shared, and each view adds one script. They are put together once, here,
// so the shared parts exist once in the source and inline in every document.
package views

import (
	_ "embed"
	"strings"
)

// Extension is the MCP Apps extension's identifier, which a host declares
// under capabilities.extensions in initialize (or in a request's
// client capabilities on 2026-07-28).
const Extension = "io.modelcontextprotocol/ui"

// MIMEType is the media type of an MCP Apps view.
const MIMEType = "text/html;profile=mcp-app"

// The views' resource URIs.
const (
	StockRiskURI = "ui://korral/stock-risk.html"
	OrderURI     = "ui://korral/order.html"
)

// View is one document and the tool whose results it draws.
type View struct {
	URI         string
	Name        string
	Title       string
	Description string
	// Tool is the tool whose definition names this view in _meta.ui.
	Tool string
	HTML string
}

var (
	//go:embed page.html
	page string
	//go:embed style.css
	style string
	//go:embed bridge.js
	bridge string
	//go:embed risk.js
	riskJS string
	//go:embed order.js
	orderJS string
)

// All returns the views, in a fixed order.
func All() []View {
	return []View{
		{
			URI: StockRiskURI, Name: "stock-risk", Title: "Stock risk",
			Description: "One panel per store: daily sales, the on-hand line, the stockout window and the earliest delivery.",
			Tool:        "korral_check_stock_risk",
			HTML:        document("Stock risk", riskJS),
		},
		{
			URI: OrderURI, Name: "order", Title: "Replenishment order",
			Description: "The order's preview (exact request, quantity check, days of cover, open orders) and its approval.",
			Tool:        "korral_raise_replenishment_order",
			HTML:        document("Replenishment order", orderJS),
		},
	}
}

func document(title, script string) string {
	return strings.NewReplacer("{{TITLE}}", title, "{{STYLE}}", style, "{{BRIDGE}}", bridge, "{{SCRIPT}}", script).Replace(page)
}

// ResourceMeta is the _meta of every view's resource: its content security
// policy names no domain, so a host lets the frame load nothing and connect
// nowhere; the view asks for the host's border.
func ResourceMeta() map[string]any {
	return map[string]any{"ui": map[string]any{
		"csp":           map[string]any{"connectDomains": []string{}, "resourceDomains": []string{}, "frameDomains": []string{}, "baseUriDomains": []string{}},
		"prefersBorder": true,
	}}
}

// ToolMeta is the _meta a tool carries for a host that declares the
// extension: the view to render beside its results, under ui.resourceUri
// and under the flat ui/resourceUri key hosts of the extension's first
// drafts read (the extension's own server helper writes both).
func ToolMeta(uri string) map[string]any {
	return map[string]any{"ui": map[string]any{"resourceUri": uri}, "ui/resourceUri": uri}
}

// Declared reports whether a client's capability extensions include MCP
// Apps.
func Declared(extensions map[string]any) bool {
	_, ok := extensions[Extension]
	return ok
}
