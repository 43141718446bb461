package activities

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// Registered names of the loan disbursement saga's record steps (histories reference them).
const (
	LoanDisburseLoadPlanActivity      = "loan.disburse.LoadPlan"
	LoanDisburseClaimActivity         = "loan.disburse.Claim"
	LoanDisburseMarkDisbursedActivity = "loan.disburse.MarkDisbursed"
	LoanDisburseMarkFailedActivity    = "loan.disburse.MarkFailed"
)

// The record steps, typed (what workflows call).
var (
	LoanDisburseLoadPlan      = Activity[LoanDisburseStep, lending.DisbursePlan]{LoanDisburseLoadPlanActivity}
	LoanDisburseClaim         = Activity[LoanDisburseStep, lending.Disbursement]{LoanDisburseClaimActivity}
	LoanDisburseMarkDisbursed = Activity[LoanDisburseStep, lending.Disbursement]{LoanDisburseMarkDisbursedActivity}
	LoanDisburseMarkFailed    = Activity[LoanDisburseStep, lending.Disbursement]{LoanDisburseMarkFailedActivity}
)

// LoanDisburseSaga is the actor of the saga's steps and gates: tenancy.System(LoanDisburseSaga).
const LoanDisburseSaga = "loan-disburse"

// The subject and target of the disbursement's gates: the borrower (an employee) is screened, the
// loan is the audit rows' target.
const (
	LoanGateSubjectType = "EMPLOYEE"
	LoanGateTargetType  = "Loan"
)

// LoanDisburse holds the loan disbursement saga's record steps: each is internal/lending's
// function (disburse.go) in one tenant-scoped transaction through recordStep, acting as
// system:loan-disburse with the HTTP request id; the store's refusals are non-retryable errors
// typed by their lending code.
type LoanDisburse struct {
	DB *pgxpool.Pool // the runtime role (wagerail_app)
	// Now is the steps' clock (updated_at, disbursed_at); nil is time.Now.
	Now func() time.Time
}

// LoanDisburseStep names the loan and the saga run; the other fields belong to the steps that
// use them.
type LoanDisburseStep struct {
	Run
	LoanID     string
	LedgerTxID string // Claim
	TransferID string // MarkDisbursed
	// Reference is the transfer's partner reference (MarkDisbursed; "" in runs recorded before it
	// was passed: the settled event then names none).
	Reference string `json:",omitempty"`
	Reason    string // MarkFailed: the failure's code
}

// LoadPlan reads what paying the loan out needs. Its refusals (LOAN_NOT_FOUND, LOAN_INVALID_STATE,
// LOAN_FUNDING_ACCOUNT_NOT_SET, LOAN_EMPLOYEE_NOT_ACTIVE, LOAN_PAYOUT_ACCOUNT_CHANGED,
// LOAN_FI_NOT_AVAILABLE, LOAN_PRODUCT_NOT_OPTED_IN) are non-retryable. A loan this run already
// concluded (lending.DisbursementConcludedBy, asked first: a loan it failed is APPROVED again and
// would plan again) is answered as the plan's Concluded, and nothing else.
func (a *LoanDisburse) LoadPlan(ctx context.Context, in LoanDisburseStep) (lending.DisbursePlan, error) {
	var p lending.DisbursePlan
	err := a.inTx(ctx, in, func(ctx context.Context, tx pgx.Tx) error {
		c, err := lending.DisbursementConcludedBy(ctx, tx, in.LoanID, in.WorkflowID)
		if err != nil {
			return err
		}
		if c != nil {
			p = lending.DisbursePlan{Concluded: c}
			return nil
		}
		p, err = lending.LoadDisbursePlan(ctx, tx, in.LoanID, in.WorkflowID)
		return err
	})
	return p, err
}

// Claim moves the loan APPROVED → DISBURSING for this run with its pending ledger transaction
// (audit DisburseLoan); a second call by the same run is a no-op. LOAN_PRODUCT_NOT_OPTED_IN (the
// opt-in withdrawn since the plan) is non-retryable, as its other refusals.
func (a *LoanDisburse) Claim(ctx context.Context, in LoanDisburseStep) (lending.Disbursement, error) {
	var d lending.Disbursement
	err := a.inTx(ctx, in, func(ctx context.Context, tx pgx.Tx) (err error) {
		d, err = lending.ClaimDisbursement(ctx, tx, in.LoanID, in.WorkflowID, in.LedgerTxID, a.now())
		return err
	})
	return d, err
}

// MarkDisbursed moves the loan DISBURSING → ACTIVE (audit LoanDisbursed, loan.disbursed.v1,
// loan.bank_transfer_settled.v1).
func (a *LoanDisburse) MarkDisbursed(ctx context.Context, in LoanDisburseStep) (lending.Disbursement, error) {
	var d lending.Disbursement
	err := a.inTx(ctx, in, func(ctx context.Context, tx pgx.Tx) (err error) {
		d, err = lending.MarkDisbursed(ctx, tx, in.LoanID, in.WorkflowID, in.TransferID, in.Reference, a.now())
		return err
	})
	return d, err
}

// MarkFailed returns the loan DISBURSING → APPROVED with the failure's code (audit
// LoanDisbursementFailed, loan.disbursement_failed.v1).
func (a *LoanDisburse) MarkFailed(ctx context.Context, in LoanDisburseStep) (lending.Disbursement, error) {
	var d lending.Disbursement
	err := a.inTx(ctx, in, func(ctx context.Context, tx pgx.Tx) (err error) {
		d, err = lending.MarkDisbursementFailed(ctx, tx, in.LoanID, in.WorkflowID, in.Reason, a.now())
		return err
	})
	return d, err
}

// Register registers the record steps.
func (a *LoanDisburse) Register(r worker.ActivityRegistry) {
	LoanDisburseLoadPlan.Register(r, a.LoadPlan)
	LoanDisburseClaim.Register(r, a.Claim)
	LoanDisburseMarkDisbursed.Register(r, a.MarkDisbursed)
	LoanDisburseMarkFailed.Register(r, a.MarkFailed)
}

func (a *LoanDisburse) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// inTx runs fn as one of the saga's record steps (recordStep), its refusals typed by their
// lending codes (lendingError, loan_repay.go).
func (a *LoanDisburse) inTx(ctx context.Context, in LoanDisburseStep, fn func(context.Context, pgx.Tx) error) error {
	return recordStep(ctx, a.DB, in.Run, LoanDisburseSaga,
		errors.Join(field.Identifier("loanId", in.LoanID, field.MaxIdentifier), field.Text("reason", in.Reason, field.MaxText)),
		lendingError, fn, "loan_id", in.LoanID, "tx_id", in.LedgerTxID, "transfer_id", in.TransferID)
}
