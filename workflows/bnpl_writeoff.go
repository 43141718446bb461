package workflows

import (
	"errors"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/bnpl"
	"github.com/wagerail/wagerail/ledger/chart"
)

// The BNPL write-off saga: once the merchant has reported the order REFUNDED or CANCELLED, a
// platform operator writes off what the customer still owes on the agreement (POST
// /api/bnpl/agreements/<id>/write-off). Its journal moves money in the ledger, so the route
// starts this saga. Rules: internal/bnpl/writeoff.go.

// Registered names.
const (
	BnplWriteOffWorkflowName = "BnplWriteOff"
	// BnplWriteOffAcceptedUpdate completes once the agreement is WRITTEN_OFF (WRITTEN_OFF), when
	// the ledger did not take the journal at the first try (PENDING: the saga goes on), or with
	// the refusal (an ApplicationError whose Type is the BNPL code).
	BnplWriteOffAcceptedUpdate   = "bnpl-write-off-accepted"
	BnplWriteOffAcceptedUpdateID = "accepted"
)

// bnplWriteOffLineage is the write-off journal's lineage step in the ledger.
const bnplWriteOffLineage = "bnpl-write-off"

// BnplWriteOffInput starts the saga. The workflow id is idempotency.WorkflowID(tenant, route,
// Idempotency-Key).
type BnplWriteOffInput struct {
	TenantID      string // the agreement's business
	AgreementID   string
	Reason        string
	ActorID       string // the operator who asked
	CorrelationID string
}

// BnplWriteOffAccepted is the update's answer (Status WRITTEN_OFF or PENDING, as the loan
// write-off's).
type BnplWriteOffAccepted struct {
	Status     string
	Agreement  bnpl.Agreement
	WriteOff   bnpl.WriteOff
	WorkflowID string
}

// BnplWriteOffResult is the workflow's result (Status WRITTEN_OFF, REFUSED or FAILED with Code).
type BnplWriteOffResult struct {
	AgreementID string
	Status      string
	Code        string
	Agreement   bnpl.Agreement
	WriteOff    bnpl.WriteOff
}

// BnplWriteOff claims the write-off (R = the DUE instalments' total), posts the journal of
// internal/bnpl/doc.go (Dr misc-loss R, Cr receivable-from-customer:<agreement> R; POSTED under
// bnpl.WriteOffLedgerKey) and makes the agreement WRITTEN_OFF. A ledger refusal releases the
// claim.
func BnplWriteOff(ctx workflow.Context, in BnplWriteOffInput) (BnplWriteOffResult, error) {
	run := activities.Run{TenantID: in.TenantID, WorkflowID: workflow.GetInfo(ctx).WorkflowExecution.ID, CorrelationID: in.CorrelationID}
	var ans answer[BnplWriteOffAccepted]
	return answeredRun(ctx, &ans, BnplWriteOffAcceptedUpdate, "write-off saga", func() (BnplWriteOffResult, error) {
		return bnplWriteOff(ctx, in, run, &ans)
	})
}

func bnplWriteOff(ctx workflow.Context, in BnplWriteOffInput, run activities.Run, ans *answer[BnplWriteOffAccepted]) (BnplWriteOffResult, error) {
	step := activities.BnplWriteOffStep{Run: run, AgreementID: in.AgreementID, ActorID: in.ActorID, Reason: in.Reason}
	res := BnplWriteOffResult{AgreementID: in.AgreementID}
	accept := func(status string, a bnpl.Agreement, w bnpl.WriteOff) {
		ans.accept(BnplWriteOffAccepted{Status: status, Agreement: a, WriteOff: w, WorkflowID: run.WorkflowID})
	}

	// 1. The claim.
	claim, err := callLocal(ctx, localRecordOptions(), activities.BnplWriteOffBegin, step)
	if err != nil {
		ans.refuse(err)
		var ae *temporal.ApplicationError
		if errors.As(err, &ae) && ae.NonRetryable() {
			if _, ok := bnpl.RefusalOf(ae.Type()); ok {
				res.Status, res.Code = WriteOffRefused, ae.Type()
				return res, nil
			}
		}
		return res, err
	}
	if claim.Done {
		done := step
		done.LedgerTxID = claim.WriteOff.LedgerTxID
		out, err := callLocal(ctx, localCatchUpRecordOptions(), activities.BnplWriteOffComplete, done) // the agreement with its instalments
		if err != nil {
			ans.refuse(err)
			return res, err
		}
		accept(WriteOffWrittenOff, out.Agreement, out.WriteOff)
		res.Status, res.Agreement, res.WriteOff = WriteOffWrittenOff, out.Agreement, out.WriteOff
		return res, nil
	}

	// 2. The journal.
	a, amount := claim.Agreement, claim.WriteOff.AmountSantim
	post := activities.LedgerPostInput{Run: run, IdempotencyKey: bnpl.WriteOffLedgerKey(a.ID), Step: bnplWriteOffLineage,
		Legs: []activities.LedgerLeg{
			{Account: chart.MiscLoss, Direction: "DEBIT", AmountSantim: amount},
			{Account: chart.CustomerReceivable(a.ID), Direction: "CREDIT", AmountSantim: amount},
		},
		Metadata: map[string]string{"agreement_id": a.ID, "kind": "bnpl_write_off", "merchant_id": a.MerchantID,
			"merchant_status": claim.WriteOff.MerchantStatus}}
	txID, err := postClaimedJournal(ctx, post, func() { accept(WriteOffPending, a, claim.WriteOff) })
	if err != nil {
		ans.refuse(err)
		if retryableFailure(err) {
			return res, err // the claim stays PENDING; the ledger key makes a repost safe
		}
		release := step
		release.Reason = activities.ErrorType(err)
		if res.WriteOff, err = callLocal(ctx, localCatchUpRecordOptions(), activities.BnplWriteOffFail, release); err != nil {
			return res, err
		}
		res.Status, res.Code = WriteOffFailed, release.Reason
		return res, nil
	}

	// 3. The record: the agreement and its DUE instalments WRITTEN_OFF, audit row and event.
	done := step
	done.LedgerTxID = txID
	out, err := callLocal(ctx, localCatchUpRecordOptions(), activities.BnplWriteOffComplete, done)
	if err != nil {
		ans.refuse(err)
		return res, err
	}
	accept(WriteOffWrittenOff, out.Agreement, out.WriteOff)
	workflow.GetLogger(ctx).Info("BNPL agreement written off", "tenant_id", in.TenantID, "agreement_id", in.AgreementID, "tx_id", txID,
		"amount_santim", amount)
	res.Status, res.Agreement, res.WriteOff = WriteOffWrittenOff, out.Agreement, out.WriteOff
	return res, nil
}
