package api

import (
	"context"
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// activeAgreement makes an agreement of the stack's employee (purchase in n instalments) and
// waits for it to be ACTIVE.
func (s *bnplStack) activeAgreement(t *testing.T, purchase int64, n int, ref string) bnplAgreementJSON {
	t.Helper()
	rec := s.owner.call(http.MethodPost, "/api/bnpl/agreements", s.agreementBody(purchase, n, ref), "Idempotency-Key", testkit.Unique("bnpl"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	return s.waitAgreement(t, decode[bnplActivateJSON](t, rec).ID, "ACTIVE")
}

// linkedCustomer is a new employee of the organization owner administers (tenant), linked to a
// new user, signed in: a customer of that organization who has no agreement.
func (s *bnplStack) linkedCustomer(t *testing.T, owner *apiClient, tenant, n string) *apiClient {
	t.Helper()
	acct := testkit.Unique("cust")
	s.bank.Account(t, acct, "Customer "+n, 0)
	rec := owner.call(http.MethodPost, "/api/employees", map[string]any{
		"firstName": "Customer", "lastName": "Number" + n, "email": "customer" + n + "@bnpl-payroll.test", "phone": "+25192" + n + "00000",
		"nationalId": "ET9" + n + "000000", "department": "Ops", "position": "Clerk", "employmentType": "Full time",
		"paymentFrequency": "Monthly", "hireDate": "2024-01-01", "grossMonthlySalarySantim": 900_000,
		"payoutAccount": map[string]any{"partner": "sandbox", "accountNumber": acct, "holderName": "Customer " + n},
	})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	emp := decode[struct {
		ID string `json:"id"`
	}](t, rec).ID
	ctx := context.Background()
	hash, err := identity.HashPassword(testPassword)
	require.NoError(t, err)
	email := testkit.Unique("customer") + "@bnpl-payroll.test"
	u, err := identity.CreateUser(ctx, s.d.App, identity.NewUser{Email: email, Name: "Customer " + n, PasswordHash: hash})
	require.NoError(t, err)
	tctx := tenancy.WithTenant(ctx, tenant)
	require.NoError(t, tenancy.InTx(tctx, s.d.App, func(tx pgx.Tx) error {
		_, err := tx.Exec(tctx, `UPDATE app.employees SET user_id = $1 WHERE id = $2`, u.ID, emp)
		return err
	}))
	return s.signIn(email)
}

// TestBnplInstalmentMandateOptIn: the customer opts in to pay their own ACTIVE agreement's
// instalments by payroll deduction: hostile bodies and ids are 400 and write nothing; a caller
// with no linked employee, another customer of the organization and another organization's
// customer are 404 (nothing written); the opt-in is a PENDING BNPL_INSTALLMENT mandate of the
// customer's employee, its reference the agreement, its amount the earliest DUE instalment's,
// audited and announced as every mandate; a second opt-in is 409 PAYROLL_MANDATE_EXISTS.
func TestBnplInstalmentMandateOptIn(t *testing.T) {
	t.Parallel()
	s := newBnplStack(t)
	s.approveKyc(t)
	a := s.activeAgreement(t, 120_000, 3, "order-pm")
	me := s.linkEmployeeUser(t, testkit.Unique("buyer")+"@bnpl-payroll.test")
	path := "/api/bnpl/agreements/" + a.ID + "/installment-mandate"
	optIn := map[string]any{"startPeriod": "2026-12"}
	written := func() []int {
		return []int{
			s.count(t, `SELECT count(*) FROM app.payroll_deduction_mandates WHERE tenant_id = $1`, s.tenant),
			s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'payroll.deduction_mandate_created.v1'`, s.tenant),
			s.count(t, `SELECT count(*) FROM app.audit_log WHERE tenant_id = $1 AND action = 'CreateDeductionMandate'`, s.tenant),
		}
	}
	nothing := written()
	require.Equal(t, []int{0, 0, 0}, nothing)

	// Bad input: 400, nothing written.
	for _, body := range []any{
		map[string]any{}, map[string]any{"startPeriod": "2026-13"}, map[string]any{"startPeriod": "2026-12", "endPeriod": "2026-11"},
		map[string]any{"startPeriod": "2026-12", "endPeriod": ""}, map[string]any{"startPeriod": "2026-12", "amountSantim": 1},
		map[string]any{"startPeriod": nil}, map[string]any{"startPeriod": 202612}, "[", "null",
	} {
		requireStatus(t, me.hostile(http.MethodPost, path, body), http.StatusBadRequest, "INVALID_REQUEST")
	}
	requireStatus(t, me.hostile(http.MethodPost, "/api/bnpl/agreements/bad%20id/installment-mandate", optIn), http.StatusBadRequest, "INVALID_REQUEST")
	require.Equal(t, nothing, written())

	// Not the customer: 404, nothing written.
	requireStatus(t, s.owner.call(http.MethodPost, path, optIn), http.StatusNotFound, "EMPLOYEE_NOT_LINKED")
	colleague := s.linkedCustomer(t, s.owner, s.tenant, "01")
	requireStatus(t, colleague.call(http.MethodPost, path, optIn), http.StatusNotFound, "BNPL_AGREEMENT_NOT_FOUND")
	seedEmployeeCatalogs(t, s.other)
	theirs := decode[businessListJSON](t, s.other.call(http.MethodGet, "/api/business", nil)).Businesses
	require.Len(t, theirs, 1)
	stranger := s.linkedCustomer(t, s.other, theirs[0].ID, "02")
	requireStatus(t, stranger.call(http.MethodPost, path, optIn), http.StatusNotFound, "BNPL_AGREEMENT_NOT_FOUND")
	requireStatus(t, me.call(http.MethodPost, "/api/bnpl/agreements/bnpl_00000000000000000000000000000000/installment-mandate", optIn),
		http.StatusNotFound, "BNPL_AGREEMENT_NOT_FOUND")
	require.Equal(t, nothing, written())

	// The opt-in: PENDING, the customer's, for the agreement, at its instalment.
	rec := me.call(http.MethodPost, path, optIn)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	md := decode[mandateJSON](t, rec)
	require.Equal(t, payroll.KindBnplInstallment, md.Kind)
	require.Equal(t, payroll.MandatePending, md.Status)
	require.Equal(t, s.employee, md.EmployeeID)
	require.Equal(t, a.Instalments[0].AmountSantim, *md.AmountSantim)
	require.Equal(t, a.ID, *md.Reference)
	require.Equal(t, []int{1, 1, 1}, written())
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'payroll.deduction_mandate_created.v1'
		AND payload->>'kind' = 'BNPL_INSTALLMENT'`, s.tenant))

	// Again: one live mandate per agreement (409, audited DENIED), nothing else written.
	requireStatus(t, me.call(http.MethodPost, path, optIn), http.StatusConflict, payroll.CodeMandateExists)
	require.Equal(t, []int{1, 1, 2}, written())
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.audit_log WHERE tenant_id = $1 AND action = 'CreateDeductionMandate'
		AND outcome = 'DENIED' AND details->>'code' = $2`, s.tenant, payroll.CodeMandateExists))
}
