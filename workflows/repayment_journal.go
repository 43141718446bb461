package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
)

// repaymentJournal is what a repayment saga (EwaRepay, LoanRepay) does with its journal once the
// repayment is reserved: the ledger gets one attempt while the caller waits; when it did not take
// the journal, pending answers the caller PENDING and the journal is retried for as long as a
// catch-up step is (the reservation holds its target: nothing but this run posts or releases it).
// A ledger refusal releases the reservation (release, with the ledger's code). refuse answers the
// caller with the error that ends the journal.
type repaymentJournal struct {
	what    string // the saga's repayment, in its log lines: "repayment", "loan repayment"
	pending func()
	refuse  func(error)
	release func(code string) error
}

// post posts in and answers the posted transaction's id; or refused, the ledger's code, once the
// reservation is released; or the error that ends the run (the outcome unknown after every
// retry: the reservation stays for an operator, and the ledger key makes a repost safe; or a
// release that failed).
func (j repaymentJournal) post(ctx workflow.Context, in activities.LedgerPostInput) (txID, refused string, err error) {
	log := workflow.GetLogger(ctx)
	posted, err := callLocal(ctx, localLedgerFirstTryOptions(), activities.LedgerPost, in)
	if err != nil && retryableFailure(err) {
		log.Warn(j.what+" journal not posted yet; answering pending and retrying", "error", err)
		j.pending()
		posted, err = callLocal(ctx, localCatchUpOptions(), activities.LedgerPost, in)
	}
	if err == nil {
		return posted.TxID, "", nil
	}
	j.refuse(err)
	if retryableFailure(err) {
		return "", "", err
	}
	// The ledger refused the journal: nothing was posted; release the reservation.
	code := activities.ErrorType(err)
	log.Error("ledger refused the "+j.what+" journal", "code", code, "error", err)
	if err := j.release(code); err != nil {
		return "", "", err
	}
	return "", code, nil
}
