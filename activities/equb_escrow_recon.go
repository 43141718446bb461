package activities

import (
	"context"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/internal/equb"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/reconcile"
)

// Registered names of the equb escrow reconciliation's activities.
const (
	EqubEscrowFindTenantsActivity = "equb.escrow.FindTenants"
	EqubEscrowCheckTenantActivity = "equb.escrow.CheckTenant"
	EqubEscrowRecordRunActivity   = "equb.escrow.RecordRun"
)

// The escrow reconciliation's activities, typed.
var (
	EqubEscrowFindTenants = Activity[EqubEscrowFindInput, EqubEscrowFindResult]{EqubEscrowFindTenantsActivity}
	EqubEscrowCheckTenant = Activity[EqubEscrowCheckInput, EqubEscrowCheckResult]{EqubEscrowCheckTenantActivity}
	EqubEscrowRecordRun   = Action[EqubEscrowRecordInput]{EqubEscrowRecordRunActivity}
)

// EqubEscrowRecon holds the equb escrow reconciliation's activities: finding the tenants with
// escrow bindings, checking one tenant's escrow accounts (reconcile.EscrowRunner) and recording
// the run. Enabled is EQUB_ESCROW_RECON_ENABLED: off, every activity refuses
// (EQUB_ESCROW_RECON_DISABLED, non-retryable) before reading or fetching anything, so a schedule
// left behind by an earlier deployment runs nothing.
type EqubEscrowRecon struct {
	Enabled bool
	Runner  *reconcile.EscrowRunner
	// Platform is the cross-tenant role's pool (wagerail_platform), for FindTenants.
	Platform db.Beginner
}

// Register registers the activities.
func (a *EqubEscrowRecon) Register(r worker.ActivityRegistry) {
	EqubEscrowFindTenants.Register(r, a.FindTenants)
	EqubEscrowCheckTenant.Register(r, a.CheckTenant)
	EqubEscrowRecordRun.Register(r, a.RecordRun)
}

// EqubEscrowFindInput restricts the search to some partners (none: every partner).
type EqubEscrowFindInput struct {
	Partners []string
}

// EqubEscrowFindResult is every tenant with equb escrow bindings, in order.
type EqubEscrowFindResult struct {
	Tenants []string
}

// EqubEscrowCheckInput is one tenant's check up to the day To (YYYY-MM-DD).
type EqubEscrowCheckInput struct {
	TenantID string
	Partners []string
	To       string
}

// EqubEscrowCheckResult is the tenant's checks, one per escrow account.
type EqubEscrowCheckResult struct {
	Checks []reconcile.EscrowCheck
}

// EqubEscrowRecordInput is a finished run's totals.
type EqubEscrowRecordInput struct {
	Everyone                  bool
	Accounts, Drifted, Errors int
	Partners                  []reconcile.EscrowPartnerTotal
}

func (a *EqubEscrowRecon) refuse() error {
	if a.Enabled {
		return nil
	}
	r, _ := equb.RefusalOf(equb.CodeEscrowReconOff)
	return nonRetryable(r.Message, r.Code)
}

// FindTenants lists the tenants with escrow bindings on the audited cross-tenant path.
func (a *EqubEscrowRecon) FindTenants(ctx context.Context, in EqubEscrowFindInput) (EqubEscrowFindResult, error) {
	if err := a.refuse(); err != nil {
		return EqubEscrowFindResult{}, err
	}
	if a.Platform == nil {
		return EqubEscrowFindResult{}, misconfigured("equb escrow reconciliation: no cross-tenant database pool (DATABASE_PLATFORM_URL) configured to find the tenants")
	}
	tenants, err := reconcile.FindEscrowTenants(ctx, a.Platform, in.Partners)
	return EqubEscrowFindResult{Tenants: tenants}, temporalError(err)
}

// CheckTenant checks and records one tenant's escrow accounts under the calling run's ids (a
// retry records nothing twice). A ledger, gateway or database that does not answer is retryable.
func (a *EqubEscrowRecon) CheckTenant(ctx context.Context, in EqubEscrowCheckInput) (EqubEscrowCheckResult, error) {
	if err := a.refuse(); err != nil {
		return EqubEscrowCheckResult{}, err
	}
	if a.Runner == nil {
		return EqubEscrowCheckResult{}, misconfigured("equb escrow reconciliation: no runner configured")
	}
	run := activity.GetInfo(ctx).WorkflowExecution
	checks, err := a.Runner.CheckTenant(ctx, reconcile.EscrowTenantRequest{TenantID: in.TenantID, Partners: in.Partners, To: in.To,
		WorkflowID: run.ID, RunID: run.RunID})
	return EqubEscrowCheckResult{Checks: checks}, temporalError(err)
}

// RecordRun records the calling run's totals: what svc_equb_escrow_drift_santim and
// svc_equb_escrow_recon_last_success_timestamp_seconds read.
func (a *EqubEscrowRecon) RecordRun(ctx context.Context, in EqubEscrowRecordInput) error {
	if err := a.refuse(); err != nil {
		return err
	}
	if a.Runner == nil {
		return misconfigured("equb escrow reconciliation: no runner configured")
	}
	run := activity.GetInfo(ctx).WorkflowExecution
	return temporalError(a.Runner.RecordEscrowRun(ctx, reconcile.EscrowRun{WorkflowID: run.ID, RunID: run.RunID, Everyone: in.Everyone,
		Accounts: in.Accounts, Drifted: in.Drifted, Errors: in.Errors, Partners: in.Partners}))
}
