package ledger

import "github.com/wagerail/wagerail/ledger/chart"

// AccountType is the accounting type of an account; it fixes the account's normal side. The
// chart of accounts (bases, types, name shapes, name builders) lives in ledger/chart, which the
// workflows, the API and reconciliation import without importing the ledger.
type AccountType = chart.Type

const (
	Asset     = chart.Asset
	Liability = chart.Liability
	Income    = chart.Income
	Expense   = chart.Expense
	Equity    = chart.Equity
)

// ParseAccountName checks that name belongs to the chart and returns the chart type.
//
// Errors: ErrInvalidAccountName.
func ParseAccountName(name string) (AccountType, error) {
	t, err := chart.Parse(name)
	if err != nil {
		return "", errorf(ReasonInvalidAccountName, "%s", err.Error())
	}
	return t, nil
}
