package money

import (
	"slices"
	"strings"
)

// The money flows Wagerail books partner transfers for: the domain a saga's transfer carries to
// the gateway and the partner (who carries it back in its callbacks, so the API can route them),
// and the domain of its <domain>.bank_transfer_settled.v1.
const (
	DomainEWA     = "EWA"
	DomainLoan    = "LOAN"
	DomainPayroll = "PAYROLL"
	DomainEqub    = "EQUB"
	DomainWallet  = "WALLET"
	DomainBNPL    = "BNPL"
	DomainSavings = "SAVINGS"
	DomainOther   = "OTHER"
)

// domains are the money flows, listed here once so the API, the gateway and the sandbox refuse
// the same values.
var domains = []string{DomainEWA, DomainLoan, DomainPayroll, DomainEqub, DomainWallet, DomainBNPL, DomainSavings, DomainOther}

// ValidDomain reports whether d is one of the money flows.
func ValidDomain(d string) bool { return slices.Contains(domains, d) }

// DomainList is the money flows for an error message: "EWA, LOAN, …".
func DomainList() string { return strings.Join(domains, ", ") }
