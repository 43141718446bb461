package activities

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/wagerail/wagerail/internal/equb"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// With the worker's EQUB_MONEY_MOVEMENT_ENABLED off, a contribution by payroll deduction is
// refused at its plan with the switch's code, before any read or write; one started by a route
// (the API checked its own switch) is not asked again.
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
