package gateway

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Adapter is one partner bank's protocol. Adding a bank is writing an Adapter; deadlines,
// retries, the circuit breaker and health bookkeeping are added around it by Guard, so an
// adapter only translates calls and classifies the bank's answers into PartnerError kinds.
//
// Every method returns either a result or a *PartnerError (wrapping the cause), never a bare
// error, so callers can tell "the bank said no" from "the bank may have acted".
type Adapter interface {
	// Partner is the partner's name as used in gRPC requests and callbacks ("sandbox").
	Partner() string
	// LookupAccount: KindNotFound when the bank has no such account.
	LookupAccount(ctx context.Context, account string) (Account, error)
	// InitiateTransfer submits one transfer. The bank dedupes on Reference, so resending the
	// same request is safe; replayed reports that the bank answered with an existing transfer.
	InitiateTransfer(ctx context.Context, req TransferRequest) (t Transfer, replayed bool, err error)
	// InitiateBatch submits a bulk transfer, deduped by the bank on BatchReference.
	InitiateBatch(ctx context.Context, req BatchRequest) (b Batch, replayed bool, err error)
	// BatchByReference reads a bulk transfer by our batch reference, with each item's current
	// status: KindNotFound when the bank has no batch with it.
	BatchByReference(ctx context.Context, batchReference string) (Batch, error)
	// TransferByReference: KindNotFound when the bank has no transfer with our reference.
	TransferByReference(ctx context.Context, reference string) (Transfer, error)
	// Statement downloads the statement file of one account for an inclusive date range.
	Statement(ctx context.Context, req StatementRequest) ([]byte, error)
	// Probe checks that the bank answers at all (for svc_dependency_up); it changes nothing.
	Probe(ctx context.Context) error
}

// Account is what a bank reveals about an account to a third party (never its balance).
type Account struct {
	Number     string
	HolderName string
	Currency   string
	Closed     bool
}

// TransferRequest is one disbursement. Amounts are santim.
type TransferRequest struct {
	Reference    string
	FromAccount  string
	ToAccount    string
	AmountSantim int64
	Currency     string
	TenantID     string
	Domain       string
	CallbackURL  string
}

// TransferStatus is the bank's view of a transfer.
type TransferStatus string

const (
	TransferPending TransferStatus = "PENDING"
	TransferSettled TransferStatus = "SETTLED"
	TransferFailed  TransferStatus = "FAILED"
)

// Transfer is a transfer as the bank reports it.
type Transfer struct {
	ID           string
	Reference    string
	FromAccount  string
	ToAccount    string
	AmountSantim int64
	Currency     string
	TenantID     string
	Domain       string
	Status       TransferStatus
	FailureCode  string
	BatchID      string
	CreatedAt    time.Time
	SettledAt    time.Time // zero until settled
}

// BatchItem is one line of a bulk transfer.
type BatchItem struct {
	Reference    string
	ToAccount    string
	AmountSantim int64
}

// BatchRequest is a bulk transfer from one source (payroll).
type BatchRequest struct {
	BatchReference string
	FromAccount    string
	Currency       string
	TenantID       string
	Domain         string
	CallbackURL    string
	Items          []BatchItem
}

// BatchItemResult is the bank's answer for one item.
type BatchItemResult struct {
	Reference   string
	TransferID  string
	Status      TransferStatus
	FailureCode string
}

// Batch is the bank's answer to a bulk transfer.
type Batch struct {
	ID             string
	BatchReference string
	TenantID       string // the tenant the batch was sent for, as the bank reports it
	ItemCount      int64
	TotalSantim    int64
	Items          []BatchItemResult
}

// StatementFormat selects the statement file format.
type StatementFormat string

const (
	FormatCSV     StatementFormat = "csv"
	FormatCamt053 StatementFormat = "camt053"
)

// StatementRequest asks for the statement of one account, From and To inclusive (UTC dates).
type StatementRequest struct {
	Account string
	From    time.Time
	To      time.Time
	Format  StatementFormat
}

// Kind classifies a partner call's failure by what it means for money.
type Kind int

const (
	// KindNotFound: the bank says the account or transfer does not exist.
	KindNotFound Kind = iota + 1
	// KindRejected: the bank refused a transfer; nothing moved. Code says why.
	KindRejected
	// KindConflict: the reference is already used with a different request.
	KindConflict
	// KindInvalid: the bank refused the request itself (a 4xx other than the ones above):
	// nothing happened, and the bank is working as it should.
	KindInvalid
	// KindUnavailable: the request never reached the bank (circuit open, connection refused),
	// so it certainly did not act.
	KindUnavailable
	// KindUnknown: the bank may or may not have acted (timeout, 5xx, unreadable answer).
	KindUnknown
)

func (k Kind) String() string {
	switch k {
	case KindNotFound:
		return "not_found"
	case KindRejected:
		return "rejected"
	case KindConflict:
		return "conflict"
	case KindInvalid:
		return "invalid"
	case KindUnavailable:
		return "unavailable"
	case KindUnknown:
		return "unknown"
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// PartnerError is every failure an Adapter (or Guard) returns.
type PartnerError struct {
	Op      string // e.g. "sandbox.lookup_account"
	Kind    Kind
	Code    string // the bank's error code, when it gave one
	Message string
	Status  int  // HTTP status, when there was one
	Timeout bool // the call's deadline expired (Kind is KindUnknown)
	Err     error
}

func (e *PartnerError) Error() string {
	msg := e.Op + ": " + e.Kind.String()
	if e.Code != "" {
		msg += " " + e.Code
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *PartnerError) Unwrap() error { return e.Err }

// AsPartnerError returns err's *PartnerError, or one of KindUnknown wrapping err.
func AsPartnerError(err error) *PartnerError {
	var pe *PartnerError
	if errors.As(err, &pe) {
		return pe
	}
	return &PartnerError{Op: "gateway", Kind: KindUnknown, Err: err}
}

// IsKind reports whether err is a PartnerError of kind k.
func IsKind(err error, k Kind) bool {
	var pe *PartnerError
	return errors.As(err, &pe) && pe.Kind == k
}

// partnerFault reports whether err says something about the partner's health: the bank could
// not be reached, timed out, or failed (5xx, an unreadable answer). A business answer (not found,
// rejected, conflict, invalid: any 4xx but 408 and 429) is the bank working as it should, so no
// caller can open the circuit breaker or degrade the partner with a bad request.
func partnerFault(err error) bool {
	if err == nil {
		return false
	}
	var pe *PartnerError
	if !errors.As(err, &pe) {
		return true
	}
	return pe.Kind == KindUnavailable || pe.Kind == KindUnknown
}
