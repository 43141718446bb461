package ledger

import (
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// Conversions between the protocol's messages and the package's types, in both directions (the
// server uses one, the client's helpers the other).

var (
	typeToPB = map[AccountType]ledgerv1.AccountType{
		Asset: ledgerv1.AccountType_ACCOUNT_TYPE_ASSET, Liability: ledgerv1.AccountType_ACCOUNT_TYPE_LIABILITY,
		Income: ledgerv1.AccountType_ACCOUNT_TYPE_INCOME, Expense: ledgerv1.AccountType_ACCOUNT_TYPE_EXPENSE,
		Equity: ledgerv1.AccountType_ACCOUNT_TYPE_EQUITY,
	}
	dirToPB = map[Direction]ledgerv1.Direction{
		Debit: ledgerv1.Direction_DIRECTION_DEBIT, Credit: ledgerv1.Direction_DIRECTION_CREDIT,
	}
	statusToPB = map[Status]ledgerv1.TransactionStatus{
		Pending: ledgerv1.TransactionStatus_TRANSACTION_STATUS_PENDING, Posted: ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED,
		Voided: ledgerv1.TransactionStatus_TRANSACTION_STATUS_VOIDED, Reversed: ledgerv1.TransactionStatus_TRANSACTION_STATUS_REVERSED,
	}
	kindToPB = map[Kind]ledgerv1.TransactionKind{
		Standard: ledgerv1.TransactionKind_TRANSACTION_KIND_STANDARD, ReversalKind: ledgerv1.TransactionKind_TRANSACTION_KIND_REVERSAL,
		AdjustmentKind: ledgerv1.TransactionKind_TRANSACTION_KIND_ADJUSTMENT,
	}
	phaseToPB = map[Phase]ledgerv1.EntryPhase{
		PhasePosted: ledgerv1.EntryPhase_ENTRY_PHASE_POSTED, PhaseHold: ledgerv1.EntryPhase_ENTRY_PHASE_HOLD,
		PhaseRelease: ledgerv1.EntryPhase_ENTRY_PHASE_RELEASE,
	}
)

func typeFromPB(t ledgerv1.AccountType) AccountType {
	for k, v := range typeToPB {
		if v == t {
			return k
		}
	}
	return ""
}

func dirFromPB(d ledgerv1.Direction) Direction {
	switch d {
	case ledgerv1.Direction_DIRECTION_DEBIT:
		return Debit
	case ledgerv1.Direction_DIRECTION_CREDIT:
		return Credit
	}
	return Direction(d.String()) // rejected by the validator with its name in the message
}

func statusFromPB(s ledgerv1.TransactionStatus) Status {
	for k, v := range statusToPB {
		if v == s {
			return k
		}
	}
	return ""
}

func ts(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

func tsp(t *time.Time) *timestamppb.Timestamp {
	if t == nil {
		return nil
	}
	return timestamppb.New(*t)
}

// timeFromPB converts an optional timestamp of a request. One outside 0001-9999 or with bad
// nanos is the caller's error: AsTime would turn it into some other instant, or one Postgres
// cannot hold.
func timeFromPB(name string, t *timestamppb.Timestamp) (*time.Time, error) {
	if t == nil {
		return nil, nil
	}
	if err := t.CheckValid(); err != nil {
		return nil, errorf(ReasonInvalidArgument, "%s is not a valid timestamp", name)
	}
	v := t.AsTime()
	return &v, nil
}

// AccountToPB converts an account.
func AccountToPB(a Account) *ledgerv1.Account {
	return &ledgerv1.Account{
		Id: a.ID, TenantId: a.TenantID, Name: a.Name, Type: typeToPB[a.Type],
		NormalSide: dirToPB[a.NormalSide], Currency: a.Currency, CreatedAt: ts(a.CreatedAt),
	}
}

// EntryToPB converts an entry.
func EntryToPB(e Entry) *ledgerv1.Entry {
	return &ledgerv1.Entry{
		Seq: e.Seq, TransactionId: e.TransactionID, AccountId: e.AccountID, AccountName: e.AccountName,
		Direction: dirToPB[e.Direction], AmountSantim: e.AmountSantim, Phase: phaseToPB[e.Phase],
		Currency: e.Currency, CreatedAt: ts(e.CreatedAt),
	}
}

// TransactionToPB converts a transaction (with its entries when loaded).
func TransactionToPB(t *Transaction) *ledgerv1.Transaction {
	if t == nil {
		return nil
	}
	out := &ledgerv1.Transaction{
		Id: t.ID, TenantId: t.TenantID, IdempotencyKey: t.IdempotencyKey, Status: statusToPB[t.Status],
		Kind: kindToPB[t.Kind], Currency: t.Currency, Metadata: t.Metadata,
		ReversesTransactionId: t.ReversesID, ReversedByTransactionId: t.ReversedByID,
		ReversalReason: t.ReversalReason, VoidReason: t.VoidReason,
		CreatedAt: ts(t.CreatedAt), PostedAt: tsp(t.PostedAt), VoidedAt: tsp(t.VoidedAt), ReversedAt: tsp(t.ReversedAt),
	}
	if l := t.Lineage; l != (Lineage{}) {
		out.Lineage = &ledgerv1.Lineage{WorkflowId: l.WorkflowID, RunId: l.RunID, Step: l.Step}
	}
	if a := t.Adjustment; a != nil {
		out.Adjustment = &ledgerv1.Adjustment{Source: a.Source, Reason: a.Reason, ApprovedBy: a.ApprovedBy, RequestedBy: a.RequestedBy}
	}
	for _, e := range t.Entries {
		out.Entries = append(out.Entries, EntryToPB(e))
	}
	return out
}

// BalanceToPB converts a balance, with its derived figures.
func BalanceToPB(b Balance) *ledgerv1.Balance {
	return &ledgerv1.Balance{
		AccountId: b.AccountID, AccountName: b.AccountName, Currency: b.Currency, NormalSide: dirToPB[b.NormalSide],
		PostedDebitsSantim: b.PostedDebitsSantim, PostedCreditsSantim: b.PostedCreditsSantim,
		PendingDebitsSantim: b.PendingDebitsSantim, PendingCreditsSantim: b.PendingCreditsSantim,
		PostedSantim: b.PostedSantim(), PendingSantim: b.PendingSantim(), AvailableSantim: b.AvailableSantim(),
		LastSeq: b.LastSeq, AsOf: ts(b.AsOf),
	}
}

func entriesFromPB(in []*ledgerv1.EntryInput) []EntryInput {
	out := make([]EntryInput, len(in))
	for i, e := range in {
		out[i] = EntryInput{AccountID: e.GetAccountId(), AccountName: e.GetAccountName(), Direction: dirFromPB(e.GetDirection()), AmountSantim: e.GetAmountSantim()}
	}
	return out
}

func lineageFromPB(l *ledgerv1.Lineage) Lineage {
	return Lineage{WorkflowID: l.GetWorkflowId(), RunID: l.GetRunId(), Step: l.GetStep()}
}

// PostingFromPB converts a posting request; an unspecified status means POSTED.
func PostingFromPB(r *ledgerv1.PostTransactionRequest) Posting {
	st := Posted
	if r.GetStatus() != ledgerv1.TransactionStatus_TRANSACTION_STATUS_UNSPECIFIED {
		st = statusFromPB(r.GetStatus())
	}
	return Posting{
		TenantID: r.GetTenantId(), IdempotencyKey: r.GetIdempotencyKey(), Entries: entriesFromPB(r.GetEntries()),
		Status: st, Metadata: r.GetMetadata(), Lineage: lineageFromPB(r.GetLineage()), Kind: Standard,
	}
}

// AdjustmentRequestFromPB is the part of a PostAdjustment request the signature covers.
func AdjustmentRequestFromPB(r *ledgerv1.PostAdjustmentRequest) AdjustmentRequest {
	a := r.GetAdjustment()
	return AdjustmentRequest{
		TenantID: r.GetTenantId(), IdempotencyKey: r.GetIdempotencyKey(),
		Adjustment: Adjustment{Source: a.GetSource(), Reason: a.GetReason(), ApprovedBy: a.GetApprovedBy(), RequestedBy: a.GetRequestedBy()},
		Entries:    entriesFromPB(r.GetEntries()),
	}
}

// SignAdjustmentRequest signs a PostAdjustment request in place (the API's side of the
// approval): it fills approval_signature with SignAdjustment over the request's fields.
func SignAdjustmentRequest(key []byte, r *ledgerv1.PostAdjustmentRequest) {
	r.ApprovalSignature = SignAdjustment(key, AdjustmentRequestFromPB(r))
}
