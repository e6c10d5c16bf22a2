package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/korral/storelink/mcpserver/cliflag"
	"github.com/korral/storelink/mcpserver/internal/app"
	"github.com/korral/storelink/mcpserver/internal/state"
)

const approversUsage = `Usage: storelink-mcp approvers add NAME [--stores 47,102] [--secret-stdin]
       storelink-mcp approvers list
       storelink-mcp approvers revoke NAME

The named people who may release or refuse staged orders (WRITE_APPROVAL=required).
The state database (STATE_DB_PATH, or STATE_DATABASE_URL) keeps a slow salted
verifier of each approver's secret, never the secret, so every replica agrees on
who may approve and none holds a credential.

  add NAME      print a new secret once: hand it to the approver, it is not stored
                and cannot be shown again. --secret-stdin reads one instead (at
                least 16 characters). --stores limits the approver to those stores
                of the keyring; without it, every store.
  list          name, stores, created and revoked; never a secret.
  revoke NAME   the approver can no longer decide anything; the record stays.

To rotate a secret, revoke the approver and add the same name again.
`

// runApprovers manages the register of named approvers. Flags may come
// before or after the name.
func runApprovers(ctx context.Context, args []string, env Env) error {
	fs := flag.NewFlagSet("approvers", flag.ContinueOnError)
	stores := fs.String("stores", "", "add: limit the approver to these comma-separated store `ids` of the keyring (default: every store)")
	fromStdin := fs.Bool("secret-stdin", false, "add: read the secret from stdin instead of generating one")
	pos, err := cliflag.Parse(fs, args, approversUsage, env.Stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return usageErr(err)
	}
	if len(pos) == 0 {
		return usageError("approvers: want add NAME, list or revoke NAME (see --help)")
	}
	verb, pos := pos[0], pos[1:]
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch verb {
	case "add":
	case "list", "revoke":
		if len(set) > 0 {
			return usageError("approvers %s: --stores and --secret-stdin belong to add", verb)
		}
	default:
		return usageError("approvers: unknown action %q: want add, list or revoke (see --help)", verb)
	}
	want := 1
	if verb == "list" {
		want = 0
	}
	if len(pos) > want {
		return usageError("approvers %s: unexpected argument %q (a name with spaces needs quotes)", verb, pos[want])
	}
	if len(pos) < want {
		return usageError("approvers %s: missing the approver's NAME", verb)
	}
	var name string
	if want == 1 {
		if name, err = state.NormalizeApproverName(pos[0]); err != nil {
			return usageError("approvers %s: %s", verb, strings.TrimPrefix(err.Error(), state.ErrApproverInvalid.Error()+": "))
		}
	}
	var scope []string
	if set["stores"] {
		if scope, err = parseStoreList(*stores); err != nil {
			return usageError("approvers add: --stores: %v", err)
		}
	}
	var secret string
	if *fromStdin {
		if secret, err = readSecret(env.Stdin); err != nil {
			return usageError("approvers add: --secret-stdin: %v", err)
		}
	}

	a, err := app.New(ctx, env.options(), app.StateOnly)
	if err != nil {
		return err
	}
	defer a.Close()
	switch verb {
	case "add":
		return addApprover(ctx, env, a, name, scope, secret)
	case "list":
		return listApprovers(ctx, env, a)
	default:
		return revokeApprover(ctx, env, a, name)
	}
}

// parseStoreList splits "47, 102" into ids, checking only their form.
func parseStoreList(v string) ([]string, error) {
	var ids []string
	for _, id := range strings.Split(v, ",") {
		id = strings.TrimSpace(id)
		if id == "" {
			return nil, errors.New("an empty store id; give ids such as 47,102, or omit --stores for every store")
		}
		ids = append(ids, id)
	}
	ids, err := state.NormalizeStoreScope(ids)
	if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), state.ErrApproverInvalid.Error()+": "))
	}
	return ids, nil
}

// readSecret reads r to the end, less one trailing line break.
func readSecret(r io.Reader) (string, error) {
	if r == nil {
		return "", errors.New("no standard input")
	}
	b, err := io.ReadAll(io.LimitReader(r, app.MaxSecretLen+3))
	if err != nil {
		return "", fmt.Errorf("reading stdin: %v", err)
	}
	s := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if err := app.CheckSecret(s); err != nil {
		return "", errors.New(strings.TrimPrefix(err.Error(), app.ErrSecretInvalid.Error()+": "))
	}
	return s, nil
}
