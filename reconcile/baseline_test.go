package reconcile

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/gateway"
)

func stored(entry string, day string) gateway.StoredLine {
	return gateway.StoredLine{Account: "A", StatementLine: gateway.StatementLine{EntryRef: entry, BookingDate: date(day)}}
}

// The baseline splits the statement where it was taken: the days before it and, on its day, the
// lines up to its line are the account's history; the rest is the mirror's.
func TestInBaseline(t *testing.T) {
	t.Parallel()
	lines := []gateway.StoredLine{
		stored("E1", "2026-03-01"), stored("E2", "2026-03-02"), stored("E3", "2026-03-02"), stored("E4", "2026-03-02"), stored("E5", "2026-03-03"),
	}
	for _, tc := range []struct {
		name    string
		b       gateway.Baseline
		history []string
		found   bool
	}{
		{"mid-day", gateway.Baseline{AsOfDate: date("2026-03-02"), AsOfEntryRef: "E3"}, []string{"E1", "E2", "E3"}, true},
		{"last line of its day", gateway.Baseline{AsOfDate: date("2026-03-02"), AsOfEntryRef: "E4"}, []string{"E1", "E2", "E3", "E4"}, true},
		{"nothing booked yet that day", gateway.Baseline{AsOfDate: date("2026-03-02")}, []string{"E1"}, true},
		{"before the statement", gateway.Baseline{AsOfDate: date("2026-02-01"), AsOfEntryRef: "X"}, []string{}, true},
		{"after the statement", gateway.Baseline{AsOfDate: date("2026-03-04"), AsOfEntryRef: "X"}, []string{"E1", "E2", "E3", "E4", "E5"}, true},
		{"its line missing", gateway.Baseline{AsOfDate: date("2026-03-02"), AsOfEntryRef: "E9"}, []string{"E1", "E2", "E3", "E4"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in, found := InBaseline(lines, tc.b)
			require.Equal(t, tc.found, found)
			history := []string{}
			for i, l := range lines {
				if in[i] {
					history = append(history, l.EntryRef)
				}
			}
			require.Equal(t, tc.history, history)
		})
	}
}

// A line in the baseline is history unless the ledger knew it: left over it is neither counted
// nor flagged; paired with a movement it is reconciled like any other; a movement of the ledger
// without its line is still flagged.
func TestMatchBaselineLines(t *testing.T) {
	t.Parallel()
	d := date("2026-03-02")
	opening := bItem("OPENING-BALANCE", "E0", Credit, 5_000_000, d)
	opening.Baseline = true
	unknown := bItem("", "E1", Debit, 7, d)
	unknown.Baseline = true
	ours := bItem("wf1.ewa-disburse.1", "E2", Debit, 100, d)

	res := Match([]BankItem{opening, unknown, ours}, []LedgerItem{lItem("wf1.ewa-disburse.1", "t1", Debit, 100, d, 1)}, d, d)
	require.Empty(t, res.Flags, "%+v", res.Flags)
	require.Equal(t, 2, res.Scanned, "our line and our movement; the history is the baseline's")
	require.Equal(t, 2, res.Matched)

	// The tenant brought the opening balance into its ledger: the line pairs and is counted.
	res = Match([]BankItem{opening, ours}, []LedgerItem{lItem("OPENING-BALANCE", "t0", Credit, 5_000_000, d, 0), lItem("wf1.ewa-disburse.1", "t1", Debit, 100, d, 1)}, d, d)
	require.Empty(t, res.Flags, "%+v", res.Flags)
	require.Equal(t, 4, res.Scanned)
	require.Equal(t, 4, res.Matched)

	// Same reference, another amount: still a discrepancy, history or not.
	res = Match([]BankItem{opening}, []LedgerItem{lItem("OPENING-BALANCE", "t0", Credit, 4_999_999, d, 0)}, d, d)
	require.Equal(t, map[FlagKind]int{AmountMismatch: 1}, kinds(res.Flags))
}
