package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/bnpl"
	"github.com/wagerail/wagerail/internal/platform/idempotency"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// TestEmployeeTransferRacingCreates: on the real stack (Postgres, embedded Temporal, ledger,
// gateway), a transfer of the employee and 16 creates for the same employee — EWA requests,
// loans, deduction mandates and BNPL agreements, four of each — all wait on the employee's row
// (held by the test as a transfer would hold it), the transfer first in the queue. Released, the
// transfer terminates the record; every create then reads the record TERMINATED under its own
// lock and is refused with its kind's stable code; nothing lands on the terminated record.
func TestEmployeeTransferRacingCreates(t *testing.T) {
	t.Parallel()
	ls := newLoanStack(t, ewaStackOpts{})
	s := bnplOn(t, ls.ewaStack)
	_, res := s.signUp("owner@race-target.test", "BUSINESS")
	target := res.Organization.ID
	joinAsAdmin(t, s.d, s.owner, target)

	ctx := context.Background()
	hold := holdRowLock(t, s.d.Name, `SELECT 1 FROM app.employees WHERE id = $1 FOR UPDATE`, s.employee)
	waiting := hold.waiting

	var wg sync.WaitGroup
	plan := map[string]any{"targetBusinessId": target, "obligations": map[string]any{"ewaAdvances": "RETAIN_WITH_SOURCE",
		"loans": "RETAIN_WITH_SOURCE", "deductionMandates": "CARRY_OVER", "bnplAgreements": "RETAIN_WITH_SOURCE"}}
	var transfer *httptest.ResponseRecorder
	wg.Go(func() {
		transfer = s.owner.call(http.MethodPost, fmt.Sprintf(transferPath, s.employee), plan, "Idempotency-Key", testkit.Unique("transfer"))
	})
	require.Eventually(t, func() bool { return waiting() == 1 }, 30*time.Second, 20*time.Millisecond, "the transfer waits on the row")

	type create struct {
		kind, path string
		body       map[string]any
		code       string // the refusal once the record is TERMINATED
	}
	var creates []create
	for i := range 4 {
		creates = append(creates,
			create{"ewa", "/api/ewa/requests", map[string]any{"employeeId": s.employee, "amountSantim": 10_000}, "EWA_EMPLOYEE_NOT_ACTIVE"},
			create{"loan", "/api/loans", map[string]any{"employeeId": s.employee, "productId": ls.product.ID, "amountSantim": 200_000,
				"termMonths": 3}, "LOAN_EMPLOYEE_NOT_ACTIVE"},
			create{"mandate", "/api/payroll/deduction-mandates", map[string]any{"employeeId": s.employee, "kind": "UNION_DUES",
				"basisPoints": 100, "startPeriod": "2026-12"}, "PAYROLL_EMPLOYEE_TERMINATED"},
			create{"bnpl", "/api/bnpl/agreements", s.agreementBody(30_000, 3, fmt.Sprintf("race-order-%d", i)), "BNPL_EMPLOYEE_NOT_ACTIVE"},
		)
	}
	answers := make([]*httptest.ResponseRecorder, len(creates))
	for i, c := range creates {
		wg.Go(func() {
			hdr := []string{}
			if c.kind != "mandate" {
				hdr = []string{"Idempotency-Key", testkit.Unique("race")}
			}
			answers[i] = s.owner.call(http.MethodPost, c.path, c.body, hdr...)
		})
	}
	require.Eventually(t, func() bool { return waiting() == 1+len(creates) }, 60*time.Second, 20*time.Millisecond,
		"every create waits on the employee's row")
	require.NoError(t, hold.Rollback(ctx))
	wg.Wait()

	require.Equal(t, http.StatusCreated, transfer.Code, transfer.Body.String())
	tr := decode[employeeTransferJSON](t, transfer)
	require.Equal(t, "TERMINATED", string(tr.Source.Employee.Status))
	require.Empty(t, tr.Obligations, "no create committed before the transfer")
	for i, c := range creates {
		r := answers[i]
		require.GreaterOrEqual(t, r.Code, 400, "%s: %s", c.kind, r.Body.String())
		require.Less(t, r.Code, 500, "%s: %s", c.kind, r.Body.String())
		require.Equal(t, c.code, errCode(r), "%s: %s", c.kind, r.Body.String())
	}
	for _, q := range []string{
		`SELECT count(*) FROM app.ewa_requests WHERE tenant_id = $1 AND employee_id = $2`,
		`SELECT count(*) FROM app.loans WHERE tenant_id = $1 AND borrower_id = $2`,
		`SELECT count(*) FROM app.payroll_deduction_mandates WHERE tenant_id = $1 AND employee_id = $2`,
		`SELECT count(*) FROM app.bnpl_agreements WHERE tenant_id = $1 AND employee_id = $2`,
	} {
		require.Zero(t, s.count(t, q, s.tenant, s.employee), "nothing on the terminated record: %s", q)
	}
}

// TestBnplAgreementAfterTransfer: the BNPL activation saga reads the employee in its plan step
// and records the agreement two steps (and a ledger posting) later. A transfer that commits in
// between ends the employment: the record step reads the record TERMINATED under its lock and
// refuses (BNPL_EMPLOYEE_NOT_ACTIVE), the saga voids its posting, and no agreement lands on the
// terminated record.
func TestBnplAgreementAfterTransfer(t *testing.T) {
	t.Parallel()
	s := bnplOn(t, newEwaStack(t, ewaStackOpts{noWorker: true}))
	s.approveKyc(t)
	_, res := s.signUp("owner@bnpl-race-target.test", "BUSINESS")
	target := res.Organization.ID
	joinAsAdmin(t, s.d, s.owner, target)

	real := s.realActivities()
	var once sync.Once
	ran := make(chan *httptest.ResponseRecorder, 1)
	s.startWorker(t, func(w worker.Registry) {
		w.RegisterActivityWithOptions(func(ctx context.Context, in activities.BnplStep) (bnpl.Agreement, error) {
			once.Do(func() {
				ran <- s.owner.call(http.MethodPost, fmt.Sprintf(transferPath, s.employee), map[string]any{"targetBusinessId": target},
					"Idempotency-Key", testkit.Unique("transfer"))
			})
			return real.Bnpl.Create(ctx, in)
		}, activity.RegisterOptions{Name: activities.BnplActivateCreateActivity, DisableAlreadyRegisteredCheck: true})
	})

	key := testkit.Unique("bnpl")
	rec := s.owner.call(http.MethodPost, "/api/bnpl/agreements", s.agreementBody(120_000, 3, "order-after-transfer"), "Idempotency-Key", key)
	require.Contains(t, []int{http.StatusUnprocessableEntity, http.StatusAccepted}, rec.Code, rec.Body.String())
	if rec.Code == http.StatusUnprocessableEntity {
		require.Equal(t, "BNPL_EMPLOYEE_NOT_ACTIVE", errCode(rec))
	}
	var transfer *httptest.ResponseRecorder
	select { // the answer may come first (202) when the saga's wait runs out on a loaded machine
	case transfer = <-ran:
	case <-time.After(120 * time.Second):
		t.Fatal("the record step never ran: no transfer between the plan and the record step")
	}
	require.Equal(t, http.StatusCreated, transfer.Code, transfer.Body.String())
	require.Empty(t, decode[employeeTransferJSON](t, transfer).Obligations)

	wfID := idempotency.WorkflowID(s.tenant, "POST /api/bnpl/agreements", key)
	require.Eventually(t, func() bool {
		r, err := s.ledger.GetTransaction(context.Background(), &ledgerv1.GetTransactionRequest{TenantId: s.tenant, IdempotencyKey: "bnpl-settle:" + wfID})
		return err == nil && r.GetTransaction().GetStatus() == ledgerv1.TransactionStatus_TRANSACTION_STATUS_VOIDED
	}, 60*time.Second, 50*time.Millisecond, "the saga voids its posting")
	require.Zero(t, s.count(t, `SELECT count(*) FROM app.bnpl_agreements WHERE tenant_id = $1 AND employee_id = $2`, s.tenant, s.employee),
		"no agreement on the terminated record")
}
