package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/korral/storelink/mcpserver/cliflag"
	"github.com/korral/storelink/mcpserver/internal/app"
)

const approvalsSynopsis = `Usage: storelink-mcp approvals list [--all]|show ID|approve ID|reject ID|resolve KEY [flags]

Release or refuse staged orders (WRITE_APPROVAL=required), and record what StoreLink
holds for an order whose outcome is unknown. Deciding needs a named approver
(storelink-mcp approvers add NAME) and their secret, which the server checks against
its own register: --approver NAME with --secret-file FILE, --secret-stdin, or
APPROVER_SECRET. An approver cannot approve an order requested under a bearer token
of the same name. A rejection needs --reason, which the audit trail keeps. Flags may
come before or after the id.
`

// runApprovals lists, shows, approves or rejects staged orders, and
// resolves orders whose outcome is unknown. Deciding needs a named approver
// and their secret. Flags may come before or after the id.
func runApprovals(ctx context.Context, args []string, env Env) error {
	fs := flag.NewFlagSet("approvals", flag.ContinueOnError)
	who := fs.String("approver", "", "approve, reject, resolve: the approver deciding, as `approvers add` registered them")
	secretFile := fs.String("secret-file", "", "file holding the approver's secret (else --secret-stdin, else APPROVER_SECRET)")
	secretStdin := fs.Bool("secret-stdin", false, "read the approver's secret from stdin")
	// --as is removed; it is refused with the replacement.
	as := fs.String("as", "", "removed: use --approver")
	credFile := fs.String("credential-file", "", "removed: use --secret-file")
	all := fs.Bool("all", false, "list: every staged order, decided and lapsed ones too")
	raised := fs.String("raised", "", "resolve: the StoreLink order id that the order became")
	notRaised := fs.Bool("not-raised", false, "resolve: StoreLink holds no such order")
	reason := fs.String("reason", "", "reject: why the order is turned down (required; the audit trail keeps it)")
	pos, err := cliflag.Parse(fs, args, approvalsSynopsis, env.Stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return usageErr(err)
	}
	if len(pos) == 0 {
		return usageError("approvals: want list [--all], show ID, approve ID, reject ID or resolve KEY (see --help)")
	}
	verb, pos := pos[0], pos[1:]
	if verb == "list" && len(pos) > 0 || verb != "list" && len(pos) > 1 {
		return usageError("approvals %s: unexpected argument %q", verb, pos[len(pos)-1])
	}
	id := ""
	if len(pos) == 1 {
		id = pos[0]
	}
	if verb != "list" && id == "" {
		return usageError("approvals %s: missing approval id", verb)
	}
	switch verb {
	case "list", "show":
		a, err := app.New(ctx, env.options(), app.StateOnly)
		if err != nil {
			return err
		}
		defer a.Close()
		if verb == "list" {
			// Listing only reads; lapsed approvals show as expired.
			entries, err := a.Staged(ctx, *all)
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
		e, err := a.Show(ctx, id)
		if err != nil {
			return err
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
				return usageError("approvals resolve: give exactly one of --raised ORDER_ID or --not-raised")
			}
			return resolve(ctx, env, id, p, *raised)
		}
		return decide(ctx, env, verb, id, p)
	default:
		return usageError("approvals: unknown action %q", verb)
	}
}
