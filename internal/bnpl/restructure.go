package bnpl

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
)

// # Restructure
//
// A platform operator restructures an ACTIVE or DEFAULTED agreement (DEFAULTED → ACTIVE): what
// the customer still owes — the DUE instalments' total O — is split again into Instalments equal
// monthly instalments (the santim left over to the earliest, money.Allocate), the first due at
// the end of FirstPeriod, which is not before the current period. BNPL is interest-free, so the
// total never changes and a restructure posts nothing: O stays the receivable.
//
//   - an instalment COLLECTED is kept as it is;
//   - an instalment DUE is replaced: it stays, SUPERSEDED (an index names one instalment for
//     good), and is no longer collected, counted as owed or as an obligation in a quote;
//   - the new instalments are numbered after the agreement's highest index (at most
//     MaxInstalmentIndex) and carry the schedule's version (2, 3, 4).
//
// Refusals: BNPL_INVALID_STATE (409, the agreement is not ACTIVE or DEFAULTED), BNPL_WRITE_OFF_IN_PROGRESS
// (409, its write-off is under way, writeoff.go), BNPL_COLLECTION_IN_PROGRESS
// (409, an instalment is being collected: its saga decides first), BNPL_NOTHING_OUTSTANDING (409),
// BNPL_RESTRUCTURE_LIMIT_REACHED (409, MaxRestructures done or the indexes would pass
// MaxInstalmentIndex), BNPL_MANDATE_IN_OPEN_RUN (409, a payroll run that has not completed
// withheld under one of the agreement's mandates, live or cancelled since). Audited RestructureBnplAgreement, event
// bnpl.agreement_restructured.v1. A mandate whose amount is less than the new instalments is
// cancelled with it (the customer opts in again).
//
// A restructure moves no money (the receivable is the same total, only its dates change), so it
// is one database transaction, not a saga: the agreement row's lock (the one the collection
// saga's ReserveInstalment takes first) orders it against any collection, and a refusal or a
// failure rolls everything back.

// Restructure's bounds, audit action and event.
const (
	MaxInstalmentIndex       = 59
	MaxRestructures          = 3
	ActionRestructure        = "RestructureBnplAgreement"
	EventRestructured        = "bnpl.agreement_restructured.v1"
	InstalmentSuperseded     = "SUPERSEDED"
	maxRestructureReasonSize = 500
)

// RestructureRequest is a restructure's terms.
type RestructureRequest struct {
	Instalments int
	FirstPeriod string // YYYY-MM: the first new instalment is due at its end
	Reason      string
}

// Check validates the terms; current is the current period (YYYY-MM).
func (r RestructureRequest) Check(current string) error {
	if r.Instalments < 1 || r.Instalments > MaxInstalments {
		return &field.Error{Field: "instalments", Problem: fmt.Sprintf("must be from 1 to %d", MaxInstalments)}
	}
	if err := payroll.CheckPeriod("firstPeriod", r.FirstPeriod); err != nil {
		return err
	}
	if r.FirstPeriod < current {
		return &field.Error{Field: "firstPeriod", Problem: "must not be before the current period " + current}
	}
	if strings.TrimSpace(r.Reason) == "" {
		return &field.Error{Field: "reason", Problem: "is required"}
	}
	return field.Text("reason", r.Reason, maxRestructureReasonSize)
}

// Restructured is a restructure's outcome: the agreement with its whole schedule.
type Restructured struct {
	Agreement         Agreement
	Version           int
	OutstandingSantim int64
	Superseded        []int
	// CancelledMandateID is the customer's payroll mandate the restructure ended ("" when none).
	CancelledMandateID string
}

// Restructure restructures agreement id of the context's business (see "Restructure"). The
// caller has checked r (Check).
func Restructure(ctx context.Context, tx db.BunTx, id string, r RestructureRequest, now time.Time) (Restructured, error) {
	a, err := lockAgreement(ctx, tx, id)
	if err != nil {
		return Restructured{}, err
	}
	if a.Status != StatusActive && a.Status != StatusDefaulted {
		return Restructured{}, RefusalError(CodeInvalidState)
	}
	if err := notOwnAgreement(ctx, tx, a); err != nil {
		return Restructured{}, err
	}
	if err := writeOffPending(ctx, tx, a); err != nil {
		return Restructured{}, err
	}
	var restructures int
	if err := tx.QueryRow(ctx, `SELECT restructures FROM app.bnpl_agreements WHERE tenant_id = $1 AND id = $2`, a.TenantID, a.ID).
		Scan(&restructures); err != nil {
		return Restructured{}, fmt.Errorf("bnpl: restructures: %w", err)
	}
	rows, err := db.Select[struct {
		Idx          int    `bun:"idx" db:"idx"`
		Status       string `bun:"status" db:"status"`
		AmountSantim int64  `bun:"amount_santim" db:"amount_santim"`
	}](ctx, tx, `SELECT idx, status, amount_santim::bigint AS amount_santim FROM app.bnpl_instalments
		WHERE tenant_id = ? AND agreement_id = ? ORDER BY idx FOR UPDATE`, a.TenantID, a.ID)
	if err != nil {
		return Restructured{}, fmt.Errorf("bnpl: lock the instalments: %w", err)
	}
	var due []int
	var outstanding int64
	last := -1
	collecting := false
	for _, i := range rows {
		last = max(last, i.Idx)
		switch i.Status {
		case InstalmentDue:
			due, outstanding = append(due, i.Idx), outstanding+i.AmountSantim
		case InstalmentCollecting:
			collecting = true
		}
	}
	switch {
	case collecting:
		return Restructured{}, RefusalError(CodeCollectionInProgress)
	case outstanding == 0:
		return Restructured{}, RefusalError(CodeNothingOutstanding)
	case restructures >= MaxRestructures || last+r.Instalments > MaxInstalmentIndex:
		return Restructured{}, RefusalError(CodeRestructureLimit)
	}
	weights := make([]int64, r.Instalments)
	for i := range weights {
		weights[i] = 1
	}
	parts, err := money.Allocate(outstanding, weights)
	if err != nil {
		return Restructured{}, fmt.Errorf("bnpl: split the outstanding: %w", err)
	}
	if outstanding < int64(r.Instalments) {
		return Restructured{}, &field.Error{Field: "instalments", Problem: "must not be more than the santim outstanding"}
	}
	// The customer's payroll mandate: a run that withheld under it collects the old schedule's
	// instalment at its completion, so the restructure waits for it; a mandate whose amount does
	// not cover the new instalments (each line takes the earliest DUE instalment, at most the
	// mandate's amount, and a line that is not the instalment is refused and refunded) ends here,
	// for the customer to opt in again at the new amount and the payroll approver to activate.
	if err := CheckNoOpenRun(ctx, tx, a); err != nil {
		return Restructured{}, err
	}
	m, live, err := liveMandate(ctx, tx, a)
	if err != nil {
		return Restructured{}, err
	}
	var cancelled string
	if live {
		if parts[0] > m.AmountSantim {
			if _, err := payroll.CancelMandate(ctx, tx, m.ID, "BNPL agreement restructured: its instalments are more than the mandate's amount", now); err != nil {
				return Restructured{}, err
			}
			cancelled = m.ID
		}
	}
	version := restructures + 2
	if _, err := tx.Exec(ctx, `UPDATE app.bnpl_instalments SET status = 'SUPERSEDED'
		WHERE tenant_id = $1 AND agreement_id = $2 AND status = 'DUE'`, a.TenantID, a.ID); err != nil {
		return Restructured{}, fmt.Errorf("bnpl: supersede the instalments: %w", err)
	}
	start := payroll.PeriodStart(r.FirstPeriod)
	for i, amount := range parts {
		if _, err := tx.Exec(ctx, `INSERT INTO app.bnpl_instalments (tenant_id, agreement_id, idx, due_date, amount_santim, status,
				schedule_version) VALUES ($1, $2, $3, $4, $5, 'DUE', $6)`,
			a.TenantID, a.ID, last+1+i, start.AddDate(0, i+1, -1), amount, version); err != nil {
			return Restructured{}, fmt.Errorf("bnpl: store instalment %d: %w", last+1+i, err)
		}
	}
	from := a.Status
	a, err = scanAgreement(tx.QueryRow(ctx, `UPDATE app.bnpl_agreements SET status = 'ACTIVE', restructures = restructures + 1,
			updated_at = $3 WHERE tenant_id = $1 AND id = $2 RETURNING `+agreementColumns, a.TenantID, a.ID, now))
	if err != nil {
		return Restructured{}, err
	}
	if a.Instalments, err = instalments(ctx, tx, a.ID); err != nil {
		return Restructured{}, err
	}
	out := Restructured{Agreement: a, Version: version, OutstandingSantim: outstanding, Superseded: due, CancelledMandateID: cancelled}
	extra := map[string]any{"fromStatus": from, "version": version, "outstandingSantim": outstanding, "instalments": r.Instalments,
		"firstPeriod": r.FirstPeriod, "superseded": due, "reason": r.Reason}
	if cancelled != "" {
		extra["cancelledMandateId"] = cancelled
	}
	return out, record(ctx, tx, a, ActionRestructure, audit.Success, EventRestructured, extra)
}
