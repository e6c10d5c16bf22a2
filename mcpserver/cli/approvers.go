package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/korral/storelink/mcpserver/cliflag"
	"github.com/korral/storelink/mcpserver/internal/approver"
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
		return &ExitError{Code: 2, Err: err}
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

	a, err := loadConfig(env)
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

// parseStoreList splits "47, 102" into ids. Their form is checked here,
// their presence in the keyring once the configuration is loaded.
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

// readSecret reads a secret from r: everything up to the end, less one
// trailing line break, so that `echo … |` and a file with a final newline
// both work.
func readSecret(r io.Reader) (string, error) {
	if r == nil {
		return "", errors.New("no standard input")
	}
	b, err := io.ReadAll(io.LimitReader(r, approver.MaxSecretLen+3))
	if err != nil {
		return "", fmt.Errorf("reading stdin: %v", err)
	}
	s := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if err := approver.CheckSecret(s); err != nil {
		return "", errors.New(strings.TrimPrefix(err.Error(), approver.ErrSecretInvalid.Error()+": "))
	}
	return s, nil
}

func addApprover(ctx context.Context, env Env, a *app, name string, scope []string, secret string) error {
	if len(scope) > 0 {
		ids, err := keyringStores(ctx, env, a)
		if err != nil {
			return err
		}
		for _, id := range scope {
			if !slices.Contains(ids, id) {
				return usageError("approvers add: store %s is not in the keyring (its stores: %s); nothing was added", id, strings.Join(ids, ", "))
			}
		}
	}
	generated := secret == ""
	if generated {
		secret = approver.NewSecret()
	}
	rec, err := approver.New(a.db).Add(ctx, name, scope, secret, time.Now())
	switch {
	case errors.Is(err, state.ErrApproverExists):
		return &ExitError{Code: 1, Err: fmt.Errorf("approvers add: an active approver is already named %s (names are compared ignoring case); nothing was added. To give them a new secret, revoke and add again", name)}
	case errors.Is(err, state.ErrApproverInvalid) || errors.Is(err, approver.ErrSecretInvalid):
		return usageError("approvers add: %v", err)
	case err != nil:
		return &ExitError{Code: 1, Err: fmt.Errorf("approvers add: %w; nothing was added", err)}
	}
	fmt.Fprintf(env.Stdout, "added approver %s for %s\n", shown(rec.Name), scopeText(rec.Stores))
	if !generated {
		_, err = fmt.Fprintln(env.Stdout, "The secret read from stdin is their secret; only its verifier was stored.")
		return err
	}
	fmt.Fprintf(env.Stdout, "Hand this secret to %s privately. It is shown once and not stored; if it is lost, revoke %s and add them again:\n", shown(rec.Name), shown(rec.Name))
	_, err = fmt.Fprintln(env.Stdout, secret)
	return err
}

// keyringStores are the store ids of the deployment's keyring: the
// configured one, or the embedded demo StoreLink's when none is configured.
func keyringStores(ctx context.Context, env Env, a *app) ([]string, error) {
	if kr := a.cfg.Keyring; kr != nil {
		return kr.StoreIDs(), nil
	}
	if a.cfg.UpstreamBaseURL != "" || env.Embedded == nil {
		return nil, usageError("approvers add: --stores needs the keyring to check the ids against: set STORELINK_KEYRING_FILE (or STORELINK_KEYRING), or omit --stores for every store")
	}
	emb, err := env.Embedded(ctx, time.Time{})
	if err != nil {
		return nil, fmt.Errorf("start embedded StoreLink: %w", err)
	}
	defer emb.Close()
	kr, err := keyringFromMap(emb.Keyring)
	if err != nil {
		return nil, err
	}
	return kr.StoreIDs(), nil
}

func scopeText(stores []string) string {
	if len(stores) == 0 {
		return "every store"
	}
	return "store(s) " + strings.Join(stores, ", ")
}

func listApprovers(ctx context.Context, env Env, a *app) error {
	list, err := a.db.ListApprovers(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTORES\tCREATED\tREVOKED")
	for _, r := range list {
		stores, revoked := "all", "-"
		if len(r.Stores) > 0 {
			stores = strings.Join(r.Stores, ",")
		}
		if r.Revoked() {
			revoked = r.RevokedAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", shown(r.Name), stores, r.CreatedAt.Format(time.RFC3339), revoked)
	}
	if len(list) == 0 {
		fmt.Fprintln(tw, "(no approvers; add one with: storelink-mcp approvers add NAME)")
	}
	return tw.Flush()
}

func revokeApprover(ctx context.Context, env Env, a *app, name string) error {
	rec, err := a.db.RevokeApprover(ctx, name, time.Now())
	if errors.Is(err, state.ErrApproverNotFound) {
		if old, found, gerr := a.db.GetApprover(ctx, name); gerr == nil && found {
			return &ExitError{Code: 1, Err: fmt.Errorf("approvers revoke: %s was already revoked at %s; nothing changed", shown(old.Name), old.RevokedAt.Format(time.RFC3339))}
		}
		return &ExitError{Code: 1, Err: fmt.Errorf("approvers revoke: no approver is named %s (see storelink-mcp approvers list); nothing changed", name)}
	}
	if err != nil {
		return &ExitError{Code: 1, Err: fmt.Errorf("approvers revoke: %w; nothing changed", err)}
	}
	_, err = fmt.Fprintf(env.Stdout, "revoked approver %s at %s: their secret no longer approves anything\n", shown(rec.Name), rec.RevokedAt.Format(time.RFC3339))
	return err
}
