package activities

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/wagerail/wagerail/internal/equb"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// With the worker's EQUB_MONEY_MOVEMENT_ENABLED off, a contribution by payroll deduction is
// refused at its plan with the switch's code, before anything is planned or written (only the
// run's own concluded contribution is read first: TestEqubLoadPlanAnswersWhatTheRunConcluded);
// one started by a route (the API checked its own switch) is not asked again.
func TestEqubPayrollContributionNeedsTheSwitch(t *testing.T) {
	d := testkit.NewDB(t)
	off := &Equb{DB: db.NewBun(d.App)}
	run := Run{TenantID: "org_missing", WorkflowID: "payroll-complete-x.equb", CorrelationID: "http-1"}
	payroll := &equb.PayrollSource{MembershipID: "eqm_missing", MandateID: "mdt_missing", AmountSantim: 50_000}

	_, err := off.LoadPlan(context.Background(), EqubStep{Run: run, Payroll: payroll})
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "%v", err)
	require.Equal(t, equb.CodeMoneyMovementOff, app.Type())
	require.True(t, app.NonRetryable())

	// On, the same step reaches the store (which finds no such membership): the switch was the
	// only refusal above.
	on := &Equb{DB: db.NewBun(d.App), MoneyMovement: true}
	_, err = on.LoadPlan(context.Background(), EqubStep{Run: run, Payroll: payroll})
	require.Error(t, err)
	require.True(t, errors.As(err, &app), "%v", err)
	require.NotEqual(t, equb.CodeMoneyMovementOff, app.Type())

	// A route's contribution (no payroll source) is not refused by the worker's switch.
	_, err = off.LoadPlan(context.Background(), EqubStep{Run: run, GroupID: "eqg_missing", UserID: "usr_missing"})
	require.True(t, errors.As(err, &app), "%v", err)
	require.NotEqual(t, equb.CodeMoneyMovementOff, app.Type())
}

// A run whose steps run again after a lost workflow task: the plan step answers the payout or
// contribution the run already concluded (FAILED, PAID, POSTED) as the plan's Concluded, before
// anything is planned (a FAILED payout is skipped by equb.LoadPayoutPlan, which planned the cycle
// again) and before the worker's switch; another run is planned, or refused, as before.
func TestEqubLoadPlanAnswersWhatTheRunConcluded(t *testing.T) {
	d := testkit.NewDB(t)
	tenant := gateTenant(t, d.App)
	at := time.Date(2026, 12, 9, 9, 0, 0, 0, time.UTC)
	require.NoError(t, db.InTenantTx(context.Background(), d.App, tenant, func(tx pgx.Tx) error {
		ctx := context.Background()
		for _, q := range []string{
			`INSERT INTO app.equb_groups (id, tenant_id, name, contribution_santim, max_members, payout_order, allow_changes_after_start,
				escrow_partner, escrow_account_number, status, created_by, created_at, updated_at)
				VALUES ('equb_1', $1, 'Circle', 1000, 2, 'FIXED', false, 'sandbox', 'ESCROW', 'FORMING', 'test', $2, $2)`,
			`INSERT INTO app.equb_memberships (id, tenant_id, group_id, employee_id, user_id, status, position, joined_at)
				VALUES ('eqm_a', $1, 'equb_1', 'emp_a', 'usr_a', 'ACTIVE', 1, $2), ('eqm_b', $1, 'equb_1', 'emp_b', 'usr_b', 'ACTIVE', 2, $2)`,
			`INSERT INTO app.equb_cycles (id, tenant_id, group_id, number, recipient_id, contribution_santim, members_due, status, opened_by,
				opened_at, due_at) VALUES ('eqc_1', $1, 'equb_1', 1, 'eqm_a', 1000, 2, 'OPEN', 'test', $2, $2)`,
			`INSERT INTO app.equb_payouts (id, tenant_id, group_id, cycle_id, membership_id, amount_santim, status, workflow_id, ledger_tx_id,
				transfer_id, failure_code, created_at, updated_at)
				VALUES ('eqp_a', $1, 'equb_1', 'eqc_1', 'eqm_a', 2000, 'FAILED', 'wf-payout', 'ltx-p', 'tr-p', 'ACCOUNT_CLOSED', $2, $2)`,
			`INSERT INTO app.equb_contributions (id, tenant_id, group_id, cycle_id, membership_id, amount_santim, status, workflow_id,
				ledger_tx_id, transfer_id, created_at, updated_at)
				VALUES ('eqt_a', $1, 'equb_1', 'eqc_1', 'eqm_a', 1000, 'POSTED', 'wf-contribute', 'ltx-c', 'tr-c', $2, $2)`,
		} {
			if _, err := tx.Exec(ctx, q, tenant, at); err != nil {
				return err
			}
		}
		return nil
	}))
	a := &Equb{DB: db.NewBun(d.App)}
	run := func(wfID string) Run { return Run{TenantID: tenant, WorkflowID: wfID, CorrelationID: "http-1"} }

	p, err := a.PayoutLoadPlan(context.Background(), EqubStep{Run: run("wf-payout"), GroupID: "equb_1", Cycle: 1})
	require.NoError(t, err)
	require.Equal(t, equb.MoneyPlan{TenantID: tenant, GroupID: "equb_1", CycleID: "eqc_1", MembershipID: "eqm_a", AmountSantim: 2000,
		Owner: "wf-payout", Concluded: &equb.Concluded{Status: equb.MoneyFailed, LedgerTxID: "ltx-p", TransferID: "tr-p",
			FailureCode: "ACCOUNT_CLOSED"}}, p)
	// Another run plans the cycle (OPEN again) as before: here refused, the cycle has no escrow.
	p, err = a.PayoutLoadPlan(context.Background(), EqubStep{Run: run("wf-other"), GroupID: "equb_1", Cycle: 1})
	require.Nil(t, p.Concluded)
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "%v", err)
	require.Equal(t, equb.CodeEscrowNotActive, app.Type())

	p, err = a.LoadPlan(context.Background(), EqubStep{Run: run("wf-contribute"), GroupID: "equb_1", UserID: "usr_a"})
	require.NoError(t, err)
	require.Equal(t, &equb.Concluded{Status: equb.MoneyPosted, LedgerTxID: "ltx-c", TransferID: "tr-c"}, p.Concluded)
	require.Equal(t, "equb_1", p.GroupID)
	// A payroll deduction's run, the worker's switch off since: its recorded outcome still.
	p, err = a.LoadPlan(context.Background(), EqubStep{Run: run("wf-contribute"),
		Payroll: &equb.PayrollSource{MembershipID: "eqm_a", MandateID: "mdt_1", AmountSantim: 1000}})
	require.NoError(t, err)
	require.Equal(t, equb.MoneyPosted, p.Concluded.Status)
	require.Equal(t, "equb_1", p.GroupID)
	p, err = a.LoadPlan(context.Background(), EqubStep{Run: run("wf-other"), GroupID: "equb_1", UserID: "usr_a"})
	require.Nil(t, p.Concluded)
	require.True(t, errors.As(err, &app), "%v", err)
}
