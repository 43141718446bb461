package reconcile

import (
	"cmp"
	"fmt"
	"sort"
	"time"
)

// Match pairs bank lines with ledger movements of the same account by reference, direction and
// amount. Items dated within [from, to] (inclusive days) are the period's; items outside it
// (the caller passes a margin of days on each side) are only there so a movement booked a day
// apart on the two sides still pairs up, and are never flagged themselves.
//
// A movement and its reversal that the bank booked neither of cancel out (LedgerItem.Pair).
//
// Holds (LedgerItem.Hold) explain the bank lines of transfers whose posting is not a movement:
// an open hold the transfer's debit, a voided hold the debit together with its refund (both
// exactly, by reference, direction and amount). They are neither counted nor flagged: a hold
// whose transfer the bank never booked moved nothing on either side.
func Match(bank []BankItem, ledger []LedgerItem, from, to time.Time) MatchResult {
	in := func(d time.Time) bool { return !d.Before(from) && !d.After(to) }
	type key struct{ account, ref string }
	bank = append([]BankItem(nil), bank...)
	sort.SliceStable(bank, func(i, j int) bool {
		if !bank[i].Date.Equal(bank[j].Date) {
			return bank[i].Date.Before(bank[j].Date)
		}
		return bank[i].EntryRef < bank[j].EntryRef
	})
	ledger = append([]LedgerItem(nil), ledger...)
	sort.SliceStable(ledger, func(i, j int) bool { return ledger[i].Seq < ledger[j].Seq })

	byRef := map[key][]int{} // ledger items by every reference they answer to
	for i, l := range ledger {
		seen := map[string]bool{}
		for _, r := range l.References {
			if r != "" && !seen[r] {
				seen[r] = true
				byRef[key{l.Account, r}] = append(byRef[key{l.Account, r}], i)
			}
		}
	}
	bankUsed := make([]bool, len(bank))
	ledgerUsed := make([]bool, len(ledger))
	// matchedDir remembers which (account, reference, direction) paired at least once, to tell
	// a duplicate from a missing counterpart.
	type dkey struct {
		key
		dir Direction
	}
	bankMatchedDir := map[dkey]bool{}
	ledgerMatchedDir := map[dkey]bool{}
	var res MatchResult
	for _, b := range bank {
		if in(b.Date) && !b.Baseline {
			res.Scanned++
		}
	}
	for _, l := range ledger {
		if l.Hold == "" && in(l.Date) {
			res.Scanned++
		}
	}
	pair := func(bi, li int) {
		bankUsed[bi], ledgerUsed[li] = true, true
		if in(bank[bi].Date) {
			res.Matched++
			if bank[bi].Baseline {
				res.Scanned++ // the ledger knew the line: it is reconciled, not history
			}
		}
		if in(ledger[li].Date) {
			res.Matched++
		}
		k := key{bank[bi].Account, bank[bi].Reference}
		bankMatchedDir[dkey{k, bank[bi].Direction}] = true
		for _, r := range ledger[li].References {
			ledgerMatchedDir[dkey{key{ledger[li].Account, r}, ledger[li].Direction}] = true
		}
	}
	// Pass 1: exact pairs (reference, direction, amount), nearest date first.
	for bi, b := range bank {
		if b.Reference == "" {
			continue
		}
		best := -1
		for _, li := range byRef[key{b.Account, b.Reference}] {
			l := ledger[li]
			if ledgerUsed[li] || l.Hold != "" || l.Direction != b.Direction || l.AmountSantim != b.AmountSantim {
				continue
			}
			if best < 0 || absDays(l.Date, b.Date) < absDays(ledger[best].Date, b.Date) {
				best = li
			}
		}
		if best >= 0 {
			pair(bi, best)
		}
	}
	// Pass 1b: holds take the bank lines of their transfer that no movement took.
	bankByRef := map[key][]int{}
	for bi, b := range bank {
		if b.Reference != "" && !bankUsed[bi] {
			bankByRef[key{b.Account, b.Reference}] = append(bankByRef[key{b.Account, b.Reference}], bi)
		}
	}
	for li, l := range ledger {
		if l.Hold == "" {
			continue
		}
		find := func(dir Direction) int {
			for _, r := range l.References {
				for _, bi := range bankByRef[key{l.Account, r}] {
					if b := bank[bi]; !bankUsed[bi] && b.Direction == dir && b.AmountSantim == l.AmountSantim {
						return bi
					}
				}
			}
			return -1
		}
		held := find(l.Direction)
		if held < 0 {
			continue
		}
		lines := []int{held}
		if l.Hold == HoldVoided {
			bankUsed[held] = true // so the refund is another line
			refund := find(opposite(l.Direction))
			bankUsed[held] = false
			if refund < 0 {
				// The bank kept the money of a transfer the ledger released: the debit is flagged.
				continue
			}
			lines = append(lines, refund)
		}
		ledgerUsed[li] = true
		for _, bi := range lines {
			bankUsed[bi] = true
			if in(bank[bi].Date) {
				res.Matched++
				if bank[bi].Baseline {
					res.Scanned++
				}
			}
		}
	}
	// Pass 1c: a movement of the period and its reversal that no bank line took cancel out: the
	// ledger took back what the bank never booked. A half dated outside the period counts only
	// when the caller found no bank line for it either (PairUnbooked): lines near its day may
	// not be in these lists.
	byTx := map[key]int{}
	for li, l := range ledger {
		if l.Hold == "" {
			byTx[key{l.Account, l.TransactionID}] = li
		}
	}
	cancel := func(li int) {
		ledgerUsed[li] = true
		if in(ledger[li].Date) {
			res.Matched++
		}
		res.Cancelled = append(res.Cancelled, TxRef{ledger[li].Account, ledger[li].TransactionID})
	}
	for li, l := range ledger {
		if ledgerUsed[li] || l.Hold != "" || l.Pair == "" || !in(l.Date) {
			continue
		}
		pi, listed := byTx[key{l.Account, l.Pair}]
		if listed && (ledgerUsed[pi] || ledger[pi].Direction == l.Direction || ledger[pi].AmountSantim != l.AmountSantim) {
			continue
		}
		switch {
		case listed && (in(ledger[pi].Date) || l.PairUnbooked):
			cancel(li)
			cancel(pi)
		case !listed && l.PairUnbooked:
			cancel(li)
			res.Cancelled = append(res.Cancelled, TxRef{l.Account, l.Pair})
		}
	}
	flag := func(f Flag, dates ...time.Time) {
		for _, d := range dates {
			if in(d) {
				res.Flags = append(res.Flags, f)
				return
			}
		}
	}
	// Pass 2: what is left of the bank side.
	for bi, b := range bank {
		if bankUsed[bi] {
			continue
		}
		bs := b.AmountSantim
		f := Flag{Account: b.Account, Reference: b.Reference, Direction: b.Direction, EntryRef: b.EntryRef, BankSantim: &bs, Date: b.Date}
		cands := byRef[key{b.Account, b.Reference}]
		if b.Baseline && !hasMovement(ledger, ledgerUsed, cands, b.Direction) {
			// The account's history from before it was a mirror: in the baseline, not drift.
			bankUsed[bi] = true
			continue
		}
		if b.Reference == "" || len(cands) == 0 {
			f.Kind = UnknownBankLine
			f.Detail = fmt.Sprintf("bank %s of %s santim with reference %q unknown to the ledger", dirWord(b.Direction), santimStr(b.AmountSantim), b.Reference)
			flag(f, b.Date)
			bankUsed[bi] = true
			continue
		}
		other := -1
		for _, li := range cands {
			if !ledgerUsed[li] && ledger[li].Hold == "" && ledger[li].Direction == b.Direction {
				other = li
				break
			}
		}
		switch {
		case other >= 0:
			l := ledger[other]
			ls := l.AmountSantim
			f.Kind, f.TransactionID, f.LedgerSeq, f.LedgerSantim = AmountMismatch, l.TransactionID, l.Seq, &ls
			f.Detail = fmt.Sprintf("bank %s %s santim, ledger %s santim (difference %s)", dirWord(b.Direction), santimStr(b.AmountSantim), santimStr(l.AmountSantim), santimStr(b.AmountSantim-l.AmountSantim))
			bankUsed[bi], ledgerUsed[other] = true, true
			flag(f, b.Date, l.Date)
		case bankMatchedDir[dkey{key{b.Account, b.Reference}, b.Direction}]:
			f.Kind = DuplicateBankLine
			f.Detail = fmt.Sprintf("bank booked %s of %s santim again for a reference the ledger moved once", dirWord(b.Direction), santimStr(b.AmountSantim))
			bankUsed[bi] = true
			flag(f, b.Date)
		default:
			f.Kind = MissingCreditInLedger
			if b.Direction == Debit {
				f.Kind = MissingDebitInLedger
			}
			f.Detail = fmt.Sprintf("bank %s of %s santim has no ledger movement of that direction", dirWord(b.Direction), santimStr(b.AmountSantim))
			bankUsed[bi] = true
			flag(f, b.Date)
		}
	}
	// Pass 3: what is left of the ledger side.
	for li, l := range ledger {
		if ledgerUsed[li] || l.Hold != "" {
			continue
		}
		ls := l.AmountSantim
		f := Flag{Account: l.Account, Reference: cmp.Or(l.References...), Direction: l.Direction, TransactionID: l.TransactionID, LedgerSeq: l.Seq, LedgerSantim: &ls, Date: l.Date}
		dup := false
		for _, r := range l.References {
			if r != "" && ledgerMatchedDir[dkey{key{l.Account, r}, l.Direction}] {
				dup = true
			}
		}
		if dup {
			f.Kind = DuplicateLedgerEntry
			f.Detail = fmt.Sprintf("ledger moved %s santim (%s) again for a reference the bank booked once", santimStr(l.AmountSantim), dirWord(l.Direction))
		} else {
			f.Kind = MissingCreditAtBank
			if l.Direction == Debit {
				f.Kind = MissingDebitAtBank
			}
			f.Detail = fmt.Sprintf("ledger expects a bank %s of %s santim that the statement does not show", dirWord(l.Direction), santimStr(l.AmountSantim))
		}
		flag(f, l.Date)
	}
	return res
}

func absDays(a, b time.Time) time.Duration {
	d := a.Sub(b)
	if d < 0 {
		return -d
	}
	return d
}

// hasMovement: a ledger movement (not a hold) among cands that no line took, of direction dir.
func hasMovement(ledger []LedgerItem, used []bool, cands []int, dir Direction) bool {
	for _, li := range cands {
		if !used[li] && ledger[li].Hold == "" && ledger[li].Direction == dir {
			return true
		}
	}
	return false
}

func opposite(d Direction) Direction {
	if d == Debit {
		return Credit
	}
	return Debit
}

func dirWord(d Direction) string {
	if d == Debit {
		return "debit"
	}
	return "credit"
}

func santimStr(v int64) string { return fmt.Sprintf("%d", v) }
