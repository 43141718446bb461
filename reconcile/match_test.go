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

// A saga's advances as the bank and the ledger see them: one settled (the posting committed, the
// bank's debit), one failed at the bank after it held the money (the posting voided, the bank's
// debit and its refund), one rejected before the bank booked anything (voided, no line), one
// still held by the bank (pending, the debit booked). Every bank line is explained, none flagged.
func TestMatchHoldsExplainTheirTransfers(t *testing.T) {
	t.Parallel()
	d := date("2026-03-02")
	hold := func(ref, tx string, st HoldState, amt int64) LedgerItem {
		l := lItem(ref, tx, Debit, amt, d, 0)
		l.Hold = st
		return l
	}
	bank := []BankItem{
		bItem("wf1.ewa-disburse.1", "E1", Debit, 500_00, d),
		bItem("wf2.ewa-disburse.1", "E2", Debit, 300_00, d), bItem("wf2.ewa-disburse.1", "E3", Credit, 300_00, d),
		bItem("wf4.ewa-disburse.1", "E4", Debit, 200_00, d),
	}
	ledger := []LedgerItem{
		lItem("wf1.ewa-disburse.1", "t1", Debit, 500_00, d, 1),
		hold("wf2.ewa-disburse.1", "t2", HoldVoided, 300_00),
		hold("wf3.ewa-disburse.1", "t3", HoldVoided, 100_00),
		hold("wf4.ewa-disburse.1", "t4", HoldOpen, 200_00),
	}
	res := Match(bank, ledger, d, d)
	require.Empty(t, res.Flags, "%+v", res.Flags)
	require.Equal(t, 5, res.Scanned, "4 bank lines and 1 movement: holds are not movements")
	require.Equal(t, 5, res.Matched)

	// The bank kept the money of the failed transfer (no refund): its debit is flagged, as money
	// the ledger released; a refund of another amount is not the refund.
	res = Match([]BankItem{bItem("wf2.ewa-disburse.1", "E2", Debit, 300_00, d), bItem("wf2.ewa-disburse.1", "E3", Credit, 299_99, d)},
		[]LedgerItem{hold("wf2.ewa-disburse.1", "t2", HoldVoided, 300_00)}, d, d)
	require.Equal(t, map[FlagKind]int{MissingDebitInLedger: 1, MissingCreditInLedger: 1}, kinds(res.Flags))
	require.Zero(t, res.Matched)

	// A hold explains only its own amount and direction.
	res = Match([]BankItem{bItem("wf4.ewa-disburse.1", "E4", Debit, 200_01, d)}, []LedgerItem{hold("wf4.ewa-disburse.1", "t4", HoldOpen, 200_00)}, d, d)
	require.Equal(t, map[FlagKind]int{MissingDebitInLedger: 1}, kinds(res.Flags))
}

// The README's walk-through before leg references: the transfer's reference was the workflow id
// and the posting's key "ewa-disburse:<workflow id>", with no bank_reference. The runner gives
// such a posting the workflow id as a reference too (ledgerReferences), so it pairs.
func TestLedgerReferencesPairLegacyPostings(t *testing.T) {
	t.Parallel()
	d := date("2026-03-02")
	refs := ledgerReferences(map[string]string{"employeeId": "e1"}, "ewa-disburse:idem-t-ABC", "tx-1")
	require.Equal(t, []string{"", "ewa-disburse:idem-t-ABC", "tx-1", "idem-t-ABC"}, refs)
	legacy := LedgerItem{Account: "A", TransactionID: "tx-1", References: refs, Direction: Debit, AmountSantim: 100_00, Date: d, Seq: 1}
	res := Match([]BankItem{bItem("idem-t-ABC", "E1", Debit, 100_00, d)}, []LedgerItem{legacy}, d, d)
	require.Empty(t, res.Flags, "%+v", res.Flags)
	require.Equal(t, 2, res.Matched)

	// A posting with a bank_reference answers to it, never to a reference implied by its key.
	refs = ledgerReferences(map[string]string{"bank_reference": "idem-t-ABC.ewa-disburse.1"}, "ewa-disburse:idem-t-ABC", "tx-2")
	require.Equal(t, []string{"idem-t-ABC.ewa-disburse.1", "ewa-disburse:idem-t-ABC", "tx-2"}, refs)
	item := LedgerItem{Account: "A", TransactionID: "tx-2", References: refs, Direction: Debit, AmountSantim: 100_00, Date: d, Seq: 1}
	res = Match([]BankItem{bItem("idem-t-ABC", "E1", Debit, 100_00, d)}, []LedgerItem{item}, d, d)
	require.Equal(t, map[FlagKind]int{UnknownBankLine: 1, MissingDebitAtBank: 1}, kinds(res.Flags))
	res = Match([]BankItem{bItem("idem-t-ABC.ewa-disburse.1", "E1", Debit, 100_00, d)}, []LedgerItem{item}, d, d)
	require.Empty(t, res.Flags)
}

// An operator reverses a posting the bank never made: the two cancel out and nothing is flagged.
// A reversal of a posting the bank did make expects the bank's refund, and is flagged without it.
func TestMatchReversalCancelsWhatTheBankNeverBooked(t *testing.T) {
	t.Parallel()
	d1, d2, d3 := date("2026-03-01"), date("2026-03-02"), date("2026-03-03")
	reversal := func(of LedgerItem, tx string, d time.Time) LedgerItem {
		r := lItem("", tx, opposite(of.Direction), of.AmountSantim, d, of.Seq+100)
		r.References = append(r.References, of.References...)
		r.Pair = of.TransactionID
		return r
	}
	ghost := lItem("g1", "t1", Debit, 33_000, d2, 1)
	ghost.Pair = "r1"
	res := Match(nil, []LedgerItem{ghost, reversal(ghost, "r1", d2)}, d2, d2)
	require.Empty(t, res.Flags, "%+v", res.Flags)
	require.Equal(t, 2, res.Scanned)
	require.Equal(t, 2, res.Matched)
	require.ElementsMatch(t, []TxRef{{"A", "t1"}, {"A", "r1"}}, res.Cancelled)

	// The bank booked the original but not the refund: the reversal is money the ledger says
	// came back. With the refund (under the original's reference) everything pairs.
	paid := lItem("p1", "t2", Debit, 50_000, d2, 2)
	paid.Pair = "r2"
	res = Match([]BankItem{bItem("p1", "E1", Debit, 50_000, d2)}, []LedgerItem{paid, reversal(paid, "r2", d2)}, d2, d2)
	require.Equal(t, map[FlagKind]int{MissingCreditAtBank: 1}, kinds(res.Flags), "%+v", res.Flags)
	require.Equal(t, "r2", res.Flags[0].TransactionID)
	require.Empty(t, res.Cancelled)
	res = Match([]BankItem{bItem("p1", "E1", Debit, 50_000, d2), bItem("p1", "E2", Credit, 50_000, d2)},
		[]LedgerItem{paid, reversal(paid, "r2", d2)}, d2, d2)
	require.Empty(t, res.Flags, "%+v", res.Flags)
	require.Equal(t, 4, res.Matched)

	// A half outside the period cancels only when the caller found no bank line for it.
	early := lItem("g3", "t3", Debit, 7_000, d1, 3)
	rev := reversal(early, "r3", d3)
	res = Match(nil, []LedgerItem{rev}, d3, d3)
	require.Equal(t, map[FlagKind]int{MissingCreditAtBank: 1}, kinds(res.Flags), "the original may have been booked")
	rev.PairUnbooked = true
	res = Match(nil, []LedgerItem{rev}, d3, d3)
	require.Empty(t, res.Flags, "%+v", res.Flags)
	require.Equal(t, 1, res.Matched)
	require.ElementsMatch(t, []TxRef{{"A", "r3"}, {"A", "t3"}}, res.Cancelled)
	// Listed in the margin but unconfirmed: the reversal stands on its own.
	early.Pair, early.Date = "r3", d2
	rev.PairUnbooked = false
	res = Match(nil, []LedgerItem{early, rev}, d3, d3)
	require.Equal(t, map[FlagKind]int{MissingCreditAtBank: 1}, kinds(res.Flags))

	// Only the exact other half cancels: another amount, or the same direction, does not.
	odd := reversal(ghost, "r1", d2)
	odd.AmountSantim--
	res = Match(nil, []LedgerItem{ghost, odd}, d2, d2)
	require.Equal(t, map[FlagKind]int{MissingDebitAtBank: 1, MissingCreditAtBank: 1}, kinds(res.Flags))
}
