// Package chart is Wagerail's chart of accounts: the account bases, their accounting types,
// the shape of the names built on them, and the builders every caller uses for those names.
// It is a leaf (standard library only) so that the ledger, the workflows, the API, the gateway
// and reconciliation all name accounts from this one place instead of concatenating strings.
//
// There is deliberately no cash account: the service never holds money, so money at partner
// banks is mirrored per bank account (partner-bank:<partner>:<account>) and every other account
// is a claim or an obligation. Per-subject sub-accounts are further name segments, e.g.
// receivable-from-employee:<employee_id>.
package chart

import (
	"fmt"
	"strings"
)

// Type is the accounting type of an account; it fixes the account's normal side.
type Type string

const (
	Asset     Type = "ASSET"
	Liability Type = "LIABILITY"
	Income    Type = "INCOME"
	Expense   Type = "EXPENSE"
	Equity    Type = "EQUITY"
)

// Valid reports whether t is one of the five types.
func (t Type) Valid() bool {
	switch t {
	case Asset, Liability, Income, Expense, Equity:
		return true
	}
	return false
}

// The bases of the chart. An account name is a base, optionally "[<id>]"-qualified, followed by
// the ":"-separated segments its entry allows.
const (
	PayrollClearing        = "payroll-clearing"
	ReceivableFromEmployee = "receivable-from-employee"
	ReceivableFromBorrower = "receivable-from-borrower"
	ReceivableFromCustomer = "receivable-from-customer"
	PartnerBank            = "partner-bank"
	PayableToFIPartner     = "payable-to-fi-partner"
	PayableToEmployee      = "payable-to-employee"
	PayableToEmployer      = "payable-to-employer"
	PayableToMerchant      = "payable-to-merchant"
	EqubPool               = "equb:pool"
	SavingsHeld            = "savings-held"
	FeeIncome              = "fee-income"
	InterestIncome         = "interest-income"
	MiscLoss               = "misc-loss"
	OpeningBalanceEquity   = "opening-balance-equity"
)

// Entry is one base of the chart: its type, how many ":"-separated segments follow the base
// (MinSegments..MaxSegments), whether a "[<id>]" qualifier is required, and what it holds.
type Entry struct {
	Type        Type
	MinSegments int
	MaxSegments int
	Qualifier   bool
	Meaning     string
}

// Entries is the chart, by base.
var Entries = map[string]Entry{
	PayrollClearing:        {Asset, 0, 2, false, "payroll money in transit between employer and lenders"},
	ReceivableFromEmployee: {Asset, 0, 2, false, "EWA advances owed by employees (sub-account per employee)"},
	ReceivableFromBorrower: {Asset, 0, 2, false, "loan principal and installments owed by borrowers"},
	ReceivableFromCustomer: {Asset, 0, 2, false, "BNPL instalments owed by customers"},
	PartnerBank:            {Asset, 2, 3, false, "mirror of money held at a partner bank account: partner-bank:<partner>:<account>"},
	PayableToFIPartner:     {Liability, 0, 2, true, "owed to a financial institution: payable-to-fi-partner[<fi_id>]"},
	PayableToEmployee:      {Liability, 0, 2, false, "net pay or refunds owed to employees"},
	PayableToEmployer:      {Liability, 0, 2, false, "amounts owed back to the employer"},
	PayableToMerchant:      {Liability, 0, 2, false, "BNPL settlements owed to merchants"},
	EqubPool:               {Liability, 2, 2, false, "mirror of an equb escrow pool: equb:pool:<tenant>:<cycle>"},
	SavingsHeld:            {Liability, 0, 2, false, "savings-goal balances owed to savers"},
	FeeIncome:              {Income, 0, 2, false, "EWA and service fees earned"},
	InterestIncome:         {Income, 0, 2, false, "loan interest earned"},
	MiscLoss:               {Expense, 0, 2, false, "write-offs and dispute adjustments"},
	OpeningBalanceEquity:   {Equity, 0, 2, false, "opening balances brought from another system"},
}

// PartnerBankAccount is the name of the account mirroring a partner bank account:
// partner-bank:<partner>:<account>.
func PartnerBankAccount(partner, account string) string {
	return PartnerBankPrefix(partner) + account
}

// PartnerBankPrefix is the common prefix of the mirror accounts of one partner
// ("partner-bank:<partner>:"); what follows it in a mirror account's name is the bank account.
func PartnerBankPrefix(partner string) string {
	return PartnerBank + ":" + partner + ":"
}

// EmployeeReceivable is the account of the EWA advances one employee owes:
// receivable-from-employee:<employee>.
func EmployeeReceivable(employeeID string) string {
	return ReceivableFromEmployee + ":" + employeeID
}

// BorrowerReceivable is the account of what a borrower owes on one loan (its principal
// outstanding): receivable-from-borrower:<loan>.
func BorrowerReceivable(loanID string) string {
	return ReceivableFromBorrower + ":" + loanID
}

// FIPayable is what the business owes a financial institution on one loan (its advance and the
// interest and fees collected, until remitted): payable-to-fi-partner[<fi>]:<loan>.
func FIPayable(fiID, loanID string) string {
	return PayableToFIPartner + "[" + fiID + "]:" + loanID
}

// LoanClearing is the payroll money collected on one loan and not yet remitted to its FI:
// payroll-clearing:<loan>.
func LoanClearing(loanID string) string {
	return PayrollClearing + ":" + loanID
}

// CustomerReceivable is what a BNPL customer owes on one agreement:
// receivable-from-customer:<agreement>.
func CustomerReceivable(agreementID string) string {
	return ReceivableFromCustomer + ":" + agreementID
}

// MerchantPayable is what is owed a merchant on one BNPL agreement until it is paid:
// payable-to-merchant:<merchant>:<agreement>.
func MerchantPayable(merchantID, agreementID string) string {
	return PayableToMerchant + ":" + merchantID + ":" + agreementID
}

// EqubPoolAccount is the account mirroring one equb cycle's escrow pool: equb:pool:<tenant>:<cycle>.
func EqubPoolAccount(tenant, cycle string) string {
	return EqubPool + ":" + tenant + ":" + cycle
}

// colonBases are the bases that contain ':' themselves ("equb:pool").
var colonBases = func() []string {
	var bs []string
	for b := range Entries {
		if strings.Contains(b, ":") {
			bs = append(bs, b)
		}
	}
	return bs
}()

// ValidSegment reports whether s can be a segment of an account name (a partner, a bank account,
// a subject id): 1 to 128 characters of A-Z a-z 0-9 . _ @ -.
func ValidSegment(s string) bool { return validSegment(s, 128) }

// validSegment reports whether s is 1 to max characters of A-Z a-z 0-9 . _ @ -. (A loop, not a
// regular expression: every posting checks its account names, and this is on that path.)
func validSegment(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == '@', c == '-':
		default:
			return false
		}
	}
	return true
}

// splitQualifier splits "base[qualifier]" into its parts; ok is false when base carries no
// well-formed qualifier.
func splitQualifier(base string) (name, qualifier string, ok bool) {
	if !strings.HasSuffix(base, "]") {
		return base, "", false
	}
	i := strings.LastIndexByte(base, '[')
	if i < 1 || !validSegment(base[i+1:len(base)-1], 64) {
		return base, "", false
	}
	return base[:i], base[i+1 : len(base)-1], true
}

// Parse checks that name belongs to the chart and returns its type. The error's text says what
// is wrong with the name (the ledger wraps it in its INVALID_ACCOUNT_NAME error).
func Parse(name string) (Type, error) {
	if name == "" || len(name) > 255 {
		return "", fmt.Errorf("account name must be 1 to 255 characters")
	}
	base, rest := name, ""
	if i := strings.IndexByte(name, ':'); i >= 0 {
		base, rest = name[:i], name[i:]
	}
	// Bases that contain ':' themselves ("equb:pool").
	for _, b := range colonBases {
		if name == b || strings.HasPrefix(name, b+":") {
			base, rest = b, name[len(b):]
		}
	}
	qualified := ""
	if b, q, ok := splitQualifier(base); ok {
		base, qualified = b, q
	}
	entry, ok := Entries[base]
	if !ok {
		return "", fmt.Errorf("%q is not in the chart of accounts", name)
	}
	if entry.Qualifier && qualified == "" {
		return "", fmt.Errorf("%q needs a qualifier: %s[<id>]", name, base)
	}
	if !entry.Qualifier && qualified != "" {
		return "", fmt.Errorf("%q takes no [qualifier]", name)
	}
	var segs []string
	if rest != "" {
		segs = strings.Split(rest[1:], ":")
	}
	for _, s := range segs {
		if !validSegment(s, 128) {
			return "", fmt.Errorf("%q: segment %q must be 1-128 of A-Z a-z 0-9 . _ @ -", name, s)
		}
	}
	if len(segs) < entry.MinSegments || len(segs) > entry.MaxSegments {
		return "", fmt.Errorf("%q: %s takes %s", name, base, segmentsText(entry))
	}
	return entry.Type, nil
}

func segmentsText(e Entry) string {
	if e.MinSegments == e.MaxSegments {
		return fmt.Sprintf("exactly %d ':' segments", e.MinSegments)
	}
	return fmt.Sprintf("%d to %d ':' segments", e.MinSegments, e.MaxSegments)
}
