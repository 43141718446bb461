package ledger

import "time"

// Direction is the side of an entry.
type Direction string

const (
	Debit  Direction = "DEBIT"
	Credit Direction = "CREDIT"
)

// Opposite is the other side (a reversal flips every entry).
func (d Direction) Opposite() Direction {
	if d == Debit {
		return Credit
	}
	return Debit
}

// Status is a transaction's state: PENDING -> POSTED | VOIDED, POSTED -> REVERSED.
type Status string

const (
	Pending  Status = "PENDING"
	Posted   Status = "POSTED"
	Voided   Status = "VOIDED"
	Reversed Status = "REVERSED"
)

// Kind says how a transaction came to be.
type Kind string

const (
	Standard         Kind = "STANDARD"
	ReversalKind     Kind = "REVERSAL"
	AdjustmentKind   Kind = "ADJUSTMENT"
	DefaultCurrency       = "ETB"
	MaxBatch              = 5000 // transactions per PostTransactions call
	MaxEntries            = 500  // entries per transaction
	maxMetadataBytes      = 16 << 10
)

// MaxGetTransactions is how many ids one GetTransactions call may ask for.
const MaxGetTransactions = 1000

// MaxGetBalances is how many accounts one GetBalances call may ask for: a dashboard's or a
// statement's worth, each summed in the one statement that answers them all.
const MaxGetBalances = 100

// Phase says which balance an entry moves: POSTED the posted balance, HOLD opens a pending
// hold, RELEASE closes it (on commit or void). Entries are never updated, so two-phase
// postings are expressed by appending, which keeps checkpoints valid forever.
type Phase string

const (
	PhasePosted  Phase = "POSTED"
	PhaseHold    Phase = "HOLD"
	PhaseRelease Phase = "RELEASE"
)

// Account is a ledger account.
type Account struct {
	ID         string
	TenantID   string
	Name       string
	Type       AccountType
	NormalSide Direction
	Currency   string
	CreatedAt  time.Time
}

// EntryInput is one leg of a posting; exactly one of AccountID and AccountName is set.
type EntryInput struct {
	AccountID    string
	AccountName  string
	Direction    Direction
	AmountSantim int64
}

// Lineage ties a transaction to the saga step that made it.
type Lineage struct {
	WorkflowID string
	RunID      string
	Step       string
}

// Adjustment is the approval record of a manual correction.
type Adjustment struct {
	Source      string
	Reason      string
	ApprovedBy  string
	RequestedBy string
}

// Posting is a request to write one transaction.
type Posting struct {
	TenantID       string
	IdempotencyKey string
	Entries        []EntryInput
	Status         Status // Pending or Posted
	Metadata       map[string]string
	Lineage        Lineage
	Kind           Kind        // Standard unless an adjustment
	Adjustment     *Adjustment // set when Kind is AdjustmentKind
}

// Entry is a written entry.
type Entry struct {
	Seq           int64
	TransactionID string
	AccountID     string
	AccountName   string
	Direction     Direction
	AmountSantim  int64
	Phase         Phase
	Currency      string
	CreatedAt     time.Time
}

// Transaction is a written transaction with its entries (every phase, in sequence order).
type Transaction struct {
	ID             string
	TenantID       string
	IdempotencyKey string
	Status         Status
	Kind           Kind
	Currency       string
	Metadata       map[string]string
	Lineage        Lineage
	ReversesID     string
	ReversedByID   string
	ReversalReason string
	VoidReason     string
	Adjustment     *Adjustment
	Entries        []Entry
	CreatedAt      time.Time
	PostedAt       *time.Time
	VoidedAt       *time.Time
	ReversedAt     *time.Time
}

// PostResult is the outcome of one posting of a batch: a transaction or an error.
type PostResult struct {
	Transaction *Transaction
	Replayed    bool
	Err         error
}

// Balance is an account's balance derived from its entries.
type Balance struct {
	AccountID            string
	AccountName          string
	Currency             string
	NormalSide           Direction
	PostedDebitsSantim   int64
	PostedCreditsSantim  int64
	PendingDebitsSantim  int64 // open holds
	PendingCreditsSantim int64
	LastSeq              int64
	EntryCount           int64
	AsOf                 time.Time
}

// PostedSantim is the posted balance on the account's normal side.
func (b Balance) PostedSantim() int64 {
	if b.NormalSide == Debit {
		return b.PostedDebitsSantim - b.PostedCreditsSantim
	}
	return b.PostedCreditsSantim - b.PostedDebitsSantim
}

// PendingSantim is the posted balance plus open holds, on the normal side.
func (b Balance) PendingSantim() int64 {
	if b.NormalSide == Debit {
		return b.PostedSantim() + b.PendingDebitsSantim - b.PendingCreditsSantim
	}
	return b.PostedSantim() + b.PendingCreditsSantim - b.PendingDebitsSantim
}

// AvailableSantim is the posted balance minus holds that take money off the normal side:
// pending credits on a debit-normal account, pending debits on a credit-normal one. Incoming
// holds are not available until committed.
func (b Balance) AvailableSantim() int64 {
	if b.NormalSide == Debit {
		return b.PostedSantim() - b.PendingCreditsSantim
	}
	return b.PostedSantim() - b.PendingDebitsSantim
}
