package ewa

import (
	"errors"
	"time"
)

// Status is an EWA request's state.
type Status string

const (
	Requested  Status = "REQUESTED"
	Disbursing Status = "DISBURSING"
	Disbursed  Status = "DISBURSED"
	Failed     Status = "FAILED"
	Cancelled  Status = "CANCELLED"
	Repaid     Status = "REPAID"
)

// Events the domain emits (outbox types).
const (
	EventRequested          = "ewa.requested.v1"
	EventDisbursed          = "ewa.disbursed.v1"
	EventDisbursementFailed = "ewa.disbursement_failed.v1"
	EventCancelled          = "ewa.cancelled.v1"
	EventRepaid             = "ewa.repaid.v1"
	// EventBankTransferSettled is the spec's <domain>.bank_transfer_settled.v1 for an advance's
	// transfer to the employee (outbox.TransferSettled, kind disbursement), written with
	// ewa.disbursed.v1. A repayment moves no money at the bank (a journal of what payroll
	// withheld or the employer paid) and has none.
	EventBankTransferSettled = "ewa.bank_transfer_settled.v1"
)

// Account is an account at a partner bank.
type Account struct {
	Partner       string
	AccountNumber string
	HolderName    string // "" when not known (the funding account)
}

// Settings are a tenant's EWA settings.
type Settings struct {
	TenantID string
	// Funding is where advances are paid from; zero until the tenant sets it (disbursing is
	// refused with ErrFundingNotSet until then).
	Funding          Account
	AccessCapPercent int64 // 1..100, default DefaultAccessCapPercent
	FeeFlatSantim    int64 // 0..MaxFeeFlatSantim
	FeeBasisPoints   int64 // 0..MaxFeeBasisPoints
	// AccountNameMatch turns on the account-lookup gate's name rule for this tenant: the holder
	// name the partner resolves must match the employer-provided name (else ACCOUNT_MISMATCH).
	AccountNameMatch bool
	// The caps besides the access cap (the kind EarnIn and Oracle Anytime Pay set), each nil
	// when the tenant sets none (the default: only the access cap and, when wired, the projected
	// net pay limit an advance). Amounts count principal + fee of the requests that are not
	// CANCELLED or FAILED (repaid ones too: they cap what is drawn, not what is owed); a day is
	// the UTC calendar day of the request, the period the pay period (Period).
	MaxPerDaySantim      *int64    // 1..money.MaxAmountSantim: principal + fee drawn in one day
	MaxPerPeriodSantim   *int64    // 1..money.MaxAmountSantim: principal + fee drawn in one pay period
	MaxRequestsPerDay    *int64    // 1..MaxRequestsCap: requests made in one day
	MaxRequestsPerPeriod *int64    // 1..MaxRequestsCap: requests made in one pay period
	UpdatedAt            time.Time // zero while the defaults apply
}

// Defaults and bounds of the settings.
const (
	DefaultAccessCapPercent = 50
	MaxFeeFlatSantim        = 100_000_00 // 100,000 ETB
	MaxFeeBasisPoints       = 10_000     // 100 %
	// MaxRequestsCap bounds the per-day and per-period request counts a tenant may set.
	MaxRequestsCap = 100
)

// Request is one EWA request.
type Request struct {
	ID              string
	TenantID        string
	EmployeeID      string
	PrincipalSantim int64
	FeeSantim       int64
	Status          Status
	WorkflowID      string // the disburse saga's id, once one claimed the request
	LedgerTxID      string // the disbursement's ledger transaction, once posted
	TransferID      string // the partner's transfer id, once accepted
	FailureReason   string // why FAILED
	// RepaidAmountSantim is the sum of the request's posted repayments (0 before the first);
	// RepaymentSource and RepaymentLedgerTxID are the latest one's (its source and journal).
	RepaidAmountSantim  int64
	RepaymentSource     string
	RepaymentLedgerTxID string
	RequestedAt         time.Time
	DisbursedAt         time.Time // zero until DISBURSED
	RepaidAt            time.Time // zero until REPAID (repaid in full)
	UpdatedAt           time.Time
}

// Plan is what the disburse saga reads about a request once, at its start.
type Plan struct {
	TenantID         string
	RequestID        string
	EmployeeID       string
	PrincipalSantim  int64
	FeeSantim        int64
	Funding          Account
	Destination      Account // the employee's payout account (HolderName is the employer's)
	AccountNameMatch bool
	Status           Status
	WorkflowID       string
}

// Errors of the store. Each maps to one stable API code (api/ewa.go).
var (
	ErrNotFound         = errors.New("ewa: request not found")                     // EWA_REQUEST_NOT_FOUND (404)
	ErrEmployeeNotFound = errors.New("ewa: employee not found")                    // EMPLOYEE_NOT_FOUND (404)
	ErrNotDisbursable   = errors.New("ewa: request is not in a disbursable state") // EWA_INVALID_STATE (409)
	ErrFundingNotSet    = errors.New("ewa: funding account not set")               // EWA_FUNDING_ACCOUNT_NOT_SET (409)
	ErrLimitExceeded    = errors.New("ewa: amount over the available limit")       // EWA_LIMIT_EXCEEDED (422)
)
