package reconcile

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func date(s string) time.Time {
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return d
}

func kinds(fs []Flag) map[FlagKind]int {
	out := map[FlagKind]int{}
	for _, f := range fs {
		out[f.Kind]++
	}
	return out
}

func bItem(ref, entry string, dir Direction, amt int64, d time.Time) BankItem {
	return BankItem{Account: "A", EntryRef: entry, Reference: ref, Direction: dir, AmountSantim: amt, Date: d}
}

func lItem(ref, tx string, dir Direction, amt int64, d time.Time, seq int64) LedgerItem {
	return LedgerItem{Account: "A", TransactionID: tx, References: []string{ref, "key-" + tx, tx}, Direction: dir, AmountSantim: amt, Date: d, Seq: seq}
}

func TestMatchClean(t *testing.T) {
	t.Parallel()
	d := date("2026-03-02")
	// A bank line may carry the ledger's bank_reference, its idempotency key or its id.
	res := Match(
		[]BankItem{bItem("r1", "E1", Debit, 100, d), bItem("key-t2", "E2", Credit, 5, d), bItem("t3", "E3", Credit, 7, d)},
		[]LedgerItem{lItem("r1", "t1", Debit, 100, d, 1), lItem("", "t2", Credit, 5, d, 2), lItem("", "t3", Credit, 7, d, 3)},
		d, d)
	require.Empty(t, res.Flags, "%+v", res.Flags)
	require.Equal(t, 6, res.Scanned)
	require.Equal(t, 6, res.Matched)

	empty := Match(nil, nil, d, d)
	require.Zero(t, empty.Scanned)
	require.Empty(t, empty.Flags)
}

func TestMatchOneSantim(t *testing.T) {
	t.Parallel()
	d := date("2026-03-02")
	res := Match([]BankItem{bItem("r1", "E1", Debit, 100_000, d)}, []LedgerItem{lItem("r1", "t1", Debit, 100_001, d, 1)}, d, d)
	require.Equal(t, map[FlagKind]int{AmountMismatch: 1}, kinds(res.Flags))
	f := res.Flags[0]
	require.Equal(t, int64(100_000), *f.BankSantim)
	require.Equal(t, int64(100_001), *f.LedgerSantim)
	require.Equal(t, "E1", f.EntryRef)
	require.Equal(t, "t1", f.TransactionID)
	require.Contains(t, f.Detail, "difference -1")
	require.Zero(t, res.Matched)
	require.Equal(t, 2, res.Scanned)
}

func TestMatchEveryDiscrepancy(t *testing.T) {
	t.Parallel()
	d := date("2026-03-02")
	res := Match(
		[]BankItem{
			bItem("r1", "E1", Debit, 100, d), bItem("r1", "E2", Debit, 100, d), // bank debited twice
			bItem("r2", "E3", Debit, 50, d), bItem("r2", "E4", Credit, 50, d), // refunded, ledger never reversed
			bItem("", "E5", Credit, 9, d),   // a bank line with no reference
			bItem("zz", "E6", Credit, 9, d), // a reference the ledger never saw
			bItem("r4", "E7", Debit, 30, d),
			bItem("r5", "E8", Credit, 11, d), // the ledger has r5 only as a debit
		},
		[]LedgerItem{
			lItem("r1", "t1", Debit, 100, d, 1),
			lItem("r2", "t2", Debit, 50, d, 2),
			lItem("r3", "t3", Credit, 70, d, 3),                                    // never arrived at the bank
			lItem("r4", "t4", Debit, 30, d, 4), lItem("r4", "t5", Debit, 30, d, 5), // ledger moved twice
			lItem("r5", "t6", Debit, 11, d, 6), // and the bank has no such debit
		},
		d, d)
	require.Equal(t, map[FlagKind]int{
		DuplicateBankLine:     1,
		MissingCreditInLedger: 2, // E4 (refund) and E8
		UnknownBankLine:       2,
		MissingCreditAtBank:   1,
		DuplicateLedgerEntry:  1,
		MissingDebitAtBank:    1, // t6
	}, kinds(res.Flags), "%+v", res.Flags)
	byKindRef := map[FlagKind][]string{}
	for _, f := range res.Flags {
		byKindRef[f.Kind] = append(byKindRef[f.Kind], f.EntryRef+f.TransactionID)
	}
	require.Equal(t, []string{"E2"}, byKindRef[DuplicateBankLine])
	require.ElementsMatch(t, []string{"E4", "E8"}, byKindRef[MissingCreditInLedger])
	require.ElementsMatch(t, []string{"E5", "E6"}, byKindRef[UnknownBankLine])
	require.Equal(t, []string{"t3"}, byKindRef[MissingCreditAtBank])
	require.Equal(t, []string{"t5"}, byKindRef[DuplicateLedgerEntry])
	require.Equal(t, []string{"t6"}, byKindRef[MissingDebitAtBank])
	require.Equal(t, 8+6, res.Scanned)
	require.Equal(t, 6, res.Matched) // E1-t1, E3-t2, E7-t4
	// Fingerprints are stable and distinct.
	seen := map[string]bool{}
	for _, f := range res.Flags {
		fp := string(f.Kind) + f.Fingerprint()
		require.False(t, seen[fp], fp)
		seen[fp] = true
	}
}

func TestMatchPeriodMargins(t *testing.T) {
	t.Parallel()
	d1, d2, d3 := date("2026-03-01"), date("2026-03-02"), date("2026-03-03")
	// The ledger recorded late on the 2nd, the bank booked on the 3rd: reconciling the 2nd with
	// a margin pairs them; nothing outside the period is flagged.
	res := Match(
		[]BankItem{bItem("r1", "E1", Debit, 100, d3), bItem("old", "E0", Credit, 5, d1)},
		[]LedgerItem{lItem("r1", "t1", Debit, 100, d2, 1), lItem("later", "t9", Debit, 5, d3, 2)},
		d2, d2)
	require.Empty(t, res.Flags, "%+v", res.Flags)
	require.Equal(t, 1, res.Scanned)
	require.Equal(t, 1, res.Matched)

	// Exact pairs prefer the nearest date when a reference repeats across days.
	res = Match(
		[]BankItem{bItem("r", "E1", Debit, 100, d2)},
		[]LedgerItem{lItem("r", "t1", Debit, 100, d1, 1), lItem("r", "t2", Debit, 100, d2, 2)},
		d2, d2)
	require.Equal(t, map[FlagKind]int{}, kinds(res.Flags), "t1 is outside the period and unpaired: not flagged here")
	require.Equal(t, 2, res.Matched)
}
