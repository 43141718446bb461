package activities

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// Registered names of the EWA disburse saga's record steps (histories reference them).
const (
	EwaLoadPlanActivity      = "ewa.LoadPlan"
	EwaClaimActivity         = "ewa.Claim"
	EwaSetLedgerTxActivity   = "ewa.SetLedgerTx"
	EwaMarkDisbursedActivity = "ewa.MarkDisbursed"
	EwaMarkFailedActivity    = "ewa.MarkFailed"
	// The fewer, larger steps of runs begun after ewaFewerStepsChange (workflows/versions.go).
	EwaBeginActivity             = "ewa.Begin"
	EwaClaimWithLedgerTxActivity = "ewa.ClaimWithLedgerTx"
)

// The record steps, typed (what workflows call). The state changes are actions: the saga needs
// only whether they happened, and a result would be recorded in every run's history for nothing
// (the request they once returned was about 700 bytes of JSON per step; recorded histories that
// hold it still replay, its result is not read).
var (
	EwaLoadPlan      = Activity[EwaStep, ewa.Plan]{EwaLoadPlanActivity}
	EwaClaim         = Action[EwaStep]{EwaClaimActivity}
	EwaSetLedgerTx   = Action[EwaStep]{EwaSetLedgerTxActivity}
	EwaMarkDisbursed = Action[EwaStep]{EwaMarkDisbursedActivity}
	EwaMarkFailed    = Action[EwaStep]{EwaMarkFailedActivity}

	EwaBegin             = Activity[EwaStep, EwaBeginResult]{EwaBeginActivity}
	EwaClaimWithLedgerTx = Action[EwaStep]{EwaClaimWithLedgerTxActivity}
)

// The subject and target of the disburse saga's gates: the employee is screened, the request is
// the audit rows' target.
const (
	EwaGateSubjectType = "EMPLOYEE"
	EwaGateTargetType  = "EwaRequest"
)

// EwaSaga is the actor of the saga's steps: tenancy.System(EwaSaga).
const EwaSaga = "ewa-disburse"

// Ewa holds the disburse saga's record steps: each is internal/ewa's function in one
// tenant-scoped transaction (the state change, its audit row and its outbox event commit
// together), acting as system:ewa-disburse with the HTTP request id.
type Ewa struct {
	DB *pgxpool.Pool // the runtime role (wagerail_app)
	// Now is Begin's KYC clock (an approval past its validity refuses); nil is time.Now.
	Now func() time.Time
}

// EwaBeginResult is Begin's answer: the plan, and the refusal of the KYC or sanctions gate when
// one said no (nothing else happened then but its audit row).
type EwaBeginResult struct {
	Plan ewa.Plan
	// Refused is the gate's refusal code (GateKycNotApproved, GateSanctionsBlocked), "" when
	// both passed; Reason is its text.
	Refused string `json:",omitempty"`
	Reason  string `json:",omitempty"`
	// Concluded is set, and nothing else, when this run already concluded the request
	// (ewa.ConcludedBy): its steps run again after a lost workflow task.
	Concluded *EwaConcluded `json:",omitempty"`
}

// EwaConcluded is the outcome a run already recorded on its request: FAILED with its reason, or
// DISBURSED (REPAID since) with its ledger transaction and transfer.
type EwaConcluded struct {
	Status                                ewa.Status
	LedgerTxID, TransferID, FailureReason string `json:",omitempty"`
}

// EwaStep names the request and the saga run; the other fields belong to the steps that use
// them.
type EwaStep struct {
	Run
	RequestID  string
	LedgerTxID string // SetLedgerTx
	TransferID string // MarkDisbursed
	// Reference is the transfer's partner reference (MarkDisbursed; "" in runs recorded before it
	// was passed: the settled event then names none).
	Reference string `json:",omitempty"`
	Reason    string // MarkFailed
}

// LoadPlan reads what disbursing the request needs. Not found, not disbursable and no funding
// account are non-retryable (EWA_REQUEST_NOT_FOUND, EWA_INVALID_STATE,
// EWA_FUNDING_ACCOUNT_NOT_SET).
func (a *Ewa) LoadPlan(ctx context.Context, in EwaStep) (ewa.Plan, error) {
	var p ewa.Plan
	err := a.inTx(ctx, in, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		p, err = ewa.LoadPlan(ctx, tx, in.RequestID, in.WorkflowID)
		return err
	})
	return p, err
}

// Claim moves the request REQUESTED → DISBURSING for this saga (a second call by the same saga
// is a no-op).
func (a *Ewa) Claim(ctx context.Context, in EwaStep) error {
	return a.inTx(ctx, in, func(ctx context.Context, tx pgx.Tx) error {
		_, err := ewa.Claim(ctx, tx, in.RequestID, in.WorkflowID)
		return err
	})
}

// SetLedgerTx records the claim's pending ledger transaction.
func (a *Ewa) SetLedgerTx(ctx context.Context, in EwaStep) error {
	return a.inTx(ctx, in, func(ctx context.Context, tx pgx.Tx) error {
		return ewa.SetLedgerTx(ctx, tx, in.RequestID, in.WorkflowID, in.LedgerTxID)
	})
}

// MarkDisbursed moves DISBURSING → DISBURSED (audit, ewa.disbursed.v1, ewa.bank_transfer_settled.v1).
func (a *Ewa) MarkDisbursed(ctx context.Context, in EwaStep) error {
	return a.inTx(ctx, in, func(ctx context.Context, tx pgx.Tx) error {
		_, err := ewa.MarkDisbursed(ctx, tx, in.RequestID, in.WorkflowID, in.TransferID, in.Reference)
		return err
	})
}

// MarkFailed moves DISBURSING → FAILED with the reason (audit, ewa.disbursement_failed.v1).
func (a *Ewa) MarkFailed(ctx context.Context, in EwaStep) error {
	return a.inTx(ctx, in, func(ctx context.Context, tx pgx.Tx) error {
		_, err := ewa.MarkFailed(ctx, tx, in.RequestID, in.WorkflowID, in.Reason)
		return err
	})
}

// Begin is LoadPlan, the KYC gate and the sanctions gate in one transaction: the plan, then the
// employee's KYC and screening, each refusal written as its gate's one audit row (the gates of
// activities.Gates, run here against the same transaction). A gate that cannot decide fails the
// step (retryable); the store's refusals are as LoadPlan's, but for a request this run already
// concluded (ewa.ConcludedBy), which is answered as Concluded.
func (a *Ewa) Begin(ctx context.Context, in EwaStep) (EwaBeginResult, error) {
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	var res EwaBeginResult
	err := a.inTx(ctx, in, func(ctx context.Context, tx pgx.Tx) error {
		p, employee, err := ewa.LoadPlanOf(ctx, tx, in.RequestID, in.WorkflowID)
		if errors.Is(err, ewa.ErrNotDisbursable) {
			r, done, cerr := ewa.ConcludedBy(ctx, tx, in.RequestID, in.WorkflowID)
			if cerr != nil {
				return cerr
			}
			if done {
				res = EwaBeginResult{Concluded: &EwaConcluded{Status: r.Status, LedgerTxID: r.LedgerTxID, TransferID: r.TransferID,
					FailureReason: r.FailureReason}}
				return nil
			}
		}
		if err != nil {
			return err
		}
		gin := GateInput{Saga: EwaSaga, Run: in.Run, SubjectType: EwaGateSubjectType, SubjectID: p.EmployeeID,
			TargetType: EwaGateTargetType, TargetID: in.RequestID}
		if err := gin.validate(false); err != nil {
			return err
		}
		refused, err := kycGateTx(ctx, tx, gin, now())
		if err == nil && refused == nil {
			refused, err = sanctionsGateTx(ctx, tx, gin, &employee)
		}
		if err != nil {
			return err
		}
		res = EwaBeginResult{Plan: p}
		if refused != nil {
			res.Refused, res.Reason = ErrorType(refused), refused.Error()
		}
		return nil
	})
	if err == nil && res.Refused != "" {
		in.logger(ctx, "ewa_request_id", in.RequestID).Info("gate refused", "code", res.Refused)
	}
	return res, err
}

// ClaimWithLedgerTx is Claim and SetLedgerTx in one transaction: REQUESTED → DISBURSING for
// this saga with the pending ledger transaction already posted (a second call by the same saga
// is a no-op).
func (a *Ewa) ClaimWithLedgerTx(ctx context.Context, in EwaStep) error {
	return a.inTx(ctx, in, func(ctx context.Context, tx pgx.Tx) error {
		_, err := ewa.ClaimWithLedgerTx(ctx, tx, in.RequestID, in.WorkflowID, in.LedgerTxID)
		return err
	})
}

// Register registers the record steps.
func (a *Ewa) Register(r worker.ActivityRegistry) {
	EwaLoadPlan.Register(r, a.LoadPlan)
	EwaClaim.Register(r, a.Claim)
	EwaSetLedgerTx.Register(r, a.SetLedgerTx)
	EwaMarkDisbursed.Register(r, a.MarkDisbursed)
	EwaMarkFailed.Register(r, a.MarkFailed)
	EwaBegin.Register(r, a.Begin)
	EwaClaimWithLedgerTx.Register(r, a.ClaimWithLedgerTx)
}

// inTx runs fn as one of the saga's record steps (recordStep), its refusals typed by their EWA
// codes.
func (a *Ewa) inTx(ctx context.Context, in EwaStep, fn func(context.Context, pgx.Tx) error) error {
	return recordStep(ctx, a.DB, in.Run, EwaSaga,
		errors.Join(field.Identifier("requestId", in.RequestID, field.MaxIdentifier), field.Text("reason", in.Reason, field.MaxText)),
		ewaError, fn, "ewa_request_id", in.RequestID, "tx_id", in.LedgerTxID, "transfer_id", in.TransferID)
}

// ewaError maps the EWA store's refusals to non-retryable errors typed by their API code
// (ewa.CodeOf); the rest through temporalError.
func ewaError(err error) error {
	if code := ewa.CodeOf(err); code != "" {
		return nonRetryable(err.Error(), code)
	}
	return temporalError(err)
}
