// Package orderlink names the one route at which the approvals console
// shows a staged order, so that every door that links to it (the console's
// own router, the webhook notice, the URL elicitation and the tool's
// answer) agrees on it.
//
// The route takes the approval id (apr-…), the id the console decides by.
// A link carries nothing but the console's public base URL and that id:
// no token, no session, nothing that lets anyone in. Opening it still
// needs a log-in as a named approver, and it opens for every approver in
// the order's store scope, not only for whoever asked for the order.
package orderlink

import (
	"net/url"
	"strings"
)

// Prefix is the path before the approval id: the console routes
// GET Prefix+"{id}" to the order page.
const Prefix = "/orders/"

// Path is the console path of the order staged under approvalID.
func Path(approvalID string) string { return Prefix + url.PathEscape(approvalID) }

// URL is the order's page under the console's public base URL; "" when
// either is empty, which callers take as "no link".
func URL(consoleBase, approvalID string) string {
	if consoleBase == "" || approvalID == "" {
		return ""
	}
	return strings.TrimSuffix(consoleBase, "/") + Path(approvalID)
}
