package api

import (
	"context"
	"fmt"
	"hash/crc32"
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/internal/savings"
)

// saverOf creates an employee in owner's organization (its catalogs seeded), links a new user
// (email) to it and signs them in: another saver, in the same organization or another one.
func (w *savingsWorld) saverOf(t *testing.T, owner *apiClient, email string) *apiClient {
	t.Helper()
	n := crc32.ChecksumIEEE([]byte(email))
	rec := owner.call(http.MethodPost, "/api/employees", map[string]any{
		"firstName": "Other", "lastName": "Saver", "email": email, "phone": fmt.Sprintf("+25192%07d", n%10_000_000),
		"nationalId": fmt.Sprintf("ET%08d", n%100_000_000), "department": "Ops", "position": "Clerk",
		"employmentType": "Full time", "paymentFrequency": "Monthly", "hireDate": "2024-01-01", "grossMonthlySalarySantim": 800_000,
		"payoutAccount": map[string]any{"partner": "sandbox", "accountNumber": fmt.Sprintf("OTHER-%d", n), "holderName": "Other Saver"},
	})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	emp := decode[employeeJSON](t, rec)
	ctx := context.Background()
	hash, err := identity.HashPassword(testPassword)
	require.NoError(t, err)
	u, err := identity.CreateUser(ctx, w.d.App, identity.NewUser{Email: email, Name: "Other Saver", PasswordHash: hash})
	require.NoError(t, err)
	require.NoError(t, db.InTenantTx(ctx, w.d.App, emp.BusinessID, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE app.employees SET user_id = $1 WHERE id = $2`, u.ID, emp.ID)
		return err
	}))
	return w.signIn(email)
}

// closeGoal closes the goal (no route closes one yet: the status domain's rule is what is tested).
func (w *savingsWorld) closeGoal(t *testing.T, id string) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, db.InTenantTx(ctx, w.d.App, w.tenant, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE app.savings_goals SET status = $1 WHERE id = $2`, savings.GoalClosed, id)
		return err
	}))
}

// TestSavingsAutosaveMandateOptIn: a saver opts in to auto-save into their own goal by payroll
// deduction. Bad input is 400 with nothing written; another saver's goal (same organization),
// a goal seen from another organization's saver, an unknown goal and a caller with no employee
// are 404; a closed goal is 409 SAVINGS_GOAL_CLOSED; the opt-in is a PENDING SAVINGS_AUTOSAVE
// mandate of the saver's employee on the goal, a second one 409 PAYROLL_MANDATE_EXISTS; the
// payroll's own mandate route does not create the kind; GET /api/me/savings/goals shows the goal's
// auto-save (and none on the other goal).
func TestSavingsAutosaveMandateOptIn(t *testing.T) {
	t.Parallel()
	w := newSavingsWorld(t, ewaStackOpts{noWorker: true})
	g := w.goal(t, "Holiday", 500_000)
	closed := w.goal(t, "Old plan", 500_000)
	w.closeGoal(t, closed.ID)
	path := func(id string) string { return "/api/savings/goals/" + id + "/autosave-mandate" }
	mandates := func() int {
		return w.count(t, `SELECT count(*) FROM app.payroll_deduction_mandates WHERE kind = 'SAVINGS_AUTOSAVE'`)
	}
	const amount int64 = 25_000
	optIn := map[string]any{"amountSantim": amount, "startPeriod": "2026-11"}

	// Bad input: 400, nothing written.
	for _, body := range []map[string]any{
		{"startPeriod": "2026-11"},
		{"amountSantim": 0, "startPeriod": "2026-11"},
		{"amountSantim": -1, "startPeriod": "2026-11"},
		{"amountSantim": savings.MaxAutosaveSantim + 1, "startPeriod": "2026-11"},
		{"amountSantim": "25000", "startPeriod": "2026-11"},
		{"amountSantim": 1.5, "startPeriod": "2026-11"},
		{"amountSantim": amount},
		{"amountSantim": amount, "startPeriod": "2026-13"},
		{"amountSantim": amount, "startPeriod": "2026-11", "endPeriod": ""},
		{"amountSantim": amount, "startPeriod": "2026-11", "endPeriod": "2026-10"},
		{"amountSantim": amount, "startPeriod": "2026-11", "employeeId": w.employee},
		{"amountSantim": amount, "startPeriod": "2026-11", "kind": "OTHER"},
	} {
		requireStatus(t, w.me.hostile(http.MethodPost, path(g.ID), body), http.StatusBadRequest, "INVALID_REQUEST")
	}
	requireStatus(t, w.me.hostile(http.MethodPost, path("bad%20id"), optIn), http.StatusBadRequest, "INVALID_REQUEST")
	require.Zero(t, mandates())

	// Not the caller's goal: 404, nothing written.
	neighbour := w.saverOf(t, w.owner, testkit.Unique("neighbour")+"@savings.test")
	rec := neighbour.call(http.MethodPost, "/api/savings/goals", map[string]any{"name": "Theirs", "targetSantim": 1_000})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	theirs := decode[savingsGoalJSON](t, rec)
	requireStatus(t, w.me.call(http.MethodPost, path(theirs.ID), optIn), http.StatusNotFound, savings.CodeGoalNotFound)
	requireStatus(t, neighbour.call(http.MethodPost, path(g.ID), optIn), http.StatusNotFound, savings.CodeGoalNotFound)
	seedEmployeeCatalogs(t, w.other)
	stranger := w.saverOf(t, w.other, testkit.Unique("stranger")+"@savings.test")
	requireStatus(t, stranger.call(http.MethodPost, path(g.ID), optIn), http.StatusNotFound, savings.CodeGoalNotFound)
	requireStatus(t, w.me.call(http.MethodPost, path("sgl_unknown"), optIn), http.StatusNotFound, savings.CodeGoalNotFound)
	requireStatus(t, w.owner.call(http.MethodPost, path(g.ID), optIn), http.StatusNotFound, "EMPLOYEE_NOT_LINKED")
	// A closed goal: 409, nothing written.
	requireStatus(t, w.me.call(http.MethodPost, path(closed.ID), optIn), http.StatusConflict, savings.CodeGoalClosed)
	// The payroll's own mandate route does not create the kind.
	requireStatus(t, w.owner.hostile(http.MethodPost, "/api/payroll/deduction-mandates", map[string]any{"employeeId": w.employee,
		"kind": payroll.KindSavingsAutosave, "amountSantim": amount, "startPeriod": "2026-11", "reference": g.ID}),
		http.StatusBadRequest, "INVALID_REQUEST")
	require.Zero(t, mandates())

	// The saver's opt-in: PENDING, for their employee, the goal and the amount.
	rec = w.me.call(http.MethodPost, path(g.ID), map[string]any{"amountSantim": amount, "startPeriod": "2026-11", "endPeriod": "2027-10"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	md := decode[mandateJSON](t, rec)
	require.Equal(t, payroll.KindSavingsAutosave, md.Kind)
	require.Equal(t, payroll.MandatePending, md.Status)
	require.Equal(t, w.employee, md.EmployeeID)
	require.Equal(t, amount, *md.AmountSantim)
	require.Equal(t, g.ID, *md.Reference)
	requireStatus(t, w.me.call(http.MethodPost, path(g.ID), optIn), http.StatusConflict, payroll.CodeMandateExists)
	require.Equal(t, 1, mandates())
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'payroll.deduction_mandate_created.v1'`, w.tenant))

	// The listing shows the goal's auto-save, and none on the others.
	goals := w.goals(t)
	require.Equal(t, &savingsAutosaveJSON{MandateID: md.ID, AmountSantim: amount, Status: payroll.MandatePending}, goals[g.ID].Autosave)
	require.Nil(t, goals[closed.ID].Autosave)
	require.Equal(t, savings.GoalClosed, goals[closed.ID].Status)
}
