package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/korral/storelink/mcpserver/cliflag"
	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/approver"
	"github.com/korral/storelink/mcpserver/internal/callid"
	"github.com/korral/storelink/mcpserver/internal/config"
	"github.com/korral/storelink/mcpserver/internal/replenish"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/textsafe"
)

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}

// shown is how a stored value appears in a human-facing table: agents and
// clients wrote it, so a line break, a tab or a terminal escape in it must
// show as an escape, never start a forged row or move the cursor. JSON
// output needs no such care: its encoder escapes control characters.
func shown(s string) string { return textsafe.Escape(s) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// runApprovals is the human side of the write path: list, show, approve or
// reject staged orders, and resolve an order whose outcome is unknown.
// Deciding needs a named approver (`approvers add`) and their secret, which
// the server checks against its own register; the agent never sees either.
// Flags may come before or after the id.
func runApprovals(ctx context.Context, args []string, env Env) error {
	fs := flag.NewFlagSet("approvals", flag.ContinueOnError)
	who := fs.String("approver", "", "approve, reject, resolve: the approver deciding, as `approvers add` registered them")
	secretFile := fs.String("secret-file", "", "file holding the approver's secret (else --secret-stdin, else APPROVER_SECRET)")
	secretStdin := fs.Bool("secret-stdin", false, "read the approver's secret from stdin")
	// --as named whoever one liked; it is refused with the way forward.
	as := fs.String("as", "", "removed: use --approver")
	credFile := fs.String("credential-file", "", "removed: use --secret-file")
	all := fs.Bool("all", false, "list: every staged order, decided and lapsed ones too")
	raised := fs.String("raised", "", "resolve: the StoreLink order id that the order became")
	notRaised := fs.Bool("not-raised", false, "resolve: StoreLink holds no such order")
	reason := fs.String("reason", "", "reject: why the order is turned down (required; the audit trail keeps it)")
	pos, err := cliflag.Parse(fs, args, synopses["approvals"], env.Stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	if len(pos) == 0 {
		return &ExitError{Code: 2, Err: errors.New("approvals: want list [--all], show ID, approve ID, reject ID or resolve KEY (see --help)")}
	}
	verb, pos := pos[0], pos[1:]
	if verb == "list" && len(pos) > 0 || verb != "list" && len(pos) > 1 {
		return &ExitError{Code: 2, Err: fmt.Errorf("approvals %s: unexpected argument %q", verb, pos[len(pos)-1])}
	}
	id := ""
	if len(pos) == 1 {
		id = pos[0]
	}
	if verb != "list" && id == "" {
		return &ExitError{Code: 2, Err: fmt.Errorf("approvals %s: missing approval id", verb)}
	}
	switch verb {
	case "list", "show":
		a, err := loadConfig(env)
		if err != nil {
			return err
		}
		defer a.Close()
		flow := a.workflow(env, nil)
		if verb == "list" {
			// Listing only reads: a lapsed approval reads as expired here
			// and is written down by the next decision about it.
			entries, err := flow.Staged(ctx, *all)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "APPROVAL ID\tSTATE\tSTORE\tSKU\tUNITS\tREQUESTED BY\tEXPIRES\tREASON")
			for _, e := range entries {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", shown(e.ApprovalID), e.State, shown(e.StoreID), shown(e.SKU), e.QuantityUnits, shown(e.RequestedBy), e.ApprovalExpiresAt.Format(time.RFC3339), shown(e.Reason))
			}
			if len(entries) == 0 {
				fmt.Fprintln(tw, "(no orders await approval)")
			}
			return tw.Flush()
		}
		e, err := flow.Show(ctx, id)
		if err != nil {
			return personError(err)
		}
		return json.NewEncoder(env.Stdout).Encode(entryJSON(e))
	case "approve", "reject", "resolve":
		if *as != "" {
			return usageError("approvals %s: --as is gone, since it named whoever one liked: register each approver once with `storelink-mcp approvers add NAME`, then decide with --approver NAME and their secret (--secret-file FILE, --secret-stdin or APPROVER_SECRET)", verb)
		}
		if *credFile != "" {
			return usageError("approvals %s: --credential-file is gone: give the approver's own secret with --secret-file FILE (see `storelink-mcp approvers add`)", verb)
		}
		if strings.TrimSpace(*who) == "" {
			return usageError("approvals %s: --approver NAME is required: the approver registered with `storelink-mcp approvers add NAME`", verb)
		}
		if *secretFile != "" && *secretStdin {
			return usageError("approvals %s: give one of --secret-file and --secret-stdin", verb)
		}
		switch {
		case verb == "reject" && strings.TrimSpace(*reason) == "":
			return usageError("approvals reject: --reason is required, so the requester and the buyer learn why the order was turned down")
		case verb != "reject" && *reason != "":
			return usageError("approvals %s: --reason is for reject only", verb)
		}
		p := person{name: strings.TrimSpace(*who), secretFile: *secretFile, secretStdin: *secretStdin, reason: *reason}
		if verb == "resolve" {
			if (*raised == "") == !*notRaised {
				return &ExitError{Code: 2, Err: errors.New("approvals resolve: give exactly one of --raised ORDER_ID or --not-raised")}
			}
			return resolve(ctx, env, id, p, *raised)
		}
		return decide(ctx, env, verb, id, p)
	default:
		return &ExitError{Code: 2, Err: fmt.Errorf("approvals: unknown action %q", verb)}
	}
}

// entryJSON is a staged order as `approvals show` prints it. Its
// approval_binding fingerprints the request shown at its StoreLink
// (state.ApprovalBinding); an approval sends only that.
func entryJSON(e state.Entry) map[string]any {
	return map[string]any{"approval_id": e.ApprovalID, "idempotency_key": e.IdempotencyKey, "state": e.State, "store_id": e.StoreID,
		"sku": e.SKU, "quantity_units": e.QuantityUnits, "reason": e.Reason, "requested_by": e.RequestedBy, "decided_by": e.DecidedBy,
		"order_id": e.OrderID, "expires_at": e.ApprovalExpiresAt.Format(time.RFC3339), "created_at": e.CreatedAt.Format(time.RFC3339),
		"storelink": e.UpstreamID, "approval_binding": e.ApprovalBinding()}
}

// person is who runs a decision: the approver's name and where their
// secret comes from.
type person struct {
	name        string
	secretFile  string
	secretStdin bool
	// reason is a rejection's reason.
	reason string
}

// secret is the approver's secret: from --secret-file, else stdin with
// --secret-stdin, else APPROVER_SECRET (fromEnv, as config read it). One
// trailing line break is not part of it. It is never echoed.
func (p person) secret(env Env, verb, fromEnv string) (string, error) {
	var raw string
	switch {
	case p.secretFile != "":
		b, err := env.ReadFile(p.secretFile)
		if err != nil {
			return "", usageError("approvals %s: --secret-file: cannot read %s", verb, p.secretFile)
		}
		raw = string(b)
	case p.secretStdin:
		if env.Stdin == nil {
			return "", usageError("approvals %s: --secret-stdin: no standard input", verb)
		}
		b, err := io.ReadAll(io.LimitReader(env.Stdin, approver.MaxSecretLen+3))
		if err != nil {
			return "", usageError("approvals %s: --secret-stdin: reading stdin: %v", verb, err)
		}
		raw = string(b)
	default:
		raw = fromEnv
	}
	s := strings.TrimSuffix(strings.TrimSuffix(raw, "\n"), "\r")
	if s == "" {
		return "", usageError("approvals %s: no secret for approver %s: give it with --secret-file FILE, --secret-stdin, or APPROVER_SECRET", verb, p.name)
	}
	return s, nil
}

// approvers is the verifier of the named approvers in a's register.
func (a *app) approvers() replenish.Verifier {
	return replenish.Named{Approvers: approver.New(a.db)}
}

// workflow is the order workflow as a person's command drives it: the
// gate of this environment's settings, the ledger, and the StoreLink each
// entry was recorded for (reach), with verifier checking the person.
func (a *app) workflow(env Env, verifier replenish.Verifier) *replenish.Workflow {
	cfg := a.cfg
	f := &replenish.Workflow{
		Ledger:   a.db,
		Audit:    a.db,
		Verifier: verifier,
		Now:      a.now,
		Log:      a.log,
		Gate: replenish.Gate{
			AllowWrites:   cfg.AllowWrites && !cfg.ReadOnly,
			MaxOrderUnits: int64(cfg.MaxOrderUnits),
			// The keyring reach connected with, read when the gate runs.
			Holds: func(storeID string) bool {
				if a.keys == nil {
					return false
				}
				_, ok := a.keys.Key(storeID)
				return ok
			},
		},
		Reach: func(ctx context.Context, e state.Entry) (replenish.Upstream, string, error) {
			if err := reach(ctx, env, a, e); err != nil {
				return nil, "", err
			}
			return a.up, a.upstreamID, nil
		},
	}
	if a.recorder != nil {
		f.Recorder = a.recorder
	}
	return f
}

// personError is a workflow error as the command's answer: exit 1, except
// where the cause is already an exit of its own (a configuration problem
// found while reaching StoreLink).
func personError(err error) error {
	var exit *ExitError
	if errors.As(err, &exit) {
		return exit
	}
	if errors.Is(err, replenish.ErrReasonRequired) {
		return &ExitError{Code: 2, Err: err}
	}
	var ref *replenish.Refusal
	var nf *replenish.NotFoundError
	var np *replenish.NotPendingError
	if errors.Is(err, replenish.ErrDenied) || errors.As(err, &ref) || errors.As(err, &nf) || errors.As(err, &np) {
		return &ExitError{Code: 1, Err: err}
	}
	return err
}

func decide(ctx context.Context, env Env, verb, id string, p person) error {
	a, err := loadConfig(env)
	if err != nil {
		return err
	}
	defer a.Close()
	presented, err := p.secret(env, verb, a.cfg.ApproverSecret)
	if err != nil {
		return err
	}
	flow := a.workflow(env, a.approvers())
	d := replenish.Decision{ApprovalID: id, Name: p.name, Secret: presented, Reason: p.reason}
	if verb == "reject" {
		if _, err := flow.Reject(ctx, d); err != nil {
			return personError(err)
		}
		fmt.Fprintf(env.Stdout, "rejected %s\n", id)
		return nil
	}
	approved, err := flow.Approve(ctx, d)
	if err != nil {
		return personError(err)
	}
	e, sent := approved.Entry, approved.Sent
	o := sent.Order
	fmt.Fprintf(env.Stdout, "approved %s: order %s raised (%s)\n", id, o.ID, o.Status)
	if !sent.Recorded {
		// The order exists at StoreLink; only its record is behind.
		switch {
		case sent.Conflict != "":
			fmt.Fprintf(env.Stdout, "warning: the ledger holds another outcome for %s, left as it was: %s\n", e.IdempotencyKey, sent.Conflict)
		case sent.Journaled:
			fmt.Fprintf(env.Stdout, "warning: the ledger could not record order %s yet; the outcome journal %s keeps it, and the next start or doctor records it\n", o.ID, a.recorder.Journal.Path())
		default:
			fmt.Fprintf(env.Stdout, "warning: neither the ledger nor the outcome journal could record order %s: record it with storelink-mcp approvals resolve %s --raised %s\n", o.ID, e.IdempotencyKey, o.ID)
		}
	}
	return nil
}

// reach connects a to the StoreLink the entry was recorded for and proves
// that the store's key opens it, before anything in the ledger changes. The
// StoreLink is the one the entry names, so an approver needs no
// UPSTREAM_BASE_URL, only the keyring with that store's key; a configured
// UPSTREAM_BASE_URL must name the same StoreLink. An embedded StoreLink
// lives inside one server process and cannot be reached from here.
func reach(ctx context.Context, env Env, a *app, e state.Entry) error {
	refuse := func(format string, args ...any) error {
		return &ExitError{Code: 1, Err: fmt.Errorf(format+"; nothing changed", args...)}
	}
	target := e.UpstreamID
	switch configured := a.cfg.UpstreamBaseURL; {
	case strings.HasPrefix(target, embeddedPrefix):
		return refuse("%s was staged for the embedded mock StoreLink inside one server process, which no other process can reach; reject it, and stage orders against a real StoreLink (UPSTREAM_BASE_URL)", orDash(e.ApprovalID))
	case target == "" && configured == "":
		return refuse("the ledger does not say which StoreLink %s was recorded for: set UPSTREAM_BASE_URL to the StoreLink the server uses", e.IdempotencyKey)
	case target == "":
		target = upstreamIdentity(configured)
	case configured != "" && upstreamIdentity(configured) != target:
		return refuse("%s was recorded for the StoreLink at %s, but UPSTREAM_BASE_URL names %s: unset it or point it at %s", e.IdempotencyKey, target, upstreamIdentity(configured), target)
	}
	if a.cfg.Keyring == nil {
		return refuse("no key for store %s: set STORELINK_KEYRING_FILE (or STORELINK_KEYRING) to a keyring holding store %s's key for %s", e.StoreID, e.StoreID, target)
	}
	if err := a.connect(env, target, a.cfg.Keyring); err != nil {
		return err
	}
	a.upstreamID = target
	if _, ok := a.keys.Key(e.StoreID); !ok {
		return refuse("the keyring holds no key for store %s: add store %s's key for %s to it", e.StoreID, e.StoreID, target)
	}
	if _, err := a.up.Store(ctx, e.StoreID); err != nil {
		ae := apperr.From(err)
		return refuse("StoreLink at %s could not be used with store %s's key (%s: %s)", target, e.StoreID, ae.Code, ae.Message)
	}
	return nil
}

// embeddedPrefix begins the identity of an embedded StoreLink.
const embeddedPrefix = "embedded:"

// upstreamIdentity names a StoreLink for the ledger: its base URL without
// user info, query or trailing slash (nothing secret is kept), or, for the
// embedded mock, a name of its own, since every process starts its own.
func upstreamIdentity(baseURL string) string {
	if baseURL == "" {
		return embeddedPrefix + callid.New()
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		return baseURL
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	return strings.TrimRight(u.String(), "/")
}

// resolve records what a person found at StoreLink about an order whose
// outcome is unknown (or that a crash left sending): the order id it became,
// or that StoreLink holds no such order (replenish.Workflow.Resolve).
func resolve(ctx context.Context, env Env, key string, p person, orderID string) error {
	a, err := loadConfig(env)
	if err != nil {
		return err
	}
	defer a.Close()
	// In approval mode, deciding anything about an order needs a verified
	// approver; elsewhere the state file's owner is the person in charge,
	// and the name is recorded as given.
	var verifier replenish.Verifier = replenish.Unverified{}
	presented := ""
	if a.cfg.WriteApproval == config.ApprovalRequired {
		if presented, err = p.secret(env, "resolve", a.cfg.ApproverSecret); err != nil {
			return err
		}
		verifier = a.approvers()
	}
	got, err := a.workflow(env, verifier).Resolve(ctx, replenish.Resolution{Ref: key, Name: p.name, Secret: presented, OrderID: orderID})
	if err != nil {
		var exit *ExitError
		if errors.As(err, &exit) {
			return exit
		}
		return &ExitError{Code: 1, Err: err}
	}
	fmt.Fprintf(env.Stdout, "resolved %s: %s\n", got.IdempotencyKey, got.State)
	return nil
}
