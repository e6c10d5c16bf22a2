package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
)

var _ state.Approvers = (*DB)(nil)

const approverColumns = `id, name, stores, verifier, created_at, revoked_at`

// AddApprover implements state.Approvers.
func (db *DB) AddApprover(ctx context.Context, a state.Approver) (state.Approver, error) {
	a, err := state.CheckNewApprover(a)
	if err != nil {
		return state.Approver{}, err
	}
	key := state.ApproverNameKey(a.Name)
	err = db.write(ctx, func(tx *sql.Tx) error {
		// The partial unique index decides; this read only gives the
		// refusal its own error instead of SQLite's constraint text.
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM approvers WHERE name_key = ? AND revoked_at IS NULL`, key).Scan(&n); err != nil {
			return fmt.Errorf("state: add approver: %w", err)
		}
		if n > 0 {
			return fmt.Errorf("%w: %s", state.ErrApproverExists, a.Name)
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO approvers (name, name_key, stores, verifier, created_at) VALUES (?, ?, ?, ?, ?)`,
			a.Name, key, strings.Join(a.Stores, ","), a.Verifier, formatTime(a.CreatedAt))
		if err != nil {
			return fmt.Errorf("state: add approver: %w", err)
		}
		a.ID, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return state.Approver{}, err
	}
	a.CreatedAt = a.CreatedAt.UTC()
	return a, nil
}

// GetApprover implements state.Approvers.
func (db *DB) GetApprover(ctx context.Context, name string) (state.Approver, bool, error) {
	as, err := readApprovers(ctx, db.sql, `WHERE name_key = ? ORDER BY revoked_at IS NULL DESC, revoked_at DESC, id DESC LIMIT 1`, state.ApproverNameKey(name))
	if err != nil || len(as) == 0 {
		return state.Approver{}, false, err
	}
	return as[0], true, nil
}

// ListApprovers implements state.Approvers.
func (db *DB) ListApprovers(ctx context.Context) ([]state.Approver, error) {
	return readApprovers(ctx, db.sql, `ORDER BY name_key, id`)
}

// RevokeApprover implements state.Approvers.
func (db *DB) RevokeApprover(ctx context.Context, name string, now time.Time) (state.Approver, error) {
	var got state.Approver
	err := db.write(ctx, func(tx *sql.Tx) error {
		as, err := readApprovers(ctx, tx, `WHERE name_key = ? AND revoked_at IS NULL`, state.ApproverNameKey(name))
		if err != nil {
			return err
		}
		if len(as) == 0 {
			return fmt.Errorf("%w: %s", state.ErrApproverNotFound, name)
		}
		got = as[0]
		if _, err := tx.ExecContext(ctx, `UPDATE approvers SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`, formatTime(now), got.ID); err != nil {
			return fmt.Errorf("state: revoke approver %s: %w", got.Name, err)
		}
		return nil
	})
	if err != nil {
		return state.Approver{}, err
	}
	got.RevokedAt = now.UTC()
	return got, nil
}

// readApprovers returns the records selected by where.
func readApprovers(ctx context.Context, q querier, where string, args ...any) ([]state.Approver, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+approverColumns+` FROM approvers `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("state: read approvers: %w", err)
	}
	defer rows.Close()
	var out []state.Approver
	for rows.Next() {
		var a state.Approver
		var stores, created string
		var revoked sql.NullString
		if err := rows.Scan(&a.ID, &a.Name, &stores, &a.Verifier, &created, &revoked); err != nil {
			return nil, fmt.Errorf("state: read approvers: %w", err)
		}
		if stores != "" {
			a.Stores = strings.Split(stores, ",")
		}
		if a.CreatedAt, err = parseTime(created); err != nil {
			return nil, err
		}
		if revoked.Valid {
			if a.RevokedAt, err = parseTime(revoked.String); err != nil {
				return nil, err
			}
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("state: read approvers: %w", err)
	}
	return out, nil
}
