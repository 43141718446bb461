package workflows

import (
	"errors"
	"strconv"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/bnpl"
	"github.com/wagerail/wagerail/internal/platform/idempotency"
	"github.com/wagerail/wagerail/ledger/chart"
)

// The BNPL collection saga: one instalment of an ACTIVE agreement collected (its amount taken
// from the customer's pay). The collect route starts it (Update-with-Start); a payroll run may
// start it with Source PAYROLL.
//
// There is one saga per instalment (BnplCollectWorkflowID), whatever key or caller asks: racing
// collections of one instalment attach to that one run and its one "accepted" update, instead of
// each starting a saga of its own that only its hold would refuse (20 racing keys were 20 sagas
// on one history shard: under load most callers' waits ran out before their saga was even
// known, and they were answered 5xx). A new run may start under the id once the last one has
// closed (the route starts it with WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE): a run after a
// recorded one finds the instalment collected by this id and answers it again; a run after a
// refused journal collects the instalment, due again, under the same ledger key.

// Registered names.
const (
	BnplCollectWorkflowName = "BnplCollect"
	// BnplCollectAcceptedUpdate completes once the collection is recorded (BnplCollectAccepted)
	// or with the refusal (an ApplicationError whose Type is the BNPL code).
	BnplCollectAcceptedUpdate   = "bnpl-collect-accepted"
	BnplCollectAcceptedUpdateID = "accepted"
)

// The collection's outcomes.
const (
	BnplCollectRecorded = "RECORDED"
	BnplCollectRefused  = ResultRefused
	BnplCollectFailed   = "FAILED"
)

// BnplCollectWorkflowID is the collection saga's workflow id of instalment index of an agreement
// (idempotency.WorkflowID's hashed form, so the ledger key "bnpl-collect:<id>" stays bounded).
func BnplCollectWorkflowID(tenantID, agreementID string, index int) string {
	return idempotency.WorkflowID(tenantID, "bnpl-collect", agreementID+"#"+strconv.Itoa(index))
}

// BnplCollectInput starts the saga; the workflow id is BnplCollectWorkflowID.
type BnplCollectInput struct {
	TenantID      string
	AgreementID   string
	Index         int
	Source        string // MANUAL or PAYROLL
	ActorID       string
	CorrelationID string
	// Payroll is set on a payroll run's collection (PayrollCompleteBatch, workflow id
	// PayrollProductWorkflowID): Index is not used, the reserve step takes the agreement's
	// earliest DUE instalment and checks it is the amount the run withheld (Source PAYROLL).
	Payroll *BnplPayrollSource `json:",omitempty"`
}

// BnplPayrollSource is a collection by payroll deduction: the product mandate and the amount
// the payroll run withheld under it.
type BnplPayrollSource struct {
	MandateID    string
	AmountSantim int64
}

// BnplCollectAccepted is the update's answer.
type BnplCollectAccepted struct {
	Collection bnpl.Collection
	WorkflowID string
}

// BnplCollectResult is the workflow's result.
type BnplCollectResult struct {
	Status     string // RECORDED, REFUSED or FAILED
	Code       string
	Collection bnpl.Collection
}

// bnplCollectRefusals are the hold's refusals: the saga ends REFUSED, nothing written.
var bnplCollectRefusals = map[string]bool{bnpl.CodeAgreementNotFound: true, bnpl.CodeInvalidState: true,
	bnpl.CodeInstalmentNotFound: true, bnpl.CodeInstalmentNotDue: true, bnpl.CodeOrderReversed: true,
	bnpl.CodeNothingOutstanding: true, bnpl.CodeMandateAmount: true, bnpl.CodeMandateInOpenRun: true}

// BnplCollect holds the instalment for this run (one collection of an instalment at a time: a
// racing collection is refused BNPL_INSTALMENT_NOT_DUE), posts its journal (Dr
// payroll-clearing:<agreement> a / Cr receivable-from-customer:<agreement> a, POSTED under the
// run's ledger key), then records it COLLECTED (the agreement SETTLED with its last instalment).
// A ledger refusal releases the hold.
func BnplCollect(ctx workflow.Context, in BnplCollectInput) (BnplCollectResult, error) {
	run := activities.Run{TenantID: in.TenantID, WorkflowID: workflow.GetInfo(ctx).WorkflowExecution.ID, CorrelationID: in.CorrelationID}
	var ans answer[BnplCollectAccepted]
	return answeredRun(ctx, &ans, BnplCollectAcceptedUpdate, "bnpl collection saga", func() (BnplCollectResult, error) {
		return bnplCollect(ctx, in, run, &ans)
	})
}

func bnplCollect(ctx workflow.Context, in BnplCollectInput, run activities.Run, ans *answer[BnplCollectAccepted]) (BnplCollectResult, error) {
	step := activities.BnplStep{Run: run, AgreementID: in.AgreementID, Index: in.Index, Source: in.Source}
	if in.Payroll != nil {
		step.Source, step.MandateID, step.MandateSantim = bnpl.SourcePayroll, in.Payroll.MandateID, in.Payroll.AmountSantim
	}
	c, err := callLocal(ctx, localRecordOptions(), activities.BnplCollectReserve, step)
	if err != nil {
		ans.refuse(err)
		var ae *temporal.ApplicationError
		if errors.As(err, &ae) && ae.NonRetryable() && bnplCollectRefusals[ae.Type()] {
			return BnplCollectResult{Status: BnplCollectRefused, Code: ae.Type()}, nil
		}
		return BnplCollectResult{}, err
	}
	step.Index = c.Index // the instalment the reserve step held (a payroll run's: the earliest DUE)
	if c.Status == bnpl.InstalmentCollected {
		ans.accept(BnplCollectAccepted{Collection: c, WorkflowID: run.WorkflowID})
		return BnplCollectResult{Status: BnplCollectRecorded, Collection: c}, nil
	}
	// The hold is the instalment's: nothing but this run posts or releases it, so the journal is
	// retried for as long as a catch-up step is (the caller's wait runs out first: 202).
	posted, err := callLocal(ctx, localCatchUpOptions(), activities.LedgerPost, activities.LedgerPostInput{Run: run,
		IdempotencyKey: "bnpl-collect:" + run.WorkflowID, Step: "bnpl-collect",
		Legs: []activities.LedgerLeg{
			{Account: chart.PayrollClearing + ":" + in.AgreementID, Direction: "DEBIT", AmountSantim: c.AmountSantim},
			{Account: chart.CustomerReceivable(in.AgreementID), Direction: "CREDIT", AmountSantim: c.AmountSantim},
		},
		Metadata: map[string]string{"kind": "bnpl_collection", "agreementId": in.AgreementID, "instalmentIndex": strconv.Itoa(c.Index),
			"source": step.Source}})
	if err != nil {
		if retryableFailure(err) {
			ans.refuse(err)
			return BnplCollectResult{}, err // a week passed: the hold stays for an operator; the ledger key makes a repost safe
		}
		release := step
		release.Reason = activities.ErrorType(err)
		if c, err = callLocal(ctx, localCatchUpRecordOptions(), activities.BnplCollectRelease, release); err != nil {
			ans.refuse(err)
			return BnplCollectResult{}, err
		}
		// The instalment is due again: the callers get the collection's refusal code (the
		// ledger's reason stays in the audit row and the result).
		ans.refuse(temporal.NewNonRetryableApplicationError("the ledger refused the collection's journal: "+release.Reason,
			bnpl.CodeCollectionRefused, nil))
		return BnplCollectResult{Status: BnplCollectFailed, Code: release.Reason, Collection: c}, nil
	}
	step.LedgerTxID = posted.TxID
	c, err = callLocal(ctx, localCatchUpRecordOptions(), activities.BnplCollectMark, step)
	if err != nil {
		ans.refuse(err)
		return BnplCollectResult{}, err
	}
	ans.accept(BnplCollectAccepted{Collection: c, WorkflowID: run.WorkflowID})
	workflow.GetLogger(ctx).Info("bnpl instalment collected", "tenant_id", in.TenantID, "agreement_id", in.AgreementID,
		"index", c.Index, "tx_id", posted.TxID, "agreement_status", c.AgreementStatus)
	return BnplCollectResult{Status: BnplCollectRecorded, Collection: c}, nil
}
