package reconcile

import "time"

// Direction is a statement line's direction from the statement account's point of view. The
// values are the ones the gateway stores (camt.053's CdtDbtInd).
type Direction string

const (
	Credit Direction = "CRDT" // money into the account
	Debit  Direction = "DBIT" // money out of it
)

// FlagKind names a discrepancy between a partner statement and the ledger's mirror account.
type FlagKind string

const (
	// The bank booked a credit/debit whose reference the ledger knows, but the ledger has no
	// movement of that direction for it (e.g. a refund the ledger never reversed).
	MissingCreditInLedger FlagKind = "MISSING_CREDIT_IN_LEDGER"
	MissingDebitInLedger  FlagKind = "MISSING_DEBIT_IN_LEDGER"
	// The ledger recorded money into/out of the bank account that the bank never booked.
	MissingCreditAtBank FlagKind = "MISSING_CREDIT_AT_BANK"
	MissingDebitAtBank  FlagKind = "MISSING_DEBIT_AT_BANK"
	// The bank booked the same reference and direction more often than the ledger moved it.
	DuplicateBankLine FlagKind = "DUPLICATE_BANK_LINE"
	// The ledger moved the same reference and direction more often than the bank booked it.
	DuplicateLedgerEntry FlagKind = "DUPLICATE_LEDGER_ENTRY"
	// Same reference and direction, different amounts (by as little as one santim).
	AmountMismatch FlagKind = "AMOUNT_MISMATCH"
	// A bank line with no reference, or one the ledger has never seen.
	UnknownBankLine FlagKind = "UNKNOWN_BANK_LINE"
)

// FlagKinds is every kind, in a fixed order.
var FlagKinds = []FlagKind{
	MissingCreditInLedger, MissingDebitInLedger, MissingCreditAtBank, MissingDebitAtBank,
	DuplicateBankLine, DuplicateLedgerEntry, AmountMismatch, UnknownBankLine,
}

// BankItem is a statement line as the matcher sees it.
type BankItem struct {
	Account      string
	EntryRef     string
	Reference    string
	Direction    Direction
	AmountSantim int64
	Date         time.Time // booking date (UTC day)
	// Baseline: the line was booked before the account became the ledger's mirror (it is in the
	// recorded baseline, gateway.Baseline). It pairs with a ledger movement like any line, and is
	// then counted; left over it is the account's history, neither counted nor flagged.
	Baseline bool
}

// HoldState says whether a ledger item is money the ledger's books moved ("") or a hold on the
// mirror that did not become a movement.
type HoldState string

const (
	// HoldOpen: a pending transaction (the saga waits for its transfer). The bank books a
	// transfer's debit when it accepts it, so its line may already be on the statement.
	HoldOpen HoldState = "OPEN"
	// HoldVoided: a voided transaction (the transfer failed). The bank may show the transfer's
	// debit and, as it failed, the refund of it: the two cancel out on both sides.
	HoldVoided HoldState = "VOIDED"
)

// LedgerItem is the net movement of one ledger transaction on a mirror account, seen from the
// bank account: Credit when the mirror was debited (money arrived at the bank account), Debit
// when it was credited.
type LedgerItem struct {
	Account       string
	TransactionID string
	// References under which the bank may know this movement: the transaction's
	// "bank_reference" metadata (partnerref), its idempotency key, its id, and for postings made
	// before leg references the transfer reference their key implies (any may appear on the line).
	References []string
	// Hold is set for a transaction that only held money on the mirror (its amount is the
	// hold's). Such an item is not a movement of the ledger's books: it only explains the bank
	// lines of its transfer, and is never counted or flagged itself.
	Hold         HoldState
	Direction    Direction
	AmountSantim int64
	Seq          int64
	Date         time.Time // UTC day of the entry
	// Pair is the other half of a reversal: the transaction this one reverses, or the reversal
	// of this one ("" for neither). A movement and its reversal of which the bank booked
	// neither moved nothing at the bank: they cancel out, counted as matched and never flagged.
	Pair string
	// PairUnbooked: the pair is dated outside the period, and the statement around its day
	// (which the caller checked, fetched for every day of it) has no line for it. Within the
	// period Match sees for itself whether the bank booked the pair.
	PairUnbooked bool
	pairDay      time.Time // the pair's posting day (mirrorMovements)
	pairRefs     []string  // the references the bank may know the pair by
}

// Flag is one discrepancy.
type Flag struct {
	Kind          FlagKind
	Account       string
	Reference     string
	Direction     Direction
	EntryRef      string
	TransactionID string
	LedgerSeq     int64
	BankSantim    *int64
	LedgerSantim  *int64
	Date          time.Time
	Detail        string
}

// Fingerprint identifies the discrepancy across runs: the bank line or ledger movement it is
// about, so re-running over the same days finds the same flag instead of a new one.
func (f Flag) Fingerprint() string {
	switch f.Kind {
	case MissingCreditAtBank, MissingDebitAtBank, DuplicateLedgerEntry:
		return TxRef{f.Account, f.TransactionID}.fingerprint()
	case AmountMismatch:
		return "bank:" + f.EntryRef + ":ledger:" + f.TransactionID
	}
	return "bank:" + f.EntryRef
}

// MatchResult is the outcome of matching one period.
type MatchResult struct {
	Scanned int // bank lines and ledger movements dated within the period
	Matched int // of those, the ones paired with an equal counterpart
	Flags   []Flag
	// Cancelled are the movements that cancelled out with their reversal (both halves, also a
	// half dated outside the period): a flag an earlier run raised for one of them is resolved.
	Cancelled []TxRef
}

// TxRef names a ledger transaction's movement on a mirror account.
type TxRef struct {
	Account       string
	TransactionID string
}

// fingerprint is the fingerprint of the ledger-side flags about the movement.
func (r TxRef) fingerprint() string { return "ledger:" + r.Account + ":" + r.TransactionID }

// PairRequest names one tenant and partner and a period (YYYY-MM-DD, inclusive). It is the
// input of both reconciliation activities, so its field names are part of recorded histories.
type PairRequest struct {
	TenantID string
	Partner  string
	From, To string
}

// FetchCounts is what FetchStatements ingested.
type FetchCounts struct {
	Accounts       int `json:"accounts"`
	Lines          int `json:"lines"`
	New            int `json:"new"`
	AlreadyPresent int `json:"alreadyPresent"`
}

// PairSummary is the JSON summary of one tenant and partner.
type PairSummary struct {
	Tenant      string           `json:"tenant"`
	Partner     string           `json:"partner"`
	PeriodFrom  string           `json:"periodFrom"`
	PeriodTo    string           `json:"periodTo"`
	RunID       int64            `json:"runId,omitempty"`
	Accounts    int              `json:"accounts"`
	Scanned     int              `json:"scanned"`
	Matched     int              `json:"matched"`
	Flagged     int              `json:"flagged"`
	Errors      int              `json:"errors"`
	FlagsByKind map[FlagKind]int `json:"flagsByKind,omitempty"`
	// DriftSantim is the ledger's own absolute drift for the partner (ReconcileWithBank).
	DriftSantim  int64    `json:"driftSantim"`
	ErrorDetails []string `json:"errorDetails,omitempty"`
	NextAction   string   `json:"nextAction"`
}

// Aggregate sums pair summaries.
type Aggregate struct {
	Pairs       int              `json:"pairs"`
	Scanned     int              `json:"scanned"`
	Matched     int              `json:"matched"`
	Flagged     int              `json:"flagged"`
	Errors      int              `json:"errors"`
	FlagsByKind map[FlagKind]int `json:"flagsByKind,omitempty"`
	DriftSantim int64            `json:"driftSantim"`
	NextAction  string           `json:"nextAction"`
}

// Report is a whole reconciliation's output: one summary per pair and their aggregate.
type Report struct {
	Pairs     []PairSummary `json:"pairs"`
	Aggregate Aggregate     `json:"aggregate"`
}
