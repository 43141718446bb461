package bnpl

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// AgreementStatuses are every agreement state (app.bnpl_agreements' status CHECK, migration
// 0071), in lifecycle order.
var AgreementStatuses = []string{StatusAccepted, StatusActive, StatusSettled, StatusFailed, StatusDefaulted, StatusWrittenOff}

// Side says whose agreements a read takes.
type Side int

const (
	// BusinessSide: the agreements of the context's business (tenant_id), its employees'
	// purchases, as List reads them.
	BusinessSide Side = iota
	// MerchantSide: the agreements bought from the context's merchant (merchant_id), its orders,
	// as Orders reads them (the merchant_reads_agreements policy).
	MerchantSide
)

// Summary is a side's agreements at a glance (the portal's dashboards).
//
// What is owed is the package's rule (Agreement.OutstandingSantim): the instalments DUE or
// COLLECTING. Those are the current schedule's only: a restructure SUPERSEDES every DUE
// instalment of the old schedule and is refused while one is COLLECTING, so no instalment of an
// older schedule version is ever DUE or COLLECTING.
//
// The amounts are the ACTIVE agreements': an ACCEPTED one's merchant settlement is still in
// flight (it may yet FAIL, owing nothing), and DEFAULTED, reserved for servicing, is reached by
// no route yet.
//
// A merchant's Summary holds ByStatus alone, its amounts 0: a merchant reads the agreements bought
// from it but not their instalments (no policy lets it: not the customer, the instalments or how
// the customer repays; orders.go), so they are not read for it.
type Summary struct {
	// ByStatus counts the agreements in each state: every state of AgreementStatuses is a key (0
	// when none).
	ByStatus map[string]int64
	// OutstandingSantim is what the ACTIVE agreements' instalments not collected (DUE or
	// COLLECTING) still owe.
	OutstandingSantim int64
	// OverdueInstalments counts the ACTIVE agreements' instalments not collected whose due date is
	// before the day asked (UTC); OverdueSantim is their amount. An instalment due that day is
	// not overdue.
	OverdueInstalments int64
	OverdueSantim      int64
	// DueNext7DaysSantim is the amount of the ACTIVE agreements' instalments not collected due
	// from the day asked to six days after it, both included.
	DueNext7DaysSantim int64
}

// businessSummarySQL reads a business's Summary in one statement (one snapshot): a row per state
// present and the grand total (GROUPING SETS). Only the instalments still owed of ACTIVE
// agreements are joined, so every other agreement adds one row to its state's count and nothing
// else.
//
// Overflow: each sum is taken in numeric, which is exact, and read as text (money.ParseSum), so a
// sum past int64 is money.ErrOverflow, Summarize's error and the caller's to refuse, never a
// wrapped figure nor a database error (the dashboard's transaction reads on). The CHECKs bound a purchase (≤ 10^11 santim) but not an
// instalment (only > 0); by construction an agreement's instalments owe at most its purchase
// (activation splits it, a restructure splits what is still owed again), so the sum stays in
// int64 for over 92 million agreements at the largest purchase.
const businessSummarySQL = `SELECT coalesce(a.status, '') AS status, grouping(a.status) = 1 AS total, count(DISTINCT a.id) AS agreements,
		coalesce(sum(i.amount_santim), 0)::text AS outstanding_santim,
		count(i.idx) FILTER (WHERE i.due_date < ?1::date) AS overdue_instalments,
		coalesce(sum(i.amount_santim) FILTER (WHERE i.due_date < ?1::date), 0)::text AS overdue_santim,
		coalesce(sum(i.amount_santim) FILTER (WHERE i.due_date BETWEEN ?1::date AND ?2::date), 0)::text AS due_next7_days_santim
	FROM app.bnpl_agreements a
	LEFT JOIN app.bnpl_instalments i ON i.tenant_id = a.tenant_id AND i.agreement_id = a.id
		AND a.status = ?3 AND i.status IN (?4)
	WHERE a.tenant_id = ?0
	GROUP BY GROUPING SETS ((a.status), ())`

// merchantSummarySQL counts a merchant's agreements by state (summaryRow's columns, the amounts 0:
// not read for a merchant).
const merchantSummarySQL = `SELECT a.status, false AS total, count(*) AS agreements, '0' AS outstanding_santim,
		0::bigint AS overdue_instalments, '0' AS overdue_santim, '0' AS due_next7_days_santim
	FROM app.bnpl_agreements a WHERE a.merchant_id = ?0 GROUP BY a.status`

// summaryRow is one row of a summary statement: a state's, or the grand total (Total); its sums
// as text (money.ParseSum).
type summaryRow struct {
	Status             string `bun:"status" db:"status"`
	Total              bool   `bun:"total" db:"total"`
	Agreements         int64  `bun:"agreements" db:"agreements"`
	Outstanding        string `bun:"outstanding_santim" db:"outstanding_santim"`
	OverdueInstalments int64  `bun:"overdue_instalments" db:"overdue_instalments"`
	Overdue            string `bun:"overdue_santim" db:"overdue_santim"`
	DueNext7Days       string `bun:"due_next7_days_santim" db:"due_next7_days_santim"`
}

// Summarize reads the Summary of side's agreements on the day of today (its UTC date), in one
// statement in q: the context's tenant's transaction, a pgx one as List's and Orders' or the bun
// one a dashboard reads every domain in, so row-level security applies; the side's rule is stated
// in the query as List and Orders state it.
func Summarize(ctx context.Context, q db.Writer, side Side, today time.Time) (Summary, error) {
	var rows []summaryRow
	var err error
	if side == MerchantSide {
		rows, err = db.Select[summaryRow](ctx, q, merchantSummarySQL, tenancy.TenantID(ctx))
	} else {
		t := today.UTC()
		day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		rows, err = db.Select[summaryRow](ctx, q, businessSummarySQL, tenancy.TenantID(ctx), day.Format(time.DateOnly),
			day.AddDate(0, 0, 6).Format(time.DateOnly), StatusActive, bun.List([]string{InstalmentDue, InstalmentCollecting}))
	}
	if err != nil {
		return Summary{}, fmt.Errorf("bnpl: summarize the agreements: %w", err)
	}
	s := Summary{ByStatus: make(map[string]int64, len(AgreementStatuses))}
	for _, st := range AgreementStatuses {
		s.ByStatus[st] = 0
	}
	for _, r := range rows {
		if r.Total {
			s.OverdueInstalments = r.OverdueInstalments
			if err := money.ParseSums([]string{r.Outstanding, r.Overdue, r.DueNext7Days},
				&s.OutstandingSantim, &s.OverdueSantim, &s.DueNext7DaysSantim); err != nil {
				return Summary{}, fmt.Errorf("bnpl: summarize the agreements: %w", err)
			}
			continue
		}
		s.ByStatus[r.Status] = r.Agreements
	}
	return s, nil
}

// EmployeeSummary is one employee's BNPL plans at a glance (the employee's dashboard): the same
// rules as Summary's, over the agreements they bought with.
type EmployeeSummary struct {
	// Active counts the ACTIVE agreements; OutstandingSantim is what their instalments not
	// collected (DUE or COLLECTING) still owe.
	Active            int64
	OutstandingSantim int64
	// Next is the earliest of those instalments (due date, then agreement and index); nil when
	// none is owed.
	Next *NextInstalment
}

// NextInstalment is an instalment still owed: its agreement, due date and amount.
type NextInstalment struct {
	AgreementID  string
	DueDate      time.Time
	AmountSantim int64
}

// SummarizeEmployee reads employeeID's EmployeeSummary in the context's tenant (their employer's
// transaction, a pgx or a bun one), in one statement. Sums as Summary's: exact numeric read as
// text, one past int64 money.ErrOverflow (the next instalment's amount, a stored figure the
// table only checks positive, is read the same way).
func SummarizeEmployee(ctx context.Context, q db.Writer, employeeID string) (EmployeeSummary, error) {
	var s EmployeeSummary
	var next NextInstalment
	var due *time.Time
	var owed, amount string
	err := q.QueryRow(ctx, `WITH owed AS (
			SELECT a.id AS agreement_id, i.idx, i.due_date, i.amount_santim
			FROM app.bnpl_agreements a JOIN app.bnpl_instalments i ON i.tenant_id = a.tenant_id AND i.agreement_id = a.id
			WHERE a.tenant_id = $1 AND a.employee_id = $2 AND a.status = $3 AND i.status = ANY($4))
		SELECT (SELECT count(*) FROM app.bnpl_agreements WHERE tenant_id = $1 AND employee_id = $2 AND status = $3),
			(SELECT coalesce(sum(amount_santim), 0)::text FROM owed),
			coalesce(n.agreement_id, ''), n.due_date, coalesce(n.amount_santim, 0)::text
		FROM (SELECT 1) one LEFT JOIN (SELECT * FROM owed ORDER BY due_date, agreement_id, idx LIMIT 1) n ON true`,
		tenancy.TenantID(ctx), employeeID, StatusActive, []string{InstalmentDue, InstalmentCollecting}).
		Scan(&s.Active, &owed, &next.AgreementID, &due, &amount)
	if err == nil {
		err = money.ParseSums([]string{owed, amount}, &s.OutstandingSantim, &next.AmountSantim)
	}
	if err != nil {
		return EmployeeSummary{}, fmt.Errorf("bnpl: summarize the employee's agreements: %w", err)
	}
	if next.AgreementID != "" && due != nil {
		next.DueDate = due.UTC()
		s.Next = &next
	}
	return s, nil
}
