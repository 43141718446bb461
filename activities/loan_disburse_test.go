package activities

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/gateway/gatewaytest"
	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/ledger"
	"github.com/wagerail/wagerail/ledger/chart"
	"github.com/wagerail/wagerail/ledger/ledgertest"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// loanWorld is a business with an employee, an FI with a product the business opted in to, and
// an APPROVED loan of 5,000 ETB over 12 months.
type loanWorld struct {
	d    *testkit.DB
	biz  *payrolltest.Org
	fiID string
	fi   context.Context
	emp  string
	loan lending.Loan
}

func newLoanWorld(t *testing.T) *loanWorld {
	t.Helper()
	d := testkit.NewDB(t)
	w := &loanWorld{d: d, biz: payrolltest.NewOrg(t, d)}
	ctx := context.Background()
	w.fiID = orgs.NewOrganizationID()
	var uid string
	require.NoError(t, db.InTenantTx(ctx, d.App, w.fiID, func(tx pgx.Tx) error {
		u, err := identity.CreateUser(ctx, tx, identity.NewUser{Email: strings.ToLower(w.fiID) + "@fi.example.com", Name: "Lender", PasswordHash: "x"})
		if err != nil {
			return err
		}
		uid = u.ID
		_, _, err = orgs.Create(ctx, tx, orgs.NewOrganization{ID: w.fiID, Name: "FI " + w.fiID, Kind: orgs.FI}, u.ID)
		return err
	}))
	d.VerifyPartner(t, w.fiID)
	w.fi = tenancy.With(ctx, tenancy.Scope{TenantID: w.fiID, Actor: uid, RequestID: "req-fi"})
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	var product lending.Product
	w.inFI(t, func(ctx context.Context, tx db.BunTx) (err error) {
		product, err = lending.CreateProduct(ctx, tx, lending.ProductTerms{Name: "Salary loan", AnnualRateBasisPoints: 1_800, MinTermMonths: 3,
			MaxTermMonths: 24, MinAmountSantim: 100_000, MaxAmountSantim: 10_000_000, FeeBasisPoints: 100, MaxDebtServiceBasisPoints: 3_333}, now)
		return err
	})
	w.emp = w.biz.Employee(t, payrolltest.Employee{})
	require.NoError(t, w.biz.In(func(ctx context.Context, tx db.BunTx) error {
		if _, err := lending.OptInToProduct(ctx, tx, product.ID, now); err != nil {
			return err
		}
		var err error
		w.loan, err = lending.Originate(ctx, tx, func(context.Context, db.BunTx, string) (lending.Projection, error) {
			return lending.Projection{Period: "2026-12", NetSantim: 2_000_000, RecoverableSantim: 600_000}, nil
		}, lending.QuoteRequest{EmployeeID: w.emp, ProductID: product.ID, AmountSantim: 500_000, TermMonths: 12}, now)
		return err
	}))
	w.inFI(t, func(ctx context.Context, tx db.BunTx) error {
		_, err := lending.ApproveLoan(ctx, tx, w.loan.ID, now)
		return err
	})
	return w
}

func (w *loanWorld) inFI(t *testing.T, fn func(ctx context.Context, tx db.BunTx) error) {
	t.Helper()
	require.NoError(t, tenancy.InBunTx(w.fi, w.biz.Bun, func(tx db.BunTx) error { return fn(w.fi, tx) }))
}

// TestLoanDisburseStepsAgainstTheStack runs the saga's steps as the workflow calls them, on the
// real database, ledger, gateway and sandbox: the plan (refused until the FI sets its accounts),
// the posting of the loan journal, the claim recording it, the transfer from the FI's funding
// account, and the settlement marking the loan ACTIVE; each step again is the first's answer.
func TestLoanDisburseStepsAgainstTheStack(t *testing.T) {
	w := newLoanWorld(t)
	ctx := context.Background()
	stack := gatewaytest.Start(t, w.d.App, gatewaytest.Options{})
	led := ledger.NewClient(ledgertest.Serve(t, w.d.App, nil), ledger.ClientOptions{})
	money := &Money{Ledger: led, Gateway: stack.GW.Client}
	a := &LoanDisburse{DB: w.d.App}
	wf := "idem-" + testkit.Unique("loan-disburse")
	run := Run{TenantID: w.biz.ID, WorkflowID: wf, CorrelationID: "http-1"}
	step := LoanDisburseStep{Run: run, LoanID: w.loan.ID}

	_, err := a.LoadPlan(ctx, step)
	requireErrType(t, err, lending.CodeFundingAccountNotSet, true)
	funding := testkit.Unique("FIFUND")
	stack.Account(t, funding, "Lender Funding", 10_000_000)
	stack.Account(t, "1000123456789", "Abebe Kebede", 0)
	w.inFI(t, func(ctx context.Context, tx db.BunTx) error {
		_, err := lending.PutFIAccounts(ctx, tx, lending.Account{Partner: "sandbox", AccountNumber: funding},
			lending.Account{Partner: "sandbox", AccountNumber: testkit.Unique("FISET")}, time.Now())
		return err
	})
	plan, err := a.LoadPlan(ctx, step)
	require.NoError(t, err)
	require.Equal(t, lending.Account{Partner: "sandbox", AccountNumber: funding}, plan.Funding)
	require.Equal(t, int64(500_000), plan.PrincipalSantim)
	require.Equal(t, w.fiID, plan.FIID)

	// The loan journal's posting: the ledger takes the chart's per-loan accounts.
	ref := partnerref.Leg(partnerref.LoanDisburse, wf, 1)
	posted, err := money.LedgerPostPending(ctx, LedgerPostInput{Run: run, IdempotencyKey: "loan-disburse:" + wf, Step: "disburse",
		Legs: []LedgerLeg{
			{Account: chart.BorrowerReceivable(w.loan.ID), Direction: "DEBIT", AmountSantim: 500_000},
			{Account: chart.FIPayable(w.fiID, w.loan.ID), Direction: "CREDIT", AmountSantim: 500_000},
		}, Metadata: map[string]string{"loanId": w.loan.ID, partnerref.LedgerMetadataKey: ref}})
	require.NoError(t, err)
	require.Equal(t, "PENDING", posted.Status)

	claim := step
	claim.LedgerTxID = posted.TxID
	d, err := a.Claim(ctx, claim)
	require.NoError(t, err)
	require.Equal(t, lending.LoanDisbursing, d.Status)
	again, err := a.Claim(ctx, claim)
	require.NoError(t, err)
	require.Equal(t, d, again)
	other := claim
	other.WorkflowID = "idem-other"
	_, err = a.Claim(ctx, other)
	requireErrType(t, err, lending.CodeLoanInvalidState, true)

	tr, err := money.InitiateTransfer(ctx, TransferInput{Run: run, Partner: "sandbox", Reference: ref, FromAccount: funding,
		ToAccount: plan.Destination.AccountNumber, AmountSantim: plan.PrincipalSantim, Domain: "LOAN"})
	require.NoError(t, err)
	require.Equal(t, TransferAccepted, tr.Outcome)
	require.NoError(t, money.LedgerCommit(ctx, LedgerSettleInput{Run: run, TxID: posted.TxID}))
	done := step
	done.TransferID = tr.TransferID
	d, err = a.MarkDisbursed(ctx, done)
	require.NoError(t, err)
	require.Equal(t, lending.LoanActive, d.Status)
	require.Equal(t, tr.TransferID, d.TransferID)
	_, err = a.MarkDisbursed(ctx, done)
	require.NoError(t, err)
	require.Equal(t, 1, w.biz.Count(t, `SELECT count(*) FROM app.outbox WHERE type = 'loan.disbursed.v1'`))
	require.Equal(t, 1, w.biz.Count(t, `SELECT count(*) FROM app.audit_log WHERE action = 'DisburseLoan' AND actor = 'system:loan-disburse'`))

	tx, err := led.GetTransaction(ctx, &ledgerv1.GetTransactionRequest{TenantId: w.biz.ID, TransactionId: posted.TxID})
	require.NoError(t, err)
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, tx.GetTransaction().GetStatus())
	require.Equal(t, ref, tx.GetTransaction().GetMetadata()[partnerref.LedgerMetadataKey])
	// The same run's steps again (its workflow task lost after they ran): the loan it paid out is
	// answered as concluded, not refused; another run's plan is refused.
	plan, err = a.LoadPlan(ctx, step)
	require.NoError(t, err)
	require.Equal(t, lending.DisbursePlan{Concluded: &lending.DisburseConcluded{Status: lending.LoanActive, LedgerTxID: posted.TxID,
		TransferID: tr.TransferID}}, plan)
	otherStep := step
	otherStep.WorkflowID = "idem-other"
	_, err = a.LoadPlan(ctx, otherStep)
	requireErrType(t, err, lending.CodeLoanInvalidState, true)
}

// A run whose steps run again after a lost workflow task, its transfer failed: the loan is
// APPROVED again under its id and would plan (and be claimed and sent) again; LoadPlan answers the
// recorded failure instead, before planning. Another run plans it.
func TestLoanDisburseLoadPlanAnswersTheRunsOwnFailure(t *testing.T) {
	w := newLoanWorld(t)
	ctx := context.Background()
	w.inFI(t, func(ctx context.Context, tx db.BunTx) error {
		_, err := lending.PutFIAccounts(ctx, tx, lending.Account{Partner: "sandbox", AccountNumber: testkit.Unique("FIFUND")},
			lending.Account{Partner: "sandbox", AccountNumber: testkit.Unique("FISET")}, time.Now())
		return err
	})
	a := &LoanDisburse{DB: w.d.App}
	step := LoanDisburseStep{Run: Run{TenantID: w.biz.ID, WorkflowID: "idem-" + testkit.Unique("loan-disburse"), CorrelationID: "http-1"},
		LoanID: w.loan.ID}
	claim := step
	claim.LedgerTxID = "ltx-1"
	_, err := a.Claim(ctx, claim)
	require.NoError(t, err)
	failed := step
	failed.Reason = "INSUFFICIENT_FUNDS"
	_, err = a.MarkFailed(ctx, failed)
	require.NoError(t, err)

	plan, err := a.LoadPlan(ctx, step)
	require.NoError(t, err)
	require.Equal(t, lending.DisbursePlan{Concluded: &lending.DisburseConcluded{Status: lending.DisbursementFailed, LedgerTxID: "ltx-1",
		Reason: "INSUFFICIENT_FUNDS"}}, plan)
	_, err = a.MarkFailed(ctx, failed)
	require.NoError(t, err, "recorded again: a no-op")
	require.Equal(t, 1, w.biz.Count(t, `SELECT count(*) FROM app.outbox WHERE type = 'loan.disbursement_failed.v1'`))

	other := step
	other.WorkflowID = "idem-other"
	plan, err = a.LoadPlan(ctx, other)
	require.NoError(t, err)
	require.Nil(t, plan.Concluded)
	require.Equal(t, lending.LoanApproved, plan.Status)
	require.Equal(t, int64(500_000), plan.PrincipalSantim)
}

// The lending store's refusals become non-retryable errors typed by their code; the rest is
// temporalError's; bad input and a missing pool are refused before any transaction.
func TestLoanDisburseStepErrors(t *testing.T) {
	for err, want := range map[error]string{
		fmt.Errorf("load: %w", lending.ErrLoanNotFound):  lending.CodeLoanNotFound,
		fmt.Errorf("load: %w", lending.ErrFundingNotSet): lending.CodeFundingAccountNotSet,
	} {
		requireErrType(t, lendingError(err), want, true)
	}
	requireErrType(t, lendingError(fmt.Errorf("connection reset")), ErrTypeDependency, false)
	ctx := context.Background()
	good := LoanDisburseStep{Run: Run{TenantID: "t1", WorkflowID: "idem-t1-X", CorrelationID: "http-1"}, LoanID: "loan_1"}
	_, err := (&LoanDisburse{}).LoadPlan(ctx, good)
	requireErrType(t, err, ErrTypeMisconfigured, true)
	d := testkit.NewDB(t)
	a := &LoanDisburse{DB: d.App}
	for name, in := range map[string]LoanDisburseStep{
		"no tenant":       {Run: Run{WorkflowID: "wf"}, LoanID: "loan_1"},
		"bad loan id":     {Run: Run{TenantID: "t1", WorkflowID: "wf"}, LoanID: "loan 1"},
		"control in text": {Run: Run{TenantID: "t1", WorkflowID: "wf"}, LoanID: "loan_1", Reason: "x\x00"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := a.LoadPlan(ctx, in)
			requireErrType(t, err, ErrTypeInvalidArgument, true)
			_, err = a.MarkFailed(ctx, in)
			requireErrType(t, err, ErrTypeInvalidArgument, true)
		})
	}
}
