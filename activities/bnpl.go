package activities

import (
	"context"
	"errors"
	"time"

	"github.com/uptrace/bun"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/internal/bnpl"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// Registered names of the BNPL sagas' record steps (histories reference them).
const (
	BnplActivateLoadPlanActivity   = "bnpl.activate.LoadPlan"
	BnplActivateCreateActivity     = "bnpl.activate.Create"
	BnplActivateMarkActiveActivity = "bnpl.activate.MarkActive"
	BnplActivateMarkFailedActivity = "bnpl.activate.MarkFailed"
	BnplCollectReserveActivity     = "bnpl.collect.Reserve"
	BnplCollectMarkActivity        = "bnpl.collect.MarkCollected"
	BnplCollectReleaseActivity     = "bnpl.collect.Release"
)

// The record steps, typed (what workflows call).
var (
	BnplActivateLoadPlan   = Activity[BnplStep, bnpl.ActivatePlan]{BnplActivateLoadPlanActivity}
	BnplActivateCreate     = Activity[BnplStep, bnpl.Agreement]{BnplActivateCreateActivity}
	BnplActivateMarkActive = Activity[BnplStep, bnpl.Agreement]{BnplActivateMarkActiveActivity}
	BnplActivateMarkFailed = Activity[BnplStep, bnpl.Agreement]{BnplActivateMarkFailedActivity}
	BnplCollectReserve     = Activity[BnplStep, bnpl.Collection]{BnplCollectReserveActivity}
	BnplCollectMark        = Activity[BnplStep, bnpl.Collection]{BnplCollectMarkActivity}
	BnplCollectRelease     = Activity[BnplStep, bnpl.Collection]{BnplCollectReleaseActivity}
)

// The actors of the BNPL sagas' steps and gates (tenancy.System(…)), and their gates' subject
// and target: the customer (an employee) is screened, the agreement is the audit rows' target.
const (
	BnplActivateSaga    = "bnpl-activate"
	BnplCollectSaga     = "bnpl-collect"
	BnplGateSubjectType = "EMPLOYEE"
	BnplGateTargetType  = "BnplAgreement"
)

// Bnpl holds the BNPL sagas' record steps: each is internal/bnpl's function in one
// tenant-scoped transaction through recordStep; the store's refusals are non-retryable errors
// typed by their BNPL code.
type Bnpl struct {
	DB *bun.DB // db.NewBun over the runtime role's pool (wagerail_app)
	// Now is the steps' clock; nil is time.Now.
	Now func() time.Time
}

// BnplStep names the saga run and what its step needs.
type BnplStep struct {
	Run
	Request     bnpl.ActivateRequest `json:",omitempty"` // LoadPlan
	Plan        bnpl.ActivatePlan    `json:",omitempty"` // Create
	CreatedBy   string               `json:",omitempty"` // Create: the user who asked
	AgreementID string
	Index       int    // the collection's instalment
	Source      string // the collection's source (MANUAL, PAYROLL)
	// MandateID and MandateSantim: a payroll run's collection (Reserve takes the agreement's
	// earliest DUE instalment, bnpl.ReservePayroll, instead of Index); "" for the others.
	MandateID     string `json:",omitempty"`
	MandateSantim int64  `json:",omitempty"`
	LedgerTxID    string // Create, MarkCollected
	TransferID    string // MarkActive
	// Reference is the merchant settlement's partner reference (MarkActive; "" in runs recorded
	// before it was passed: the settled event then names none).
	Reference string `json:",omitempty"`
	Reason    string // MarkFailed, Release: the failure's code
}

// LoadPlan reads what activating the agreement needs.
func (a *Bnpl) LoadPlan(ctx context.Context, in BnplStep) (bnpl.ActivatePlan, error) {
	var p bnpl.ActivatePlan
	err := a.inTx(ctx, in, BnplActivateSaga, func(ctx context.Context, tx db.BunTx) (err error) {
		p, err = bnpl.LoadActivatePlan(ctx, tx, in.WorkflowID, in.Request)
		return err
	})
	return p, err
}

// Create records the agreement ACCEPTED with its pending ledger transaction.
func (a *Bnpl) Create(ctx context.Context, in BnplStep) (bnpl.Agreement, error) {
	var out bnpl.Agreement
	err := a.inTx(ctx, in, BnplActivateSaga, func(ctx context.Context, tx db.BunTx) (err error) {
		out, err = bnpl.CreateAgreement(ctx, tx, in.Plan, in.WorkflowID, in.LedgerTxID, in.CreatedBy, a.now())
		return err
	})
	return out, err
}

// MarkActive records the merchant paid: the agreement ACTIVE.
func (a *Bnpl) MarkActive(ctx context.Context, in BnplStep) (bnpl.Agreement, error) {
	var out bnpl.Agreement
	err := a.inTx(ctx, in, BnplActivateSaga, func(ctx context.Context, tx db.BunTx) (err error) {
		out, err = bnpl.MarkActive(ctx, tx, in.AgreementID, in.WorkflowID, in.TransferID, in.Reference, a.now())
		return err
	})
	return out, err
}

// MarkFailed records the settlement's failure: the agreement FAILED.
func (a *Bnpl) MarkFailed(ctx context.Context, in BnplStep) (bnpl.Agreement, error) {
	var out bnpl.Agreement
	err := a.inTx(ctx, in, BnplActivateSaga, func(ctx context.Context, tx db.BunTx) (err error) {
		out, err = bnpl.MarkFailed(ctx, tx, in.AgreementID, in.WorkflowID, in.Reason, a.now())
		return err
	})
	return out, err
}

// Reserve holds the instalment for the collection run: instalment Index, or for a payroll run's
// collection (MandateID set) the agreement's earliest DUE one.
func (a *Bnpl) Reserve(ctx context.Context, in BnplStep) (bnpl.Collection, error) {
	var out bnpl.Collection
	err := a.inTx(ctx, in, BnplCollectSaga, func(ctx context.Context, tx db.BunTx) (err error) {
		if in.MandateID != "" {
			out, err = bnpl.ReservePayroll(ctx, tx, in.AgreementID, in.WorkflowID, in.MandateID, in.MandateSantim)
			return err
		}
		out, err = bnpl.ReserveInstalment(ctx, tx, in.AgreementID, in.Index, in.WorkflowID, in.Source)
		return err
	})
	return out, err
}

// MarkCollected records the held instalment collected with its journal.
func (a *Bnpl) MarkCollected(ctx context.Context, in BnplStep) (bnpl.Collection, error) {
	var out bnpl.Collection
	err := a.inTx(ctx, in, BnplCollectSaga, func(ctx context.Context, tx db.BunTx) (err error) {
		out, err = bnpl.MarkCollected(ctx, tx, in.AgreementID, in.Index, in.WorkflowID, in.LedgerTxID, a.now())
		return err
	})
	return out, err
}

// Release returns the held instalment to DUE.
func (a *Bnpl) Release(ctx context.Context, in BnplStep) (bnpl.Collection, error) {
	var out bnpl.Collection
	err := a.inTx(ctx, in, BnplCollectSaga, func(ctx context.Context, tx db.BunTx) (err error) {
		out, err = bnpl.ReleaseInstalment(ctx, tx, in.AgreementID, in.Index, in.WorkflowID, in.Reason)
		return err
	})
	return out, err
}

// Register registers the record steps.
func (a *Bnpl) Register(r worker.ActivityRegistry) {
	BnplActivateLoadPlan.Register(r, a.LoadPlan)
	BnplActivateCreate.Register(r, a.Create)
	BnplActivateMarkActive.Register(r, a.MarkActive)
	BnplActivateMarkFailed.Register(r, a.MarkFailed)
	BnplCollectReserve.Register(r, a.Reserve)
	BnplCollectMark.Register(r, a.MarkCollected)
	BnplCollectRelease.Register(r, a.Release)
	BnplApplyMerchantCallback.Register(r, a.ApplyMerchantCallback)
}

func (a *Bnpl) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

func (a *Bnpl) inTx(ctx context.Context, in BnplStep, actor string, fn func(context.Context, db.BunTx) error) error {
	var checks error
	if in.AgreementID != "" {
		checks = field.Identifier("agreementId", in.AgreementID, field.MaxIdentifier)
	}
	return recordBunStep(ctx, a.DB, in.Run, actor, errors.Join(checks, field.Text("reason", in.Reason, field.MaxText)),
		bnplError, fn, "agreement_id", in.AgreementID, "index", in.Index, "tx_id", in.LedgerTxID)
}

// bnplError types a BNPL refusal by its code (non-retryable); anything else as temporalError.
func bnplError(err error) error {
	var r *payroll.Refusal
	if !errors.As(err, &r) {
		return temporalError(err)
	}
	return nonRetryable(r.Message, r.Code)
}
