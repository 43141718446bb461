package sandbox

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
)

// Transfer statuses.
const (
	StatusPending = "PENDING"
	StatusSettled = "SETTLED"
	StatusFailed  = "FAILED"
)

// Account statuses.
const (
	AccountActive = "ACTIVE"
	AccountClosed = "CLOSED"
)

// Error codes of the contract (the "code" of the error envelope and a transfer's failureCode).
const (
	CodeInvalidRequest    = "INVALID_REQUEST"
	CodeAccountNotFound   = "ACCOUNT_NOT_FOUND"
	CodeAccountClosed     = "ACCOUNT_CLOSED"
	CodeAccountExists     = "ACCOUNT_EXISTS"
	CodeInsufficientFunds = "INSUFFICIENT_FUNDS"
	CodeCurrencyMismatch  = "CURRENCY_MISMATCH"
	CodeReferenceConflict = "REFERENCE_CONFLICT"
	CodeTransferNotFound  = "TRANSFER_NOT_FOUND"
	CodeBatchNotFound     = "BATCH_NOT_FOUND"
	CodeInjectedFailure   = "INJECTED_FAILURE"
	CodeNotFound          = "NOT_FOUND"
	CodeInternal          = "INTERNAL"

	// Refusals added by the hardening of the HTTP edge; every one is the caller's error.

	// CodeBodyTooLarge (413): the request body is over the route's bound.
	CodeBodyTooLarge = "BODY_TOO_LARGE"
	// CodeCallbackURLNotAllowed (400): callbackUrl is not on the allowlist the bank was started
	// with; the bank never calls a URL a request makes up.
	CodeCallbackURLNotAllowed = "CALLBACK_URL_NOT_ALLOWED"
	// CodeBalanceLimit (422): a funding would take the account's balance past
	// money.MaxAccountTotalSantim.
	CodeBalanceLimit = "BALANCE_LIMIT_EXCEEDED"
)

// MaxBatchItems bounds a bulk transfer: with money.MaxAmountSantim per item, a batch total stays
// far inside int64.
const MaxBatchItems = 20_000

// Field bounds tighter than internal/platform/field's, set by the columns that hold them (0002_bank).
const (
	maxAccountBytes   = 64  // account_number's CHECK
	maxReferenceBytes = 140 // transfers.reference's CHECK counts characters; bytes bound it tighter
	maxHolderBytes    = 140 // holder_name's CHECK
)

// Error is a business outcome the HTTP edge maps to a status and the error envelope.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string { return strings.ToLower(e.Code) + ": " + e.Message }

func errf(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

func invalid(format string, args ...any) *Error {
	return errf(400, CodeInvalidRequest, format, args...)
}

// AsError returns the *Error inside err, if any.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Account is an account as the bank shows it to a third party: no balance.
type Account struct {
	AccountNumber string `json:"accountNumber"`
	HolderName    string `json:"holderName"`
	Currency      string `json:"currency"`
	Status        string `json:"status"`
}

// OperatorAccount is an account as the operator endpoints show it, balance included.
type OperatorAccount struct {
	Account
	BalanceSantim int64     `json:"balanceSantim"`
	CreatedAt     time.Time `json:"createdAt"`
}

// Transfer is the contract's Transfer object.
type Transfer struct {
	ID           string     `json:"id"`
	Reference    string     `json:"reference"`
	FromAccount  string     `json:"fromAccount"`
	ToAccount    string     `json:"toAccount"`
	AmountSantim int64      `json:"amountSantim"`
	Currency     string     `json:"currency"`
	TenantID     string     `json:"tenantId"`
	Domain       string     `json:"domain"`
	Status       string     `json:"status"`
	FailureCode  string     `json:"failureCode,omitempty"`
	BatchID      string     `json:"batchId,omitempty"`
	CallbackURL  string     `json:"callbackUrl,omitempty"`
	CreatedAt    time.Time  `json:"createdAt"`
	SettledAt    *time.Time `json:"settledAt,omitempty"`
	FailedAt     *time.Time `json:"failedAt,omitempty"`
}

// TransferRequest is the body of POST /api/v1/transfers.
type TransferRequest struct {
	Reference    string `json:"reference"`
	FromAccount  string `json:"fromAccount"`
	ToAccount    string `json:"toAccount"`
	AmountSantim int64  `json:"amountSantim"`
	Currency     string `json:"currency"`
	TenantID     string `json:"tenantId"`
	Domain       string `json:"domain"`
	CallbackURL  string `json:"callbackUrl,omitempty"`
}

// BatchRequest is the body of POST /api/v1/transfer-batches.
type BatchRequest struct {
	BatchReference string             `json:"batchReference"`
	FromAccount    string             `json:"fromAccount"`
	Currency       string             `json:"currency"`
	TenantID       string             `json:"tenantId"`
	Domain         string             `json:"domain"`
	CallbackURL    string             `json:"callbackUrl,omitempty"`
	Items          []BatchItemRequest `json:"items"`
}

// BatchItemRequest is one credit of a batch.
type BatchItemRequest struct {
	Reference    string `json:"reference"`
	ToAccount    string `json:"toAccount"`
	AmountSantim int64  `json:"amountSantim"`
}

// Batch is the contract's batch object.
type Batch struct {
	ID             string      `json:"id"`
	BatchReference string      `json:"batchReference"`
	FromAccount    string      `json:"fromAccount"`
	Currency       string      `json:"currency"`
	TenantID       string      `json:"tenantId"`
	Domain         string      `json:"domain"`
	Status         string      `json:"status"`
	ItemCount      int         `json:"itemCount"`
	TotalSantim    int64       `json:"totalSantim"`
	CreatedAt      time.Time   `json:"createdAt"`
	Items          []BatchItem `json:"items"`
}

// BatchItem is one item of a batch with its transfer's current status.
type BatchItem struct {
	Reference    string `json:"reference"`
	TransferID   string `json:"transferId"`
	ToAccount    string `json:"toAccount"`
	AmountSantim int64  `json:"amountSantim"`
	Status       string `json:"status"`
	FailureCode  string `json:"failureCode,omitempty"`
}

// BatchAccepted is the only status of a batch: items progress on their own.
const BatchAccepted = "ACCEPTED"

// CreateAccountRequest is the body of POST /api/v1/sandbox/accounts.
type CreateAccountRequest struct {
	AccountNumber string `json:"accountNumber"`
	HolderName    string `json:"holderName"`
	BalanceSantim int64  `json:"balanceSantim"`
	Status        string `json:"status,omitempty"`
	Currency      string `json:"currency,omitempty"`
}

// FundRequest is the body of POST /api/v1/sandbox/accounts/{account}/fund.
type FundRequest struct {
	AmountSantim int64  `json:"amountSantim"`
	Reference    string `json:"reference,omitempty"`
}

var (
	// accountRe is narrower than field.Identifier ('.' and ':' are not account characters here).
	accountRe  = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	currencyRe = regexp.MustCompile(`^[A-Z]{3}$`)
)

// refused turns a field refusal into the edge's 400; the message names the field, never the value.
func refused(err error) *Error {
	if err == nil {
		return nil
	}
	return invalid("%s", err.Error())
}

func validAccount(name, v string) *Error {
	if err := field.Identifier(name, v, maxAccountBytes); err != nil {
		return refused(err)
	}
	if !accountRe.MatchString(v) {
		return invalid("%s must be 1-64 letters, digits, '-' or '_'", name)
	}
	return nil
}

// validReference: a reference is looked up in a URL path (by-reference/{reference}), where "."
// and ".." are not references but directions (the router cleans them away), so a transfer or
// batch made under one could never be looked up by its reference.
func validReference(name, v string) *Error {
	if e := refused(field.Reference(name, v, maxReferenceBytes)); e != nil {
		return e
	}
	if v == "." || v == ".." {
		return invalid("%s must not be a path segment such as '.' or '..'", name)
	}
	return nil
}

// validName: a person's or account holder's name (field.Name) that also fits its column, at most
// maxBytes bytes.
func validName(name, v string, maxBytes int) *Error {
	if err := field.Name(name, v); err != nil {
		return refused(err)
	}
	if len(v) > maxBytes {
		return invalid("%s must be at most %d bytes", name, maxBytes)
	}
	return nil
}

func validAmount(name string, v int64) *Error {
	if !money.ValidAmount(v) {
		return invalid("%s must be a positive integer number of santim, at most %d", name, money.MaxAmountSantim)
	}
	return nil
}

// validCallbackURL checks the shape of a callback URL. A URL a request names must also be on the
// bank's allowlist (Bank.allowCallback); the allowlist entries pass this same check at start, so
// a URL on the list is never refused here.
func validCallbackURL(name, v string) *Error {
	// No whitespace, no control characters, at most field.MaxReference bytes: a callback URL is a
	// route of the API, far shorter than that.
	if err := field.Reference(name, v, field.MaxReference); err != nil {
		return refused(err)
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Fragment != "" {
		return invalid("%s must be an absolute http or https URL without credentials or fragment", name)
	}
	return nil
}

func validCommon(currency, tenantID, domain, callbackURL string) *Error {
	if currency == "" {
		return invalid("currency is required")
	}
	if !currencyRe.MatchString(currency) {
		return invalid("currency must be an ISO 4217 code such as ETB")
	}
	if err := field.Identifier("tenantId", tenantID, field.MaxIdentifier); err != nil {
		return refused(err)
	}
	if !money.ValidDomain(domain) {
		return invalid("domain must be one of %s", money.DomainList())
	}
	if callbackURL != "" {
		return validCallbackURL("callbackUrl", callbackURL)
	}
	return nil
}

// Validate checks the request's shape; account existence and funds are checked against the books.
func (r *TransferRequest) Validate() *Error {
	if e := validReference("reference", r.Reference); e != nil {
		return e
	}
	if e := validAccount("fromAccount", r.FromAccount); e != nil {
		return e
	}
	if e := validAccount("toAccount", r.ToAccount); e != nil {
		return e
	}
	if r.FromAccount == r.ToAccount {
		return invalid("fromAccount and toAccount must differ")
	}
	if e := validAmount("amountSantim", r.AmountSantim); e != nil {
		return e
	}
	return validCommon(r.Currency, r.TenantID, r.Domain, r.CallbackURL)
}

// Validate checks the batch's shape. Item references must be unique within the batch.
func (r *BatchRequest) Validate() *Error {
	if e := validReference("batchReference", r.BatchReference); e != nil {
		return e
	}
	if e := validAccount("fromAccount", r.FromAccount); e != nil {
		return e
	}
	if e := validCommon(r.Currency, r.TenantID, r.Domain, r.CallbackURL); e != nil {
		return e
	}
	if len(r.Items) == 0 {
		return invalid("items must not be empty")
	}
	if len(r.Items) > MaxBatchItems {
		return invalid("a batch holds at most %d items", MaxBatchItems)
	}
	seen := make(map[string]int, len(r.Items))
	for i, it := range r.Items {
		if e := validReference(fmt.Sprintf("items[%d].reference", i), it.Reference); e != nil {
			return e
		}
		if j, dup := seen[it.Reference]; dup {
			return invalid("items[%d].reference repeats items[%d].reference", i, j)
		}
		seen[it.Reference] = i
		if e := validAccount(fmt.Sprintf("items[%d].toAccount", i), it.ToAccount); e != nil {
			return e
		}
		if it.ToAccount == r.FromAccount {
			return invalid("items[%d].toAccount must differ from fromAccount", i)
		}
		if e := validAmount(fmt.Sprintf("items[%d].amountSantim", i), it.AmountSantim); e != nil {
			return e
		}
	}
	return nil
}

// Validate checks an operator's new account.
func (r *CreateAccountRequest) Validate() *Error {
	if e := validAccount("accountNumber", r.AccountNumber); e != nil {
		return e
	}
	if e := validName("holderName", r.HolderName, maxHolderBytes); e != nil {
		return e
	}
	if r.BalanceSantim < 0 || r.BalanceSantim > money.MaxAccountTotalSantim {
		return invalid("balanceSantim must be a non-negative integer number of santim, at most %d", money.MaxAccountTotalSantim)
	}
	switch r.Status {
	case "", AccountActive, AccountClosed:
	default:
		return invalid("status must be ACTIVE or CLOSED")
	}
	if r.Currency != "" && !currencyRe.MatchString(r.Currency) {
		return invalid("currency must be an ISO 4217 code such as ETB")
	}
	return nil
}

// Validate checks an operator's funding; the reference is optional.
func (r *FundRequest) Validate() *Error {
	if e := validAmount("amountSantim", r.AmountSantim); e != nil {
		return e
	}
	if r.Reference != "" {
		return validReference("reference", r.Reference)
	}
	return nil
}

// newID returns a random (version 4) UUID. The bank chooses its own ids; callers identify their
// transfers by reference.
func newID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// addSantim adds two non-negative amounts, refusing overflow.
func addSantim(a, b int64) (int64, error) {
	if b > 0 && a > math.MaxInt64-b {
		return 0, errors.New("sandbox: balance overflow")
	}
	return a + b, nil
}

// formatMajor renders santim as birr with two decimals ("1234.56") from the integer, never via a
// float, as camt.053 wants.
func formatMajor(santim int64) string {
	sign := ""
	u := uint64(santim)
	if santim < 0 {
		sign = "-"
		u = uint64(-(santim + 1)) + 1 // safe for MinInt64
	}
	return fmt.Sprintf("%s%d.%02d", sign, u/100, u%100)
}
