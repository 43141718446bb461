// Package partnerref is the one home of the reference that ties a saga's partner transfer to its
// ledger posting: the saga sends it to the gateway (and so to the partner, which books it on the
// statement line), puts it on the posting that moves the partner-bank mirror account (metadata
// "bank_reference"), the bank callback is routed by it to the saga (WorkflowIDOf), and
// reconciliation matches the statement line to the posting by it, exactly.
//
// A reference names one transfer leg of one saga run: "<workflow id>.<saga kind>.<leg>". A saga
// that sends many transfers (loan remittances, payroll batches, equb legs) gives each its own
// leg number, so each bank line has its own reference and its own posting. The form is chosen
// so that the workflow id is recoverable (callbacks signal it) and so that it stays within
// every reference field it is passed to: workflow ids are at most 90 bytes of [A-Za-z0-9_-]
// (internal/platform/idempotency), kinds at most MaxKind, legs at most MaxLeg, well under the gateway's
// 140 bytes.
//
// It has no dependencies, so workflows (deterministic code), activities, the gateway, the
// bank-callback applier and reconciliation can all use it.
package partnerref

import (
	"strconv"
	"strings"
)

// Kind names a saga in references: lower-case letters, digits and '-', starting with a letter,
// at most MaxKind bytes.
type Kind string

// The saga kinds that send partner transfers.
const (
	EwaDisburse Kind = "ewa-disburse"
	// LoanDisburse is a loan's disbursement from its FI's funding account to the borrower
	// (workflows.LoanDisburse): one leg.
	LoanDisburse Kind = "loan-disburse"
	// BulkItem is an item of a bulk disbursement sent by the fan-out block (workflows.Fanout):
	// the workflow id is the batch's (one child workflow per batch, whatever saga fanned out),
	// the leg the item's number in it. Callbacks about bulk items are gathered per batch
	// (internal/bankwebhook) and reach the batch's workflow as one signal.
	BulkItem Kind = "bulk"
	// LoanRemit is the transfer of a repaid loan instalment from the business's payroll account
	// to the lending FI's settlement account (workflows.LoanRemit; one leg).
	LoanRemit Kind = "loan-remit"
	// EqubContribution is a member's contribution from their account to the cycle's escrow
	// account (workflows.EqubContribute; one leg); EqubPayout the cycle's pot from the escrow
	// account to its recipient (workflows.EqubPayout; one leg).
	EqubContribution Kind = "equb-contribution"
	EqubPayout       Kind = "equb-payout"
	// BnplSettle is a BNPL purchase's settlement from the business's funding account to the
	// merchant's settlement account (workflows.BnplActivate; one leg).
	BnplSettle Kind = "bnpl-settle"
	// CourtOrderRemit is a payroll run's court-order withholding for one payee account, from the
	// business's payroll account to the court's (workflows.PayrollCourtOrderRemit; one leg per
	// payee, numbered in the claim's order).
	CourtOrderRemit Kind = "court-order-remit"
	// SavingsDeposit and SavingsWithdraw are a savings goal's movements between the saver's payout
	// account and the organization's savings escrow (workflows.SavingsMove; one leg each).
	SavingsDeposit  Kind = "savings-deposit"
	SavingsWithdraw Kind = "savings-withdraw"
	// WalletTransfer is a transfer out of an employee's wallet, from the organization's wallet
	// pool account to the destination the employee named (workflows.WalletTransfer; one leg).
	WalletTransfer Kind = "wallet-transfer"
)

// LedgerMetadataKey is the ledger transaction metadata key under which a posting that moves a
// partner-bank mirror account names the transfer it pays for.
const LedgerMetadataKey = "bank_reference"

// Bounds of a reference's parts.
const (
	MaxKind = 32
	MaxLeg  = 99999
)

// Ref is a parsed reference.
type Ref struct {
	Kind       Kind
	WorkflowID string
	Leg        int
}

// String is the reference's wire form.
func (r Ref) String() string {
	return r.WorkflowID + "." + string(r.Kind) + "." + strconv.Itoa(r.Leg)
}

// Leg is the reference of transfer leg leg (1-based) of the run workflowID of a saga of kind.
// It is pure and total (workflow code calls it); kind and leg are the caller's constants, and
// Parse refuses what does not round-trip.
func Leg(kind Kind, workflowID string, leg int) string {
	return Ref{Kind: kind, WorkflowID: workflowID, Leg: leg}.String()
}

// IsBulkItem reports whether ref is the reference of an item of a bulk disbursement (BulkItem).
func IsBulkItem(ref string) bool {
	r, ok := Parse(ref)
	return ok && r.Kind == BulkItem
}

// Parse reads a reference built by Leg. ok is false for anything else (a legacy reference, a
// reference of someone else's, the bank's own text).
func Parse(ref string) (r Ref, ok bool) {
	i := strings.LastIndexByte(ref, '.')
	if i < 0 {
		return Ref{}, false
	}
	legStr := ref[i+1:]
	j := strings.LastIndexByte(ref[:i], '.')
	if j <= 0 {
		return Ref{}, false
	}
	kind, wf := Kind(ref[j+1:i]), ref[:j]
	if !validKind(kind) || !validLeg(legStr) {
		return Ref{}, false
	}
	leg, _ := strconv.Atoi(legStr) // checked by validLeg
	return Ref{Kind: kind, WorkflowID: wf, Leg: leg}, true
}

// WorkflowIDOf is the id of the workflow that owns the transfer with our reference: the workflow
// id inside a leg reference, or the reference itself, which is how sagas before leg references
// named their one transfer (their runs may still be waiting for a callback).
func WorkflowIDOf(ref string) string {
	if r, ok := Parse(ref); ok {
		return r.WorkflowID
	}
	return ref
}

// legacyLedgerKeys are the ledger idempotency keys of postings made before leg references, by
// the prefix their saga put before its workflow id; the saga's transfer had the bare workflow id
// as its reference and the posting had no "bank_reference".
var legacyLedgerKeys = []Kind{EwaDisburse}

// FromLegacyLedgerKey is the partner reference of the transfer a posting made before leg
// references paid for, read from the posting's idempotency key ("ewa-disburse:<workflow id>" →
// "<workflow id>"). ok is false for any other key.
func FromLegacyLedgerKey(key string) (string, bool) {
	for _, k := range legacyLedgerKeys {
		if wf, ok := strings.CutPrefix(key, string(k)+":"); ok && wf != "" && !strings.ContainsAny(wf, ": \t") {
			return wf, true
		}
	}
	return "", false
}

func validKind(k Kind) bool {
	if len(k) == 0 || len(k) > MaxKind || k[0] < 'a' || k[0] > 'z' {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// validLeg: a decimal in [1, MaxLeg] without leading zeros, so each leg has one spelling.
func validLeg(s string) bool {
	if len(s) == 0 || len(s) > len(strconv.Itoa(MaxLeg)) || s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	n, err := strconv.Atoi(s)
	return err == nil && n >= 1 && n <= MaxLeg
}
