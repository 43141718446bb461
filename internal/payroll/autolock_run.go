package payroll

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// The auto-lock's run: each firing of a tenant's schedule locks the run of the period whose lock
// time (AutoLock.LockAt) is the latest one at or before the firing, if the policy still says so.
// A firing that finds nothing to lock says why (AutoLockOutcome.Skipped) and writes nothing, so a
// firing repeated (a catch-up, a retried step) is harmless.

// Why a firing of the auto-lock locked nothing (AutoLockOutcome.Skipped).
const (
	AutoLockSkipDisabled = "DISABLED" // the policy was turned off after the schedule fired
	AutoLockSkipNotDue   = "NOT_DUE"  // the period's lock time has not come (the policy moved it later)
	AutoLockSkipNoRun    = "NO_RUN"   // the period has no live run
	AutoLockSkipDraft    = "DRAFT"    // a DRAFT run has no figures to freeze
	// AutoLockSkipNotApproved: a CALCULATED run's figures are not approved yet. Locked, it could
	// no more be calculated again nor cancelled, and an input the lock does not close (a salary,
	// an advance) would make it stale for good: its approver decides first, then the run is
	// locked (LockRun refuses a CALCULATED run too; this says so without an error).
	AutoLockSkipNotApproved   = "NOT_APPROVED"
	AutoLockSkipAlreadyLocked = "ALREADY_LOCKED" // a person, or an earlier firing, locked it
)

// AutoLockOutcome is what one firing did.
type AutoLockOutcome struct {
	Period  string // the period it was about ("YYYY-MM")
	RunID   string `json:",omitempty"`
	Locked  bool
	Skipped string `json:",omitempty"` // one of AutoLockSkip*, when Locked is false
}

// AutoLockDue locks, at now, the context tenant's run that its effective policy says is due: the
// run of the month before now's month in the policy's time zone, once that period's lock time
// has passed. The lock is LockRun's (audited LockPayrollRun by the context's actor, event
// payroll.run_locked.v1).
func AutoLockDue(ctx context.Context, tx db.BunTx, now time.Time) (AutoLockOutcome, error) {
	p, err := EffectiveAutoLock(ctx, tx)
	if err != nil {
		return AutoLockOutcome{}, err
	}
	loc, err := time.LoadLocation(p.TimeZone)
	if err != nil {
		return AutoLockOutcome{}, fmt.Errorf("payroll: auto-lock time zone: %w", err)
	}
	local := now.In(loc)
	prev := time.Date(local.Year(), local.Month()-1, 1, 0, 0, 0, 0, loc)
	out := AutoLockOutcome{Period: prev.Format("2006-01")}
	if !p.Enabled {
		out.Skipped = AutoLockSkipDisabled
		return out, nil
	}
	at, err := p.LockAt(prev.Year(), prev.Month())
	if err != nil {
		return out, err
	}
	if now.Before(at) {
		out.Skipped = AutoLockSkipNotDue
		return out, nil
	}
	r, err := liveRunOf(ctx, tx, out.Period)
	if errors.Is(err, ErrRunNotFound) {
		out.Skipped = AutoLockSkipNoRun
		return out, nil
	} else if err != nil {
		return out, err
	}
	out.RunID = r.ID
	switch {
	case r.Status == RunDraft:
		out.Skipped = AutoLockSkipDraft
		return out, nil
	case r.Status == RunCalculated:
		out.Skipped = AutoLockSkipNotApproved
		return out, nil
	case r.Locked():
		out.Skipped = AutoLockSkipAlreadyLocked
		return out, nil
	}
	if _, err := LockRun(ctx, tx, r.ID, now); err != nil {
		return out, err
	}
	out.Locked = true
	return out, nil
}

// liveRunOf is the tenant's run of period that is not CANCELLED (ErrRunNotFound).
func liveRunOf(ctx context.Context, tx db.BunTx, period string) (Run, error) {
	var r Run
	err := tx.NewSelect().Model(&r).Where("pr.tenant_id = ?", tenancy.TenantID(ctx)).Where("pr.period = ?", period).
		Where("pr.status <> ?", RunCancelled).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return r, ErrRunNotFound
	}
	return r, err
}

// AutoLockTenants lists the tenants with an auto-lock policy row in either layer, for a
// platform transaction (crosstenant.BunTx) that brings every tenant's schedule to its policy.
func AutoLockTenants(ctx context.Context, tx db.BunTx) ([]string, error) {
	rows, err := db.Select[struct {
		TenantID string `bun:"tenant_id" db:"tenant_id"`
	}](ctx, tx, `SELECT tenant_id FROM `+autoLockLayers.tables.tenant+` UNION SELECT tenant_id FROM `+autoLockLayers.tables.override)
	if err != nil {
		return nil, fmt.Errorf("payroll: auto-lock tenants: %w", err)
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.TenantID
	}
	return out, nil
}
