package activities

import (
	"context"
	"errors"

	"github.com/wagerail/wagerail/internal/bnpl"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// BnplApplyMerchantCallbackActivity is the activation saga's step for a merchant callback it was
// signalled (bnpl.MerchantCallbackSignalName).
const BnplApplyMerchantCallbackActivity = "bnpl.activate.ApplyMerchantCallback"

// BnplApplyMerchantCallback is the step, typed.
var BnplApplyMerchantCallback = Activity[BnplMerchantCallbackStep, bnpl.MerchantStatusChange]{BnplApplyMerchantCallbackActivity}

// BnplMerchantCallbackStep names the saga run, its agreement and the stored callback to apply.
type BnplMerchantCallbackStep struct {
	Run
	AgreementID string
	CallbackID  int64 // app.bnpl_merchant_callbacks.id
}

// ApplyMerchantCallback sets the agreement's merchant status from the recorded callback
// (bnpl.ApplyMerchantCallback, in one tenant-scoped transaction); applying it again changes
// nothing.
func (a *Bnpl) ApplyMerchantCallback(ctx context.Context, in BnplMerchantCallbackStep) (bnpl.MerchantStatusChange, error) {
	var out bnpl.MerchantStatusChange
	var checks error
	if in.CallbackID < 1 {
		checks = errors.New("callbackId must be positive")
	}
	err := recordBunStep(ctx, a.DB, in.Run, BnplActivateSaga,
		errors.Join(checks, field.Identifier("agreementId", in.AgreementID, field.MaxIdentifier)), bnplError,
		func(ctx context.Context, tx db.BunTx) (err error) {
			out, err = bnpl.ApplyMerchantCallback(ctx, tx, in.AgreementID, in.CallbackID, a.now())
			return err
		}, "agreement_id", in.AgreementID, "merchant_callback_id", in.CallbackID)
	return out, err
}
