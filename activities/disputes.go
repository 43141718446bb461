package activities

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/internal/disputes"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/ledger"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// Registered names of the dispute workflow's steps (histories reference them).
const (
	DisputeRecordActivity   = "dispute.Record"
	DisputeReverseActivity  = "dispute.Reverse"
	DisputeAdjustActivity   = "dispute.Adjust"
	DisputePostingActivity  = "dispute.PostingOf"
	DisputePostingsActivity = "dispute.Postings"
	DisputeCloseKeyActivity = "dispute.CloseKey"
)

// DisputeRecord records one move of a dispute (disputes.Apply: the row, its event, audit row and
// outbox event in one transaction; idempotent for a retried step).
var DisputeRecord = Activity[DisputeMoveInput, disputes.Dispute]{DisputeRecordActivity}

// DisputeReverse reverses the disputed ledger transaction (Ledger.Reverse, keyed by the
// workflow so a retry returns the same reversal) and answers the reversal's id.
var DisputeReverse = Activity[DisputeReverseInput, string]{DisputeReverseActivity}

// DisputeAdjust posts a dispute's approved adjustment (Ledger.PostAdjustment with the signature
// the API made) and answers the adjustment's transaction id.
var DisputeAdjust = Activity[DisputeAdjustInput, string]{DisputeAdjustActivity}

// DisputePostingOf answers the id of the ledger transaction a decision's posting made under its
// idempotency key, "" when there is none: the decision's ledger step ended without an answer
// (its retries ran out), and whether it posted decides what the dispute records.
var DisputePostingOf = Activity[DisputePostingInput, string]{DisputePostingActivity}

// DisputePostingsOf answers the postings the dispute's workflow holds in the ledger under its
// keys (the decision key, and the reversal's and the adjustment's of runs before it), "" for a
// kind it holds none of. The workflow asks it before a decision moves money: a run that ended
// (terminated, failed) after its decision's posting and before the record left the posting
// there, and the dispute undecided.
var DisputePostingsOf = Activity[DisputePostingsInput, DisputePostings]{DisputePostingsActivity}

// DisputeCloseKey closes the dispute workflow's decision key in the ledger before a decision that
// posts nothing (no action, chargeback) is recorded (Ledger.VoidPending by the key): a reversal
// or adjustment of an ended run still on its way to the ledger is refused from then on, instead
// of moving the money of a dispute recorded as decided otherwise. A posting already under the key
// is refused ALREADY_POSTED (non-retryable): another decision's money moved.
var DisputeCloseKey = Action[DisputePostingsInput]{DisputeCloseKeyActivity}

// DisputePostingsInput names the dispute whose workflow (Run.WorkflowID) made the postings.
type DisputePostingsInput struct {
	Run
	DisputeID string
}

// DisputePostings are the ids of the transactions under a dispute workflow's keys ("" none).
type DisputePostings struct {
	ReversalTxID   string
	AdjustmentTxID string
}

// DisputePostingInput names a decision's posting by its idempotency key.
type DisputePostingInput struct {
	Run
	DisputeID      string
	IdempotencyKey string
}

// DisputeDecisionKey is the one idempotency key every posting decision of the dispute workflow
// wfID posts under, a reversal or an adjustment alike (the API signs the adjustment under it): the
// ledger holds one transaction per key and refuses another content (IDEMPOTENCY_CONFLICT), so a
// dispute's money moves at most once whichever runs decide it and however their attempts race.
func DisputeDecisionKey(wfID string) string { return wfID + ":decision" }

// DisputeReversalKey is the idempotency key of the reversal the dispute workflow wfID posted
// before DisputeDecisionKey (runs that decided before the one key; still looked up).
func DisputeReversalKey(wfID string) string { return wfID + ":reversal" }

// DisputeAdjustmentKey is the idempotency key of the adjustment the dispute workflow wfID posted
// before DisputeDecisionKey (still looked up).
func DisputeAdjustmentKey(wfID string) string { return wfID + ":adjustment" }

// DisputeSaga is the actor of the dispute workflow's audit rows: tenancy.System(DisputeSaga).
const DisputeSaga = "dispute"

// Disputes holds the dispute workflow's steps.
type Disputes struct {
	DB     *pgxpool.Pool // the runtime role's pool (wagerail_app)
	Ledger *ledger.Client
}

// DisputeMoveInput is one move of a dispute at At (the workflow's clock).
type DisputeMoveInput struct {
	Run
	DisputeID string
	Move      disputes.Move
	At        time.Time
}

// DisputeReverseInput names the transaction to reverse and why.
type DisputeReverseInput struct {
	Run
	DisputeID     string
	TransactionID string
	Reason        string
	// IdempotencyKey is the reversal's key: DisputeDecisionKey; "" in the inputs of runs before
	// it, which post under DisputeReversalKey.
	IdempotencyKey string `json:",omitempty"`
}

// DisputeAdjustmentSource is the ledger adjustment's source of a dispute outcome (the spec's
// adjustment_source).
const DisputeAdjustmentSource = "BANK_DISPUTE_OUTCOME"

// DisputeAdjustment is an adjustment exactly as approved and signed: Dr DebitAccount / Cr
// CreditAccount AmountSantim, under IdempotencyKey, with the approval Signature the API made with
// the adjustment key over PB() (ledger.SignAdjustmentRequest). The workflow passes it on as is:
// what the ledger verifies is what the platform admin approved.
type DisputeAdjustment struct {
	TenantID       string
	IdempotencyKey string
	Reason         string // <disputeId>:<decisionReason>
	ApprovedBy     string // the platform admin
	RequestedBy    string // the operator deciding
	DebitAccount   string
	CreditAccount  string
	AmountSantim   int64
	Signature      []byte
}

// PB is the ledger request, with the signature when there is one.
func (a DisputeAdjustment) PB() *ledgerv1.PostAdjustmentRequest {
	return &ledgerv1.PostAdjustmentRequest{TenantId: a.TenantID, IdempotencyKey: a.IdempotencyKey, ApprovalSignature: a.Signature,
		Adjustment: &ledgerv1.Adjustment{Source: DisputeAdjustmentSource, Reason: a.Reason, ApprovedBy: a.ApprovedBy, RequestedBy: a.RequestedBy},
		Entries: []*ledgerv1.EntryInput{
			{AccountName: a.DebitAccount, Direction: ledgerv1.Direction_DIRECTION_DEBIT, AmountSantim: a.AmountSantim},
			{AccountName: a.CreditAccount, Direction: ledgerv1.Direction_DIRECTION_CREDIT, AmountSantim: a.AmountSantim},
		}}
}

// DisputeAdjustInput is the adjustment of a dispute.
type DisputeAdjustInput struct {
	Run
	DisputeID  string
	Adjustment DisputeAdjustment
}

// Register registers the steps.
func (a *Disputes) Register(r worker.ActivityRegistry) {
	DisputeRecord.Register(r, a.Record)
	DisputeReverse.Register(r, a.Reverse)
	DisputeAdjust.Register(r, a.Adjust)
	DisputePostingOf.Register(r, a.PostingOf)
	DisputePostingsOf.Register(r, a.Postings)
	DisputeCloseKey.Register(r, a.CloseKey)
}

// Postings looks up the workflow's reversal and adjustment: under the decision key, told apart by
// what the transaction is (a reversal names the transaction it reverses), and under the keys of
// runs before it.
func (a *Disputes) Postings(ctx context.Context, in DisputePostingsInput) (DisputePostings, error) {
	var out DisputePostings
	var err error
	look := func(key string) *ledgerv1.Transaction {
		if err != nil {
			return nil
		}
		var t *ledgerv1.Transaction
		t, err = a.lookup(ctx, DisputePostingInput{Run: in.Run, DisputeID: in.DisputeID, IdempotencyKey: key})
		return t
	}
	out.ReversalTxID = look(DisputeReversalKey(in.WorkflowID)).GetId()
	out.AdjustmentTxID = look(DisputeAdjustmentKey(in.WorkflowID)).GetId()
	if t := look(DisputeDecisionKey(in.WorkflowID)); t.GetReversesTransactionId() != "" {
		out.ReversalTxID = t.GetId()
	} else if t != nil {
		out.AdjustmentTxID = t.GetId()
	}
	return out, err
}

// PostingOf looks the decision's posting up by its idempotency key ("" when the ledger has none).
func (a *Disputes) PostingOf(ctx context.Context, in DisputePostingInput) (string, error) {
	t, err := a.lookup(ctx, in)
	return t.GetId(), err
}

// lookup is the transaction under in's key (nil when the ledger has none).
func (a *Disputes) lookup(ctx context.Context, in DisputePostingInput) (*ledgerv1.Transaction, error) {
	if a.Ledger == nil {
		return nil, misconfigured("dispute: no ledger client configured")
	}
	if err := errors.Join(in.Run.check(), field.Identifier("disputeId", in.DisputeID, 0),
		field.Reference("idempotencyKey", in.IdempotencyKey, field.MaxReference)); err != nil {
		return nil, temporalError(err)
	}
	got, err := a.Ledger.GetTransaction(ctx, &ledgerv1.GetTransactionRequest{TenantId: in.TenantID, IdempotencyKey: in.IdempotencyKey})
	switch {
	case errors.Is(err, ledger.ErrTransactionNotFound):
		return nil, nil
	case err != nil:
		return nil, temporalError(err)
	}
	return got.GetTransaction(), nil
}

// CloseKey voids the workflow's decision key (see DisputeCloseKey). A key voided already is
// success (a retried step).
func (a *Disputes) CloseKey(ctx context.Context, in DisputePostingsInput) error {
	if a.Ledger == nil {
		return misconfigured("dispute: no ledger client configured")
	}
	if err := errors.Join(in.Run.check(), field.Identifier("disputeId", in.DisputeID, 0)); err != nil {
		return temporalError(err)
	}
	key := DisputeDecisionKey(in.WorkflowID)
	_, err := a.Ledger.VoidPending(ctx, &ledgerv1.VoidPendingRequest{TenantId: in.TenantID, IdempotencyKey: key,
		Reason: "dispute " + in.DisputeID + " decided without a posting"})
	if errors.Is(err, ledger.ErrAlreadyVoided) {
		err = nil
	}
	if err != nil {
		in.Run.logger(ctx, "dispute_id", in.DisputeID).Warn("dispute decision key not closed", "error", err)
	}
	return temporalError(err)
}

// Record applies in.Move. The store's refusals are non-retryable, typed by their code.
func (a *Disputes) Record(ctx context.Context, in DisputeMoveInput) (disputes.Dispute, error) {
	var out disputes.Dispute
	err := recordStep(ctx, a.DB, in.Run, DisputeSaga, field.Identifier("disputeId", in.DisputeID, 0), disputeError,
		func(ctx context.Context, tx pgx.Tx) (err error) {
			out, err = disputes.Apply(ctx, tx, in.DisputeID, in.Move, in.At)
			return err
		}, "dispute_id", in.DisputeID)
	return out, err
}

// Reverse posts the reversal of the disputed transaction. The ledger answers a retry with the
// same key with the same reversal.
func (a *Disputes) Reverse(ctx context.Context, in DisputeReverseInput) (string, error) {
	if a.Ledger == nil {
		return "", misconfigured("dispute: no ledger client configured")
	}
	if err := errors.Join(in.Run.check(), field.Identifier("disputeId", in.DisputeID, 0),
		field.Identifier("transactionId", in.TransactionID, 0), field.Text("reason", in.Reason, field.MaxText)); err != nil {
		return "", temporalError(err)
	}
	if in.IdempotencyKey != "" && in.IdempotencyKey != DisputeDecisionKey(in.WorkflowID) {
		return "", nonRetryable("dispute: the reversal's key is not its workflow's decision key", ErrTypeInvalidArgument)
	}
	resp, err := a.Ledger.Reverse(ctx, &ledgerv1.ReverseRequest{TenantId: in.TenantID, TransactionId: in.TransactionID,
		Reason: in.DisputeID + ":" + in.Reason, IdempotencyKey: cmp.Or(in.IdempotencyKey, DisputeReversalKey(in.WorkflowID))})
	if err != nil {
		in.Run.logger(ctx, "dispute_id", in.DisputeID).Warn("dispute reversal failed", "error", err)
		return "", temporalError(err)
	}
	return resp.GetReversal().GetId(), nil
}

// Adjust posts the adjustment as signed. The accounts are made sure of first (misc-loss may not
// exist in a tenant yet); the ledger answers a retry with the same key with the same transaction,
// and refuses a signature that does not verify (non-retryable).
func (a *Disputes) Adjust(ctx context.Context, in DisputeAdjustInput) (string, error) {
	if a.Ledger == nil {
		return "", misconfigured("dispute: no ledger client configured")
	}
	adj := in.Adjustment
	if err := errors.Join(in.Run.check(), field.Identifier("disputeId", in.DisputeID, 0)); err != nil {
		return "", temporalError(err)
	}
	if adj.TenantID != in.TenantID || adj.AmountSantim <= 0 || len(adj.Signature) == 0 {
		return "", nonRetryable("dispute: the adjustment is not this dispute's or is unsigned", ErrTypeInvalidArgument)
	}
	for _, name := range []string{adj.DebitAccount, adj.CreditAccount} {
		if _, err := a.Ledger.EnsureAccount(ctx, &ledgerv1.EnsureAccountRequest{TenantId: in.TenantID, Name: name}); err != nil {
			return "", temporalError(err)
		}
	}
	resp, err := a.Ledger.PostAdjustment(ctx, adj.PB())
	if err != nil {
		in.Run.logger(ctx, "dispute_id", in.DisputeID).Warn("dispute adjustment failed", "error", err)
		return "", temporalError(err)
	}
	return resp.GetTransaction().GetId(), nil
}

// disputeError maps internal/disputes' refusals to non-retryable errors typed by their code.
func disputeError(err error) error {
	if code := disputes.CodeOf(err); code != "" {
		r, _ := disputes.RefusalOf(code)
		return temporal.NewNonRetryableApplicationError(r.Message, r.Code, nil)
	}
	if errors.Is(err, disputes.ErrInvalid) {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeInvalidArgument, nil)
	}
	return temporalError(err)
}
