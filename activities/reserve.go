package activities

import (
	"context"

	"github.com/wagerail/wagerail/internal/payroll"
)

// lockedReservation is one reservation of a balance under its owner's row lock, the way the
// wallet transfer (Wallet.Reserve: the wallet's lock, payable-to-employee:<employee>) and the
// savings withdrawal (Savings.ReserveWithdrawal: the goal's lock, savings-held:<goal>) make it;
// every func runs in the step's transaction.
type lockedReservation struct {
	// Lock takes the owner's lock for the rest of the transaction.
	Lock func() error
	// Recorded finds the run's own record (an earlier attempt recorded it) and its hold.
	Recorded func() (ledgerTxID string, ok bool, err error)
	// Check, when set, refuses a new reservation before its hold is placed (a refusal: nothing
	// posted, nothing recorded).
	Check func() error
	// Account and AmountSantim are the balance reserved from and how much.
	Account      string
	AmountSantim int64
	// Insufficient is the refusal when the available balance is less (details.availableSantim
	// is set on it).
	Insufficient payroll.Refusal
	// Record records the run's PENDING record with its hold.
	Record func(ledgerTxID string) error
}

// reserveLocked takes r's lock; a run that recorded already gets its hold back (Replayed);
// otherwise, once r's Check passes, reserveHold places the hold against the available balance (posting is the PENDING
// transaction) and r records it, all before the lock goes with the transaction.
func (m *Money) reserveLocked(ctx context.Context, tenantID string, posting LedgerPostInput, r lockedReservation) (LedgerPostResult, error) {
	if err := r.Lock(); err != nil {
		return LedgerPostResult{}, err
	}
	if txID, ok, err := r.Recorded(); err != nil || ok {
		return LedgerPostResult{TxID: txID, Status: "PENDING", Replayed: true}, err
	}
	if r.Check != nil {
		if err := r.Check(); err != nil {
			return LedgerPostResult{}, err
		}
	}
	posted, err := m.reserveHold(ctx, tenantID, r.Account, r.AmountSantim, posting, func(available int64) error {
		refused := r.Insufficient
		refused.Details = map[string]any{"availableSantim": available}
		return &refused
	})
	if err != nil {
		return LedgerPostResult{}, err
	}
	return posted, r.Record(posted.TxID)
}
