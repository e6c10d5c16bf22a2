package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/korral/storelink/mcpserver/internal/state"
)

const approverColumns = `id, name, stores, verifier, created_at, revoked_at`

// AddApprover implements state.Approvers. The name is taken by one INSERT …
// ON CONFLICT DO NOTHING on the index of active names, so of replicas racing
// to add one name exactly one does.
func (db *DB) AddApprover(ctx context.Context, a state.Approver) (state.Approver, error) {
	a, err := state.CheckNewApprover(a)
	if err != nil {
		return state.Approver{}, err
	}
	stores := a.Stores
	if stores == nil {
		stores = []string{}
	}
	rows, err := db.pool.Query(ctx, `INSERT INTO approvers (name, name_key, stores, verifier, created_at)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (name_key) WHERE revoked_at IS NULL DO NOTHING
		RETURNING `+approverColumns,
		a.Name, state.ApproverNameKey(a.Name), stores, a.Verifier, ts(a.CreatedAt))
	if err != nil {
		return state.Approver{}, db.fail("add approver "+a.Name, err)
	}
	got, err := collectApprovers(rows)
	if err != nil {
		return state.Approver{}, db.fail("add approver "+a.Name, err)
	}
	if len(got) == 0 {
		return state.Approver{}, fmt.Errorf("%w: %s", state.ErrApproverExists, a.Name)
	}
	return got[0], nil
}

// GetApprover implements state.Approvers.
func (db *DB) GetApprover(ctx context.Context, name string) (state.Approver, bool, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+approverColumns+` FROM approvers WHERE name_key = $1
		ORDER BY revoked_at IS NULL DESC, revoked_at DESC, id DESC LIMIT 1`, state.ApproverNameKey(name))
	if err != nil {
		return state.Approver{}, false, db.fail("get approver", err)
	}
	got, err := collectApprovers(rows)
	if err != nil {
		return state.Approver{}, false, db.fail("get approver", err)
	}
	if len(got) == 0 {
		return state.Approver{}, false, nil
	}
	return got[0], true, nil
}

// ListApprovers implements state.Approvers.
func (db *DB) ListApprovers(ctx context.Context) ([]state.Approver, error) {
	// COLLATE "C" orders the keys by code point, as SQLite does, whatever
	// the database's collation.
	rows, err := db.pool.Query(ctx, `SELECT `+approverColumns+` FROM approvers ORDER BY name_key COLLATE "C", id`)
	if err != nil {
		return nil, db.fail("list approvers", err)
	}
	got, err := collectApprovers(rows)
	if err != nil {
		return nil, db.fail("list approvers", err)
	}
	return got, nil
}

// RevokeApprover implements state.Approvers, as one conditional UPDATE.
func (db *DB) RevokeApprover(ctx context.Context, name string, now time.Time) (state.Approver, error) {
	rows, err := db.pool.Query(ctx, `UPDATE approvers SET revoked_at = $2 WHERE name_key = $1 AND revoked_at IS NULL
		RETURNING `+approverColumns, state.ApproverNameKey(name), ts(now))
	if err != nil {
		return state.Approver{}, db.fail("revoke approver", err)
	}
	got, err := collectApprovers(rows)
	if err != nil {
		return state.Approver{}, db.fail("revoke approver", err)
	}
	if len(got) == 0 {
		return state.Approver{}, fmt.Errorf("%w: %s", state.ErrApproverNotFound, name)
	}
	return got[0], nil
}

// collectApprovers scans rows of approverColumns.
func collectApprovers(rows pgx.Rows) ([]state.Approver, error) {
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (state.Approver, error) {
		var a state.Approver
		var revoked *time.Time
		if err := row.Scan(&a.ID, &a.Name, &a.Stores, &a.Verifier, &a.CreatedAt, &revoked); err != nil {
			return state.Approver{}, err
		}
		if len(a.Stores) == 0 {
			a.Stores = nil
		}
		a.CreatedAt = a.CreatedAt.UTC()
		if revoked != nil {
			a.RevokedAt = revoked.UTC()
		}
		return a, nil
	})
}
