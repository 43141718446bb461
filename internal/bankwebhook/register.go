package bankwebhook

import (
	"context"
	"fmt"
)

// TransferRegister is the gateway's register of outbound transfers as the callback path feeds
// it: a callback that matched a transfer has its SETTLED or FAILED recorded there, for the
// transfer's tenant, so the register follows the bank from callbacks as it does from the sagas'
// status lookups. Nothing else asks the partner about a PENDING transfer: the saga that sent it
// owns that question (see the gateway package's "Settlement" section). *gateway.Store
// satisfies it.
type TransferRegister interface {
	RecordSettlement(ctx context.Context, tenantID, partner, reference, status, partnerTransferID, failureCode string) error
}

// recordSettlement records what a received callback says in the register, after its receipt
// committed: for every receipt of a matched event (the first and each partner retry, which is
// how a failure here is made good: the callback is answered with an error, the partner sends it
// again, and the register takes the same answer, which it applies once). An unmatched callback
// names no transfer of ours and is not recorded.
func (a *Applier) recordSettlement(ctx context.Context, cb Callback, d Delivery) error {
	if a.Register == nil || d.TenantID == "" || d.EventOutcome == Unmatched {
		return nil
	}
	if err := a.Register.RecordSettlement(ctx, d.TenantID, cb.Partner, cb.Reference, cb.Status, cb.TransferID, cb.FailureCode); err != nil {
		return fmt.Errorf("bankwebhook: record %s %s in the transfer register: %w", cb.Partner, cb.Reference, err)
	}
	return nil
}
