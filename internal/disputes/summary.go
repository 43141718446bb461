package disputes

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Summary is the context's tenant's disputes at a glance (the business's dashboard).
type Summary struct {
	// ByStatus counts the disputes in each state: every state of Statuses is a key (0 when none).
	ByStatus map[string]int64
	// Open counts the disputes still being worked (Status.Open: OPENED, UNDER_INVESTIGATION).
	Open int64
	// SLABreached counts the open disputes past their SLA deadline at the instant asked
	// (Dispute.Breached: a deadline equal to the instant is not past).
	SLABreached int64
	// OpenAmountSantim is the disputed amount of the open disputes.
	OpenAmountSantim int64
}

// summarySQL reads the Summary in one statement (one snapshot): a row per state present and the
// grand total (GROUPING SETS).
//
// Overflow: app.disputes' CHECK bounds an amount to 10^12 santim, so the open amount fits int64
// up to 9,223,372 open disputes at that amount; it is summed in numeric, which is exact, and read
// as text (money.ParseSum), so past that it is money.ErrOverflow, Summarize's error and the
// caller's to refuse, never a wrapped figure nor a database error (the dashboard's transaction
// reads on).
const summarySQL = `SELECT coalesce(status, '') AS status, grouping(status) = 1 AS total, count(*) AS disputes,
		count(*) FILTER (WHERE status IN (?0) AND sla_deadline < ?1) AS sla_breached,
		coalesce(sum(amount_santim) FILTER (WHERE status IN (?0)), 0)::text AS open_amount_santim
	FROM app.disputes WHERE tenant_id = ?2
	GROUP BY GROUPING SETS ((status), ())`

// summaryRow is one row of summarySQL: a state's, or the grand total (Total); its sum as text
// (money.ParseSum).
type summaryRow struct {
	Status      Status `bun:"status" db:"status"`
	Total       bool   `bun:"total" db:"total"`
	Disputes    int64  `bun:"disputes" db:"disputes"`
	SLABreached int64  `bun:"sla_breached" db:"sla_breached"`
	OpenAmount  string `bun:"open_amount_santim" db:"open_amount_santim"`
}

// Summarize reads the Summary of the context's tenant's disputes at now, in one statement in q:
// the tenant's transaction, a pgx one as List's or the bun one a dashboard reads every domain in,
// so row-level security applies (the tenant is also stated in the query, so a cross-tenant
// transaction answers for the context's tenant alone).
func Summarize(ctx context.Context, q db.Writer, now time.Time) (Summary, error) {
	var open []Status
	for _, s := range Statuses {
		if s.Open() {
			open = append(open, s)
		}
	}
	rows, err := db.Select[summaryRow](ctx, q, summarySQL, bun.List(open), ceilMicrosecond(now), tenancy.TenantID(ctx))
	if err != nil {
		return Summary{}, fmt.Errorf("disputes.summarize: %w", err)
	}
	s := Summary{ByStatus: make(map[string]int64, len(Statuses))}
	for _, st := range Statuses {
		s.ByStatus[string(st)] = 0
	}
	for _, r := range rows {
		if r.Total {
			s.SLABreached = r.SLABreached
			if s.OpenAmountSantim, err = money.ParseSum(r.OpenAmount); err != nil {
				return Summary{}, fmt.Errorf("disputes.summarize: open amount: %w", err)
			}
			continue
		}
		s.ByStatus[string(r.Status)] = r.Disputes
		if r.Status.Open() {
			s.Open += r.Disputes
		}
	}
	return s, nil
}

// ceilMicrosecond is t rounded up to Postgres's resolution (a microsecond): a deadline, stored in
// whole microseconds, is before t exactly when it is before t rounded up, so the statement
// answers as Dispute.Breached(t) does whatever t's nanoseconds (sent as it is, t would be cut
// to the microsecond below, and a deadline within it missed).
func ceilMicrosecond(t time.Time) time.Time {
	if c := t.Truncate(time.Microsecond); !c.Equal(t) {
		return c.Add(time.Microsecond)
	}
	return t
}
