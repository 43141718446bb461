package activities

import (
	"context"
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/promreg"
	"github.com/wagerail/wagerail/ledger"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// Registered names of the money activities every saga shares (stable across Go renames).
const (
	LedgerPostPendingActivity = "money.LedgerPostPending"
	LedgerPostActivity        = "money.LedgerPost"
	LedgerCommitActivity      = "money.LedgerCommit"
	LedgerVoidActivity        = "money.LedgerVoid"
	InitiateTransferActivity  = "money.InitiateTransfer"
	TransferStatusActivity    = "money.TransferStatus"
)

// Outcomes of InitiateTransfer (TransferResult.Outcome).
const (
	TransferAccepted = "ACCEPTED" // the partner holds the transfer; Status says where it is
	TransferRejected = "REJECTED" // the partner refused it; no money moved
	// TransferUnknown: nobody knows whether the partner holds it (its answer did not arrive).
	// Never re-initiate or compensate on this: ask TransferStatus by the reference.
	TransferUnknown = "UNKNOWN"
)

// Transfer statuses (TransferResult.Status, TransferStatusResult.Status).
const (
	TransferPending  = "PENDING"
	TransferSettled  = "SETTLED"
	TransferFailed   = "FAILED"
	TransferNotFound = "NOT_FOUND" // the partner has no transfer with the reference: initiating it is safe
)

// Outcomes of the status lookups, the values of svc_settlement_poller_ticks_total{outcome} in the
// worker.
const (
	PollSettled  = "settled"
	PollFailed   = "failed"
	PollPending  = "pending"
	PollNotFound = "not_found"
	PollError    = "error"
)

// MetricSettlementTicks counts the sagas' settlement status lookups, by outcome. The saga that
// sent a transfer is the only one that asks the partner about it (the gateway runs no poller), so
// this worker series is the settlement poller's.
const MetricSettlementTicks = "svc_settlement_poller_ticks_total"

// SettlementPollMetrics counts the sagas' status lookups (MetricSettlementTicks), by outcome.
type SettlementPollMetrics struct {
	ticks *prometheus.CounterVec
}

// NewSettlementPollMetrics creates the series, every outcome at 0, and registers them with reg
// (nil: not registered). Registering twice on one registry reuses the first.
func NewSettlementPollMetrics(reg prometheus.Registerer) *SettlementPollMetrics {
	cv := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricSettlementTicks,
		Help: "Settlement status lookups of the sagas waiting on a partner transfer, by outcome: settled, failed, pending, not_found (the partner has no such transfer), error (the gateway or the partner failed).",
	}, []string{"outcome"})
	cv = promreg.Shared(reg, cv)
	for _, o := range []string{PollSettled, PollFailed, PollPending, PollNotFound, PollError} {
		cv.WithLabelValues(o)
	}
	return &SettlementPollMetrics{ticks: cv}
}

func (m *SettlementPollMetrics) inc(outcome string) {
	if m != nil {
		m.ticks.WithLabelValues(outcome).Inc()
	}
}

// Money holds the ledger and partner-transfer steps every money saga shares. Each carries its
// idempotency key or partner reference, so Temporal's retries never post or pay twice.
type Money struct {
	Ledger  *ledger.Client
	Gateway *gateway.Client
	// Metrics counts TransferStatus lookups; nil counts nothing.
	Metrics *SettlementPollMetrics
}

// The money activities, typed (what workflows call).
var (
	LedgerPostPending = Activity[LedgerPostInput, LedgerPostResult]{LedgerPostPendingActivity}
	LedgerPost        = Activity[LedgerPostInput, LedgerPostResult]{LedgerPostActivity}
	LedgerCommit      = Action[LedgerSettleInput]{LedgerCommitActivity}
	LedgerVoid        = Action[LedgerSettleInput]{LedgerVoidActivity}
	InitiateTransfer  = Activity[TransferInput, TransferResult]{InitiateTransferActivity}
	TransferStatus    = Activity[TransferStatusInput, TransferStatusResult]{TransferStatusActivity}
)

// Register registers the money activities.
func (m *Money) Register(r worker.ActivityRegistry) {
	LedgerPostPending.Register(r, m.LedgerPostPending)
	LedgerPost.Register(r, m.LedgerPost)
	LedgerCommit.Register(r, m.LedgerCommit)
	LedgerVoid.Register(r, m.LedgerVoid)
	InitiateTransfer.Register(r, m.InitiateTransfer)
	TransferStatus.Register(r, m.TransferStatus)
}

// LedgerLeg is one leg of a posting: an account by its chart name (created on first use),
// DEBIT or CREDIT, an amount in santim.
type LedgerLeg struct {
	Account      string
	Direction    string // DEBIT or CREDIT
	AmountSantim int64
}

// LedgerPostInput is one ledger transaction of a saga.
type LedgerPostInput struct {
	Run
	// IdempotencyKey makes the posting safe to retry: the same key and content return the
	// original transaction ("ewa-disburse:<workflowID>"). A posting that moves a partner-bank
	// mirror names its transfer in Metadata[partnerref.LedgerMetadataKey].
	IdempotencyKey string
	// Step names the saga step in the transaction's lineage ("disburse", "repay").
	Step     string
	Legs     []LedgerLeg
	Metadata map[string]string
}

// LedgerPostResult is the posted (or replayed) transaction.
type LedgerPostResult struct {
	TxID     string
	Status   string // PENDING or POSTED
	Replayed bool
}

// LedgerSettleInput names a pending transaction to commit or void.
type LedgerSettleInput struct {
	Run
	TxID string
	// IdempotencyKey names it instead of TxID (LedgerVoid only): the posting of a step whose
	// answer never came, so its id is unknown; with no transaction under it, the key is voided
	// (the posting, should it still arrive, is refused).
	IdempotencyKey string `json:",omitempty"`
	Reason         string // LedgerVoid's reason (the partner's failure code, …)
}

// reserveHold places a hold against account's available balance, under a lock on the account's
// owner that the caller holds (one reservation of it at a time): it reads the ledger's available
// balance (posted minus the open holds; this run's own hold, when an earlier attempt posted it
// under posting's idempotency key, is not counted against itself), answers insufficient's error
// (given what is available) when amount is more, else posts the PENDING transaction.
func (m *Money) reserveHold(ctx context.Context, tenantID, account string, amount int64, posting LedgerPostInput,
	insufficient func(availableSantim int64) error) (LedgerPostResult, error) {
	own := int64(0)
	got, err := m.Ledger.GetTransaction(ctx, &ledgerv1.GetTransactionRequest{TenantId: tenantID, IdempotencyKey: posting.IdempotencyKey})
	switch {
	case err == nil && got.GetTransaction().GetStatus() == ledgerv1.TransactionStatus_TRANSACTION_STATUS_PENDING:
		own = amount
	case err == nil:
	case !errors.Is(err, ledger.ErrTransactionNotFound):
		return LedgerPostResult{}, err
	}
	available := int64(0)
	bal, err := m.Ledger.GetBalance(ctx, &ledgerv1.GetBalanceRequest{TenantId: tenantID, AccountName: account})
	switch {
	case err == nil:
		available = bal.GetBalance().GetAvailableSantim()
	case !errors.Is(err, ledger.ErrAccountNotFound):
		return LedgerPostResult{}, err
	}
	if amount > available+own {
		return LedgerPostResult{}, insufficient(available + own)
	}
	return m.LedgerPostPending(ctx, posting)
}

// LedgerPostPending ensures every account of the legs exists, then posts them as a PENDING
// transaction (a hold, later committed or voided).
func (m *Money) LedgerPostPending(ctx context.Context, in LedgerPostInput) (LedgerPostResult, error) {
	return m.post(ctx, in, ledgerv1.TransactionStatus_TRANSACTION_STATUS_PENDING)
}

// LedgerPost posts the legs as a POSTED transaction.
func (m *Money) LedgerPost(ctx context.Context, in LedgerPostInput) (LedgerPostResult, error) {
	return m.post(ctx, in, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED)
}

func (m *Money) post(ctx context.Context, in LedgerPostInput, status ledgerv1.TransactionStatus) (LedgerPostResult, error) {
	if m.Ledger == nil {
		return LedgerPostResult{}, misconfigured("money: no ledger client configured")
	}
	log := in.logger(ctx, "idempotency_key", in.IdempotencyKey)
	if err := errors.Join(field.Identifier("tenantId", in.TenantID, field.MaxIdentifier),
		field.Reference("idempotencyKey", in.IdempotencyKey, field.MaxReference)); err != nil {
		return LedgerPostResult{}, temporalError(err)
	}
	req := &ledgerv1.PostTransactionRequest{TenantId: in.TenantID, IdempotencyKey: in.IdempotencyKey, Status: status,
		Metadata: in.Metadata, Lineage: &ledgerv1.Lineage{WorkflowId: in.WorkflowID, Step: in.Step}}
	for i, l := range in.Legs {
		dir := ledgerv1.Direction_DIRECTION_UNSPECIFIED
		switch l.Direction {
		case "DEBIT":
			dir = ledgerv1.Direction_DIRECTION_DEBIT
		case "CREDIT":
			dir = ledgerv1.Direction_DIRECTION_CREDIT
		default:
			return LedgerPostResult{}, temporalError(&field.Error{Field: fmt.Sprintf("legs[%d].direction", i), Problem: "must be DEBIT or CREDIT"})
		}
		req.Entries = append(req.Entries, &ledgerv1.EntryInput{AccountName: l.Account, Direction: dir, AmountSantim: l.AmountSantim})
	}
	resp, err := m.Ledger.PostCreatingAccounts(ctx, req)
	if err != nil {
		log.Warn("ledger posting failed", "error", err)
		return LedgerPostResult{}, temporalError(err)
	}
	tx := resp.GetTransaction()
	res := LedgerPostResult{TxID: tx.GetId(), Status: statusName(tx.GetStatus()), Replayed: resp.GetReplayed()}
	log.Info("ledger transaction posted", "tx_id", res.TxID, "status", res.Status, "replayed", res.Replayed)
	return res, nil
}

// LedgerCommit commits a pending transaction. Already committed is success (a retried commit
// whose first answer was lost); voided or reversed is a non-retryable conflict.
func (m *Money) LedgerCommit(ctx context.Context, in LedgerSettleInput) error {
	if m.Ledger == nil {
		return misconfigured("money: no ledger client configured")
	}
	log := in.logger(ctx, "tx_id", in.TxID)
	_, err := m.Ledger.CommitPending(ctx, &ledgerv1.CommitPendingRequest{TenantId: in.TenantID, TransactionId: in.TxID})
	if errors.Is(err, ledger.ErrAlreadyPosted) {
		// ALREADY_POSTED also covers a reversed transaction: only POSTED is this commit's.
		got, gerr := m.Ledger.GetTransaction(ctx, &ledgerv1.GetTransactionRequest{TenantId: in.TenantID, TransactionId: in.TxID})
		if gerr != nil {
			return temporalError(gerr)
		}
		if got.GetTransaction().GetStatus() == ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED {
			err = nil
		}
	}
	if err != nil {
		log.Warn("ledger commit failed", "error", err)
		return temporalError(err)
	}
	log.Info("ledger transaction committed")
	return nil
}

// LedgerVoid voids a pending transaction, named by its id or its idempotency key. Already voided
// is success; committed is a non-retryable conflict (ALREADY_POSTED): money that moved is never
// voided. By key, a posting not written (yet) is voided too: the ledger voids the key, and the
// posting, should it still arrive, is refused.
func (m *Money) LedgerVoid(ctx context.Context, in LedgerSettleInput) error {
	if m.Ledger == nil {
		return misconfigured("money: no ledger client configured")
	}
	req := &ledgerv1.VoidPendingRequest{TenantId: in.TenantID, TransactionId: in.TxID, Reason: in.Reason}
	log := in.logger(ctx, "tx_id", in.TxID)
	if in.TxID == "" {
		req.IdempotencyKey = in.IdempotencyKey
		log = in.logger(ctx, "idempotency_key", in.IdempotencyKey)
	}
	resp, err := m.Ledger.VoidPending(ctx, req)
	if errors.Is(err, ledger.ErrAlreadyVoided) {
		err = nil
	}
	if err != nil {
		log.Warn("ledger void failed", "error", err)
		return temporalError(err)
	}
	if resp.GetKeyVoided() {
		log.Info("no ledger transaction held the key: the key is voided", "reason", in.Reason)
		return nil
	}
	log.Info("ledger transaction voided", "tx_id", resp.GetTransaction().GetId(), "reason", in.Reason)
	return nil
}

// TransferInput is one partner transfer. Reference is our reference (the saga's leg reference,
// partnerref.Leg; the posting that pays for the transfer carries the same as "bank_reference"):
// the gateway and the partner are idempotent on it.
type TransferInput struct {
	Run
	Partner      string
	Reference    string
	FromAccount  string
	ToAccount    string
	AmountSantim int64
	Domain       string // EWA, LOAN, PAYROLL, …
	CallbackURL  string // "" = the partner's default
}

// TransferResult is the partner's answer to an initiation. The fields of other outcomes are left
// out of its JSON when empty: it is recorded in every saga's history.
type TransferResult struct {
	Outcome       string // ACCEPTED, REJECTED or UNKNOWN
	TransferID    string // ACCEPTED
	Status        string // ACCEPTED: PENDING, SETTLED or FAILED
	FailureCode   string `json:",omitempty"` // Status FAILED
	RejectCode    string `json:",omitempty"` // REJECTED
	RejectMessage string `json:",omitempty"`
	UnknownReason string `json:",omitempty"` // UNKNOWN
	Replayed      bool   `json:",omitempty"` // the partner already held a transfer with this reference
}

// InitiateTransfer sends the transfer through the gateway. ACCEPTED, REJECTED and UNKNOWN are
// results, not errors: a rejection is the saga's to compensate, and an unknown outcome (the
// gateway said UNKNOWN, or the call timed out or broke after it may have been sent) is resolved
// by TransferStatus, never by sending again. An error means nothing was sent (the partner or
// the gateway down, the breaker open: retryable) or the request itself is refused
// (non-retryable, typed by the gateway's reason; REFERENCE_CONFLICT among them: something with
// our reference exists, so the workflow asks its status too).
func (m *Money) InitiateTransfer(ctx context.Context, in TransferInput) (TransferResult, error) {
	if m.Gateway == nil {
		return TransferResult{}, misconfigured("money: no gateway client configured")
	}
	log := in.logger(ctx, "partner", in.Partner, "partner_reference", in.Reference)
	resp, err := m.Gateway.InitiateDisbursement(ctx, &gatewayv1.InitiateDisbursementRequest{
		Partner: in.Partner, Reference: in.Reference, FromAccount: in.FromAccount, ToAccount: in.ToAccount,
		AmountSantim: in.AmountSantim, TenantId: in.TenantID, Domain: in.Domain, CallbackUrl: in.CallbackURL})
	if err != nil {
		switch gateway.ReasonOf(err) {
		case gateway.ReasonDeadlineExceeded, gateway.ReasonUnavailable, gateway.ReasonInternal:
			// The request may have reached the partner.
			log.Warn("transfer outcome unknown", "error", err)
			return TransferResult{Outcome: TransferUnknown, UnknownReason: string(gateway.ReasonOf(err))}, nil
		}
		log.Warn("transfer not sent", "error", err)
		return TransferResult{}, temporalError(err)
	}
	var res TransferResult
	switch resp.GetOutcome() {
	case gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED:
		t := resp.GetTransfer()
		res = TransferResult{Outcome: TransferAccepted, TransferID: t.GetId(), Status: transferStatus(t.GetStatus()),
			FailureCode: t.GetFailureCode(), Replayed: resp.GetReplayed()}
	case gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_REJECTED:
		res = TransferResult{Outcome: TransferRejected, RejectCode: resp.GetRejectCode(), RejectMessage: resp.GetRejectMessage()}
	case gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_UNKNOWN:
		res = TransferResult{Outcome: TransferUnknown, UnknownReason: resp.GetUnknownReason()}
	default:
		return TransferResult{}, disbursementError(resp)
	}
	log.Info("transfer initiated", "outcome", res.Outcome, "transfer_id", res.TransferID, "status", res.Status,
		"reject_code", res.RejectCode, "replayed", res.Replayed)
	return res, nil
}

// TransferStatusInput names a transfer by our reference.
type TransferStatusInput struct {
	Run
	Partner   string
	Reference string
}

// TransferStatusResult is the partner's word on the transfer.
type TransferStatusResult struct {
	Status      string // PENDING, SETTLED, FAILED or NOT_FOUND
	TransferID  string
	FailureCode string
}

// TransferStatus asks the partner (through the gateway) where the transfer stands. NOT_FOUND is
// a result: the partner has no transfer with the reference, so it was never sent. Every lookup
// is counted in svc_settlement_poller_ticks_total{outcome}.
func (m *Money) TransferStatus(ctx context.Context, in TransferStatusInput) (TransferStatusResult, error) {
	if m.Gateway == nil {
		return TransferStatusResult{}, misconfigured("money: no gateway client configured")
	}
	log := in.logger(ctx, "partner", in.Partner, "partner_reference", in.Reference)
	resp, err := m.Gateway.GetTransferStatus(ctx, &gatewayv1.GetTransferStatusRequest{Partner: in.Partner, Reference: in.Reference})
	if errors.Is(err, gateway.ErrTransferNotFound) {
		m.Metrics.inc(PollNotFound)
		log.Info("transfer status", "status", TransferNotFound)
		return TransferStatusResult{Status: TransferNotFound}, nil
	}
	if err != nil {
		m.Metrics.inc(PollError)
		log.Warn("transfer status lookup failed", "error", err)
		return TransferStatusResult{}, temporalError(err)
	}
	t := resp.GetTransfer()
	res := TransferStatusResult{Status: transferStatus(t.GetStatus()), TransferID: t.GetId(), FailureCode: t.GetFailureCode()}
	switch res.Status {
	case TransferSettled:
		m.Metrics.inc(PollSettled)
	case TransferFailed:
		m.Metrics.inc(PollFailed)
	case TransferPending:
		m.Metrics.inc(PollPending)
	default:
		m.Metrics.inc(PollError)
		return TransferStatusResult{}, retryable("gateway answered a transfer without a status", ErrTypeDependency)
	}
	log.Info("transfer status", "status", res.Status, "transfer_id", res.TransferID, "failure_code", res.FailureCode)
	return res, nil
}

func transferStatus(s gatewayv1.TransferStatus) string {
	switch s {
	case gatewayv1.TransferStatus_TRANSFER_STATUS_PENDING:
		return TransferPending
	case gatewayv1.TransferStatus_TRANSFER_STATUS_SETTLED:
		return TransferSettled
	case gatewayv1.TransferStatus_TRANSFER_STATUS_FAILED:
		return TransferFailed
	}
	return ""
}

func statusName(s ledgerv1.TransactionStatus) string {
	switch s {
	case ledgerv1.TransactionStatus_TRANSACTION_STATUS_PENDING:
		return "PENDING"
	case ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED:
		return "POSTED"
	case ledgerv1.TransactionStatus_TRANSACTION_STATUS_VOIDED:
		return "VOIDED"
	case ledgerv1.TransactionStatus_TRANSACTION_STATUS_REVERSED:
		return "REVERSED"
	}
	return ""
}
