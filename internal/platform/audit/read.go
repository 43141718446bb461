package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Reading the trail: List answers the context tenant's rows about the targets a reader names, in
// the order they were written, a page at a time. Row-level security scopes it as it scopes the
// writes; the query filters by the tenant too, because a platform admin's transaction sees every
// tenant's rows.

// Target is one kind of row (TargetType) and the ids of those a reader asks about: IDs, or the
// ids a subquery selects (In, with its arguments as ? placeholders), for a set too large to send
// (a payroll run's 10,000 entries). In is the caller's SQL, never a caller's input.
type Target struct {
	Type   string
	IDs    []string
	In     string
	InArgs []any
}

// Query selects rows for List.
type Query struct {
	// Targets: rows about any of these. At least one, each with at least one id.
	Targets []Target
	// After is the previous page's last row id (0: from the first row).
	After int64
	// Limit is the page size, 1 to MaxPage.
	Limit int
}

// MaxPage bounds one List.
const MaxPage = 1000

// ErrQuery is a query List refuses (no target, an empty one, a limit out of bounds).
var ErrQuery = errors.New("audit: invalid query")

// Row is one audit row as a reader sees it.
type Row struct {
	ID         int64           `bun:"id"`
	TenantID   string          `bun:"tenant_id"`
	Actor      string          `bun:"actor"`
	Action     string          `bun:"action"`
	Outcome    Outcome         `bun:"outcome"`
	TargetType string          `bun:"target_type"`
	TargetID   string          `bun:"target_id"`
	Details    json.RawMessage `bun:"details,type:jsonb"`
	RequestID  string          `bun:"request_id"`
	OccurredAt time.Time       `bun:"occurred_at"`
}

// rowColumns selects a Row.
const rowColumns = `id, tenant_id, actor, action, outcome, coalesce(target_type, '') AS target_type,
	coalesce(target_id, '') AS target_id, details, coalesce(request_id, '') AS request_id, occurred_at`

// List reads q's page of the context tenant's rows, oldest first.
func List(ctx context.Context, tx db.Writer, q Query) ([]Row, error) {
	tenant := tenancy.TenantID(ctx)
	if tenant == "" {
		return nil, tenancy.ErrNoTenant
	}
	if q.Limit < 1 || q.Limit > MaxPage || len(q.Targets) == 0 || q.After < 0 {
		return nil, fmt.Errorf("%w: %d targets, limit %d, after %d", ErrQuery, len(q.Targets), q.Limit, q.After)
	}
	about := make([]string, len(q.Targets))
	args := []any{tenant, q.After}
	for i, t := range q.Targets {
		switch {
		case t.Type == "" || (len(t.IDs) == 0) == (t.In == ""):
			return nil, fmt.Errorf("%w: target %d names no type, or not exactly one of ids and a subquery", ErrQuery, i)
		case t.In != "":
			about[i] = "(target_type = ? AND target_id IN (" + t.In + "))"
			args = append(append(args, t.Type), t.InArgs...)
		default:
			about[i] = "(target_type = ? AND target_id IN (?))"
			args = append(args, t.Type, bun.List(t.IDs))
		}
	}
	args = append(args, q.Limit)
	rows, err := db.Select[Row](ctx, tx, `SELECT `+rowColumns+`
		FROM app.audit_log WHERE tenant_id = ? AND id > ? AND (`+strings.Join(about, " OR ")+`)
		ORDER BY id LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("audit: list: %w", err)
	}
	if rows == nil {
		rows = []Row{}
	}
	return rows, nil
}

// Search selects rows for a reader of the whole trail (a tenant's admin, a platform admin): every
// filter set narrows it; the answer is newest first, a page at a time.
type Search struct {
	// TenantID: one tenant's rows; "" is every tenant's, which only a cross-tenant transaction
	// sees (row-level security keeps a tenant's transaction to its own whatever is asked).
	// "*" (crosstenant.PlatformTenant) is the rows about platform-wide and personal acts.
	TenantID string
	// Exact matches; "" does not filter.
	Actor, Action, TargetType, TargetID string
	Outcome                             Outcome
	// Person: rows this user wrote or that are about them (target User with their id); "" does
	// not filter. A user's own account activity.
	Person string
	// From and To bound occurred_at: From <= occurred_at < To; zero does not bound.
	From, To time.Time
	// Before is the previous page's last row id (0: from the newest row).
	Before int64
	// Limit is the page size, 1 to MaxPage.
	Limit int
}

// Find reads s's page of the trail, newest first. Its filters are bound arguments, never SQL.
func Find(ctx context.Context, tx db.Writer, s Search) ([]Row, error) {
	if s.Limit < 1 || s.Limit > MaxPage || s.Before < 0 {
		return nil, fmt.Errorf("%w: limit %d, before %d", ErrQuery, s.Limit, s.Before)
	}
	where, args := []string{"true"}, []any{}
	for _, f := range []struct{ col, v string }{{"tenant_id", s.TenantID}, {"actor", s.Actor}, {"action", s.Action},
		{"target_type", s.TargetType}, {"target_id", s.TargetID}, {"outcome", string(s.Outcome)}} {
		if f.v != "" {
			where, args = append(where, f.col+" = ?"), append(args, f.v)
		}
	}
	if s.Person != "" {
		where, args = append(where, "(actor = ? OR (target_type = 'User' AND target_id = ?))"), append(args, s.Person, s.Person)
	}
	if !s.From.IsZero() {
		where, args = append(where, "occurred_at >= ?"), append(args, s.From)
	}
	if !s.To.IsZero() {
		where, args = append(where, "occurred_at < ?"), append(args, s.To)
	}
	if s.Before > 0 {
		where, args = append(where, "id < ?"), append(args, s.Before)
	}
	rows, err := db.Select[Row](ctx, tx, `SELECT `+rowColumns+` FROM app.audit_log WHERE `+strings.Join(where, " AND ")+`
		ORDER BY id DESC LIMIT ?`, append(args, s.Limit)...)
	if err != nil {
		return nil, fmt.Errorf("audit: find: %w", err)
	}
	if rows == nil {
		rows = []Row{}
	}
	return rows, nil
}
