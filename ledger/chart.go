package ledger

import (
	"fmt"
	"strings"
)

// AccountType is the accounting type of an account; it fixes the account's normal side.
type AccountType string

const (
	Asset     AccountType = "ASSET"
	Liability AccountType = "LIABILITY"
	Income    AccountType = "INCOME"
	Expense   AccountType = "EXPENSE"
	Equity    AccountType = "EQUITY"
)

// NormalSide is the side that increases the account: debit for assets and expenses, credit
// for liabilities, income and equity.
func (t AccountType) NormalSide() Direction {
	if t == Asset || t == Expense {
		return Debit
	}
	return Credit
}

// Valid reports whether t is one of the five types.
func (t AccountType) Valid() bool {
	switch t {
	case Asset, Liability, Income, Expense, Equity:
		return true
	}
	return false
}

// Chart entry: the base of an account name, its type, and how many ":"-separated segments
// follow the base (min..max) and whether a "[<id>]" qualifier is required.
type chartEntry struct {
	Type        AccountType
	MinSegments int
	MaxSegments int
	Qualifier   bool
	Meaning     string
}

// Chart is Wagerail's chart of accounts. There is deliberately no cash account: the service
// never holds money, so money at partner banks is mirrored per bank account
// (partner-bank:<partner>:<account>) and every other account is a claim or an obligation.
// Per-subject sub-accounts are further name segments, e.g. receivable-from-employee:<employee_id>.
var Chart = map[string]chartEntry{
	"payroll-clearing":         {Asset, 0, 2, false, "payroll money in transit between employer and lenders"},
	"receivable-from-employee": {Asset, 0, 2, false, "EWA advances owed by employees (sub-account per employee)"},
	"receivable-from-borrower": {Asset, 0, 2, false, "loan principal and installments owed by borrowers"},
	"receivable-from-customer": {Asset, 0, 2, false, "BNPL instalments owed by customers"},
	"partner-bank":             {Asset, 2, 3, false, "mirror of money held at a partner bank account: partner-bank:<partner>:<account>"},
	"payable-to-fi-partner":    {Liability, 0, 2, true, "owed to a financial institution: payable-to-fi-partner[<fi_id>]"},
	"payable-to-employee":      {Liability, 0, 2, false, "net pay or refunds owed to employees"},
	"payable-to-employer":      {Liability, 0, 2, false, "amounts owed back to the employer"},
	"payable-to-merchant":      {Liability, 0, 2, false, "BNPL settlements owed to merchants"},
	"equb:pool":                {Liability, 2, 2, false, "mirror of an equb escrow pool: equb:pool:<tenant>:<cycle>"},
	"savings-held":             {Liability, 0, 2, false, "savings-goal balances owed to savers"},
	"fee-income":               {Income, 0, 2, false, "EWA and service fees earned"},
	"interest-income":          {Income, 0, 2, false, "loan interest earned"},
	"misc-loss":                {Expense, 0, 2, false, "write-offs and dispute adjustments"},
	"opening-balance-equity":   {Equity, 0, 2, false, "opening balances brought from another system"},
}

// colonBases are the chart bases that contain ':' themselves ("equb:pool").
var colonBases = func() []string {
	var bs []string
	for b := range Chart {
		if strings.Contains(b, ":") {
			bs = append(bs, b)
		}
	}
	return bs
}()

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

// ParseAccountName checks that name belongs to the chart and returns the chart type.
//
// Errors: ErrInvalidAccountName.
func ParseAccountName(name string) (AccountType, error) {
	if name == "" || len(name) > 255 {
		return "", errorf(ReasonInvalidAccountName, "account name must be 1 to 255 characters")
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
	entry, ok := Chart[base]
	if !ok {
		return "", errorf(ReasonInvalidAccountName, "%q is not in the chart of accounts", name)
	}
	if entry.Qualifier && qualified == "" {
		return "", errorf(ReasonInvalidAccountName, "%q needs a qualifier: %s[<id>]", name, base)
	}
	if !entry.Qualifier && qualified != "" {
		return "", errorf(ReasonInvalidAccountName, "%q takes no [qualifier]", name)
	}
	var segs []string
	if rest != "" {
		segs = strings.Split(rest[1:], ":")
	}
	for _, s := range segs {
		if !validSegment(s, 128) {
			return "", errorf(ReasonInvalidAccountName, "%q: segment %q must be 1-128 of A-Z a-z 0-9 . _ @ -", name, s)
		}
	}
	if len(segs) < entry.MinSegments || len(segs) > entry.MaxSegments {
		return "", errorf(ReasonInvalidAccountName, "%q: %s takes %s", name, base, segmentsText(entry))
	}
	return entry.Type, nil
}

func segmentsText(e chartEntry) string {
	if e.MinSegments == e.MaxSegments {
		return fmt.Sprintf("exactly %d ':' segments", e.MinSegments)
	}
	return fmt.Sprintf("%d to %d ':' segments", e.MinSegments, e.MaxSegments)
}

// PartnerBankAccount is the name of the ledger account that mirrors a partner bank account.
func PartnerBankAccount(partner, account string) string {
	return "partner-bank:" + partner + ":" + account
}
