// Package views holds the MCP Apps views (the io.modelcontextprotocol/ui
// extension): self-contained HTML documents a host renders beside a tool's
// result. A view must draw only the result's structured content: it loads
// nothing, reaches no network and calls no tool (ADR 0020). The shared
// parts (page.html, style.css, bridge.js) are inlined into each document.
package views

import (
	_ "embed"
	"encoding/json"
	"strings"

	"github.com/korral/storelink/mcpserver/internal/projection"
)

// Extension is the MCP Apps extension's identifier, which a host declares
// under capabilities.extensions.
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
			Description: "One panel per store: the decision in words, then today's stock falling to the stockout window, the close and the delivery, then the sales history with its flagged days.",
			Tool:        "korral_check_stock_risk",
			HTML:        document("Stock risk", riskJS),
		},
		{
			URI: OrderURI, Name: "order", Title: "Replenishment order",
			Description: "The order as the buyer reads it (product, store, units, delivery, the quantity check's verdict in words), the days of cover, open orders, and its approval.",
			Tool:        "korral_raise_replenishment_order",
			HTML:        document("Replenishment order", orderJS),
		},
	}
}

func document(title, script string) string {
	return strings.NewReplacer("{{TITLE}}", title, "{{STYLE}}", style, "{{BRIDGE}}", bridgeWithWords(), "{{SCRIPT}}", script).Replace(page)
}

// bridgeWithWords is bridge.js with the flags' words written in from
// package projection (FlagWords, DayFlagWords), so that the views, the
// console and the answers name each flag in the same words, written once.
func bridgeWithWords() string {
	var flags, days []string
	for _, f := range projection.Flags() {
		flags = append(flags, string(f)+": "+jsString(projection.FlagWords(f)))
	}
	for _, f := range projection.DayFlags() {
		days = append(days, string(f)+": "+jsString(projection.DayFlagWords(f)))
	}
	return strings.NewReplacer("{{FLAG_WORDS}}", jsObject(flags), "{{DAY_WORDS}}", jsObject(days)).Replace(bridge)
}

// jsObject is an object literal of the entries, one a line.
func jsObject(entries []string) string {
	return "{\n    " + strings.Join(entries, ",\n    ") + "\n  }"
}

// jsString is s as a JavaScript string literal; json.Marshal escapes <, >
// and &, so no text can end the script element.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// ResourceMeta is the _meta of every view's resource: a content security
// policy naming no domain, and a request for the host's border.
func ResourceMeta() map[string]any {
	return map[string]any{"ui": map[string]any{
		"csp":           map[string]any{"connectDomains": []string{}, "resourceDomains": []string{}, "frameDomains": []string{}, "baseUriDomains": []string{}},
		"prefersBorder": true,
	}}
}

// ToolMeta is the _meta a tool carries for a host that declares the
// extension: the view's URI under ui.resourceUri and the older flat
// ui/resourceUri key.
func ToolMeta(uri string) map[string]any {
	return map[string]any{"ui": map[string]any{"resourceUri": uri}, "ui/resourceUri": uri}
}

// Declared reports whether a client's extensions include MCP Apps.
func Declared(extensions map[string]any) bool {
	_, ok := extensions[Extension]
	return ok
}
