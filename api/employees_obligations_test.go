package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/employeetransfer"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestEmployeeEndsWithMoneyOwedOrMoving: an employee's employment does not end around the money
// they owe or that is moving for them (found by an audit: a REQUESTED advance of a TERMINATED
// employee was disbursed, and a deleted employee re-added with the same national id drew again
// with nothing outstanding).
//   - TERMINATED is refused while money is in flight (409 EMPLOYEE_MONEY_IN_FLIGHT, the
//     obligations in details), and allowed once only settled obligations are left: they stay
//     with the record, as a transfer's RETAIN_WITH_SOURCE.
//   - A delete is refused while the record owes anything (409 EMPLOYEE_HAS_OBLIGATIONS).
//   - A REQUESTED advance of an employee no longer ACTIVE (stored before these rules) is refused
//     at disbursement, EWA_EMPLOYEE_NOT_ACTIVE, with nothing moved.
func TestEmployeeEndsWithMoneyOwedOrMoving(t *testing.T) {
	t.Parallel()
	s := newEwaStack(t, ewaStackOpts{})
	s.approveKyc(t)
	statusPath, deletePath := "/api/employees/"+s.employee+"/status", "/api/employees/"+s.employee
	terminate := func() *httptest.ResponseRecorder {
		return s.owner.call(http.MethodPut, statusPath, map[string]any{"status": "TERMINATED"})
	}
	employeeStatus := func() string {
		rec := s.owner.call(http.MethodGet, "/api/employees/"+s.employee, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return string(decode[employeeJSON](t, rec).Status)
	}

	adv := s.request(t, 10_000)
	details := refused(t, terminate(), http.StatusConflict, "EMPLOYEE_MONEY_IN_FLIGHT")
	require.Contains(t, fmt.Sprint(details["obligations"]), adv.ID)
	refused(t, s.owner.call(http.MethodDelete, deletePath, nil), http.StatusConflict, "EMPLOYEE_HAS_OBLIGATIONS")
	require.Equal(t, "ACTIVE", employeeStatus())

	rec := s.disburse(adv.ID, testkit.Unique("disburse"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	s.waitStatus(t, adv.ID, "DISBURSED")
	// Owed, not moving: the employment may end, the advance stays owed on the record.
	require.Equal(t, http.StatusOK, terminate().Code)
	details = refused(t, s.owner.call(http.MethodDelete, deletePath, nil), http.StatusConflict, "EMPLOYEE_HAS_OBLIGATIONS")
	require.Contains(t, fmt.Sprint(details["obligations"]), adv.ID)

	// A REQUESTED advance of a TERMINATED employee (written as an older build could have).
	rec = s.owner.call(http.MethodPut, statusPath, map[string]any{"status": "ACTIVE"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	late := s.request(t, 5_000)
	ctx := context.Background()
	require.NoError(t, db.InTenantTx(ctx, s.d.App, s.tenant, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE app.employees SET status = 'TERMINATED', termination_date = current_date WHERE id = $1`, s.employee)
		return err
	}))
	transfers := s.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1`, s.tenant)
	refused(t, s.disburse(late.ID, testkit.Unique("disburse")), http.StatusConflict, "EWA_EMPLOYEE_NOT_ACTIVE")
	require.Equal(t, "REQUESTED", string(s.waitStatus(t, late.ID, "REQUESTED").Status))
	require.Equal(t, transfers, s.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1`, s.tenant), "no transfer")
}

// TestEmployeeTransferMandateRules: a transfer carries over only what it can carry whole.
//   - A product mandate (savings auto-save, BNPL, equb) names an object of the source business:
//     CARRY_OVER is HANDLING_NOT_ALLOWED for it (was a 500).
//   - A mandate an open payroll run of the source withheld under is IN_FLIGHT: carried before
//     the run completes, the source's taking and the carried total would both be collected (an
//     audit: 150,000 withheld against a 100,000 court order).
//   - An effective date in a later month than today's is 422 TRANSFER_DATE_TOO_LATE: the
//     mandates move at once, so the source's runs until then would withhold nothing.
func TestEmployeeTransferMandateRules(t *testing.T) {
	t.Parallel()
	w := newPayrollDisburseWorld(t, 1)
	w.setPayrollAccount(t, w.payroll, "Employer PLC")
	_, res := w.signUp("owner@transfer-mandates.test", "BUSINESS")
	target := res.Organization.ID
	joinAsAdmin(t, w.d, w.owner, target)

	ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: w.tenant, Actor: "user-maker"})
	var court, autosave string
	require.NoError(t, tenancy.InBunTx(ctx, db.NewBun(w.d.App), func(tx db.BunTx) error {
		amount, total := int64(50_000), int64(100_000)
		m, err := payroll.CreateMandate(ctx, tx, payroll.NewMandate{EmployeeID: w.employee, Kind: payroll.KindCourtOrder, AmountSantim: &amount,
			TotalSantim: &total, StartPeriod: "2026-11", Reference: "FHC-77", Payee: &payroll.Payee{Partner: "sandbox", AccountNumber: "1000999",
				HolderName: "Court Trust"}}, time.Now())
		if err != nil {
			return err
		}
		court = m.ID
		if _, err := payroll.ActivateMandate(tenancy.WithActor(ctx, "user-checker"), tx, m.ID, time.Now()); err != nil {
			return err
		}
		p, err := payroll.CreateProductMandate(ctx, tx, payroll.ProductMandate{Kind: payroll.KindSavingsAutosave, EmployeeID: w.employee,
			Reference: "sgl_transfer-test", AmountSantim: 1_000, StartPeriod: "2027-01", Description: "savings auto-save"}, time.Now())
		autosave = p.ID
		return err
	}))
	run := w.approvedRun(t)
	path := fmt.Sprintf(transferPath, w.employee)
	carry := map[string]any{"targetBusinessId": target, "obligations": map[string]any{"deductionMandates": "CARRY_OVER"}}

	problems := map[string]string{}
	for _, o := range blockedBy(t, w.owner.call(http.MethodPost, path, carry, "Idempotency-Key", testkit.Unique("transfer"))) {
		problems[o.ID] = o.Problem
	}
	require.Equal(t, map[string]string{court: employeetransfer.ProblemInFlight, autosave: employeetransfer.ProblemNotAllowed}, problems)

	next := time.Now().UTC().AddDate(0, 1, 1-time.Now().UTC().Day()).Format(time.DateOnly)
	late := map[string]any{"targetBusinessId": target, "effectiveDate": next, "obligations": map[string]any{"deductionMandates": "CARRY_OVER"}}
	refused(t, w.owner.call(http.MethodPost, path, late, "Idempotency-Key", testkit.Unique("transfer")), http.StatusUnprocessableEntity,
		"TRANSFER_DATE_TOO_LATE")
	require.Equal(t, [3]int{0, 0, 0}, transferTrail(t, w.d, w.tenant))

	// Once the run has completed, the court order is carried with what is left of it.
	rec := w.checker.call(http.MethodPost, "/api/payroll/"+run.ID+"/disburse", nil, "Idempotency-Key", testkit.Unique("k"))
	require.Contains(t, []int{http.StatusAccepted, http.StatusOK}, rec.Code, rec.Body.String())
	w.waitRun(t, run.ID, "COMPLETED")
	rec = w.owner.call(http.MethodPost, "/api/payroll/deduction-mandates/"+autosave+"/cancel", map[string]any{"reason": "moving"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = w.owner.call(http.MethodPost, path, carry, "Idempotency-Key", testkit.Unique("transfer"))
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	var carried string
	for _, o := range decode[employeeTransferJSON](t, rec).Obligations {
		if o.ID == court {
			carried = o.CarriedOverTo
		}
	}
	require.NotEmpty(t, carried)
	var left int64
	tctx := context.Background()
	require.NoError(t, db.InTenantTx(tctx, w.d.App, target, func(tx pgx.Tx) error {
		return tx.QueryRow(tctx, `SELECT total_santim::bigint FROM app.payroll_deduction_mandates WHERE id = $1`, carried).Scan(&left)
	}))
	require.Equal(t, int64(50_000), left, "the order's 100,000 less the 50,000 the source's run took")
}
