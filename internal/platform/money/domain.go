package money

import (
	"slices"
	"strings"
)

// domains are the money flows Wagerail books partner transfers for. A partner carries the domain
// back in its callbacks so the API can route them; the list lives here once so the API, the
// gateway and the sandbox refuse the same values.
var domains = []string{"EWA", "LOAN", "PAYROLL", "EQUB", "WALLET", "BNPL", "SAVINGS", "OTHER"}

// ValidDomain reports whether d is one of the money flows.
func ValidDomain(d string) bool { return slices.Contains(domains, d) }

// DomainList is the money flows for an error message: "EWA, LOAN, …".
func DomainList() string { return strings.Join(domains, ", ") }
