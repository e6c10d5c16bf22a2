package notify

import (
	"fmt"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/orderlink"
	"github.com/korral/storelink/mcpserver/internal/textsafe"
)

// EventStaged is the Payload's event of an order staged for approval.
const EventStaged = "approval.staged"

// Bounds, in characters, of the notice's text fields. Names come from
// StoreLink, where anyone may type anything.
const (
	maxID   = 64
	maxName = 120
	maxText = 1000
)

// Notice describes a staged order. It holds no key or secret, and none may
// be added: the notice goes to a third party.
type Notice struct {
	ApprovalID    string
	StoreID       string
	StoreName     string // may still carry the server's untrusted-text markers
	ProductName   string // likewise
	SKU           string
	QuantityUnits int
	ExpiresAt     time.Time
	// RequestedBy is the requester's name in the audit trail, never a
	// credential.
	RequestedBy string
}

// Payload is the JSON body of a notice, for receivers to decode.
type Payload struct {
	// Event is EventStaged.
	Event      string `json:"event"`
	ApprovalID string `json:"approval_id"`
	StoreID    string `json:"store_id"`
	StoreName  string `json:"store_name,omitempty"`
	// ProductName and StoreName are plain text: no markers, control
	// characters escaped (\n, \u202e), at most 120 characters.
	ProductName   string `json:"product_name,omitempty"`
	SKU           string `json:"sku"`
	QuantityUnits int    `json:"quantity_units"`
	// ExpiresAt is when the approval lapses, RFC 3339 in UTC.
	ExpiresAt string `json:"expires_at"`
	// ConsoleURL opens the order in the approvals console; absent when no
	// console URL is configured.
	ConsoleURL  string `json:"console_url,omitempty"`
	RequestedBy string `json:"requested_by,omitempty"`
	// Text is one sentence for people; chat webhooks show it as the message.
	Text string `json:"text"`
}

func (n *Notifier) payload(no Notice) Payload {
	p := Payload{
		Event:         EventStaged,
		ApprovalID:    clean(no.ApprovalID, maxID),
		StoreID:       clean(no.StoreID, maxID),
		StoreName:     clean(no.StoreName, maxName),
		ProductName:   clean(no.ProductName, maxName),
		SKU:           clean(no.SKU, maxID),
		QuantityUnits: no.QuantityUnits,
		ExpiresAt:     no.ExpiresAt.UTC().Format(time.RFC3339),
		RequestedBy:   clean(no.RequestedBy, maxName),
	}
	if n.opts.ConsoleURL != "" && p.ApprovalID != "" {
		p.ConsoleURL = orderlink.URL(n.opts.ConsoleURL, p.ApprovalID)
	}
	p.Text = text(p, no.ExpiresAt, n.opts.Now())
	return p
}

// text writes the chat sentence, e.g. "Order awaiting approval: 24 ×
// Madeta butter 250g (SKU 8594001234) for store 47 Praha Smíchov,
// requested by dairy-team, expires 16:30 UTC. Open: https://…".
func text(p Payload, expires, now time.Time) string {
	product := "SKU " + chat(p.SKU)
	if p.ProductName != "" {
		product = chat(p.ProductName) + " (SKU " + chat(p.SKU) + ")"
	}
	store := "store " + chat(p.StoreID)
	if p.StoreName != "" {
		store += " " + chat(p.StoreName)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Order awaiting approval: %d × %s for %s", p.QuantityUnits, product, store)
	if p.RequestedBy != "" {
		b.WriteString(", requested by " + chat(p.RequestedBy))
	}
	b.WriteString(", expires " + when(expires, now) + ".")
	if p.ConsoleURL != "" {
		b.WriteString(" Open: " + p.ConsoleURL)
	} else {
		b.WriteString(" Approval id: " + chat(p.ApprovalID) + ".")
	}
	return cut(b.String(), maxText)
}

// when formats the expiry: the time alone on the same UTC day, else with
// the day.
func when(t, now time.Time) string {
	t, now = t.UTC(), now.UTC()
	if t.Year() == now.Year() && t.YearDay() == now.YearDay() {
		return t.Format("15:04 UTC")
	}
	return t.Format("Mon 2 Jan 15:04 UTC")
}

// clean strips the server's markers, escapes control characters and cuts
// at max characters with "…". The bound includes escapes.
func clean(s string, max int) string {
	return cut(textsafe.Escape(stripMarkers(s)), max)
}

func cut(s string, max int) string {
	n := 0
	for i := range s {
		if n == max {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// The server wraps untrusted text as ⟦untrusted:TAG⟧text⟦/TAG⟧ and turns
// marker brackets inside it into square brackets (mcpserver's untrusted.go).
const (
	markerOpen  = "⟦untrusted:"
	markerClose = "⟧"
)

var defuseBrackets = strings.NewReplacer("⟦", "[", "⟧", "]", "〚", "[", "〛", "]")

// stripMarkers replaces every well-formed marker in s by its inner text,
// then replaces any bracket left, so no marker reaches the receiver.
func stripMarkers(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, markerOpen)
		if i < 0 {
			break
		}
		rest := s[i+len(markerOpen):]
		end := strings.Index(rest, markerClose)
		if end <= 0 {
			break
		}
		tag := rest[:end]
		body := rest[end+len(markerClose):]
		j := strings.Index(body, "⟦/"+tag+markerClose)
		if j < 0 {
			break
		}
		b.WriteString(s[:i])
		b.WriteString(body[:j])
		s = body[j+len("⟦/"+tag+markerClose):]
	}
	b.WriteString(s)
	return defuseBrackets.Replace(b.String())
}

// chat keeps a value from being read as chat markup (Slack's <!channel> and
// <url|label>, Teams' [label](url)) by replacing it with lookalikes.
var chat = strings.NewReplacer("<", "‹", ">", "›", "[", "(", "]", ")").Replace
