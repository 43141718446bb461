package reconcile

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/wagerail/wagerail/internal/platform/partnerref"
	"github.com/wagerail/wagerail/ledger"
	"github.com/wagerail/wagerail/ledger/chart"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// LedgerReader is what reconciliation reads from the ledger. *ledger.Client satisfies it, and
// is what every process passes: it carries the per-call deadlines and the circuit breaker, and
// turns failures into *ledger.Error values whose reason says whether retrying can help.
type LedgerReader interface {
	ListAccounts(context.Context, *ledgerv1.ListAccountsRequest) (*ledgerv1.ListAccountsResponse, error)
	ListEntries(context.Context, *ledgerv1.ListEntriesRequest) (*ledgerv1.ListEntriesResponse, error)
	GetTransactions(context.Context, *ledgerv1.GetTransactionsRequest) (*ledgerv1.GetTransactionsResponse, error)
	ReconcileWithBank(context.Context, *ledgerv1.ReconcileWithBankRequest) (*ledgerv1.ReconcileWithBankResponse, error)
}

// ledgerPage is the largest page the ledger serves.
const ledgerPage = 1000

// mirrorAccounts lists the partner account ids the tenant's ledger mirrors.
func mirrorAccounts(ctx context.Context, l LedgerReader, tenantID, partner string) ([]string, error) {
	prefix := chart.PartnerBankPrefix(partner)
	var out []string
	token := ""
	for {
		resp, err := l.ListAccounts(ctx, &ledgerv1.ListAccountsRequest{TenantId: tenantID, NamePrefix: prefix, PageSize: ledgerPage, PageToken: token})
		if err != nil {
			return nil, fmt.Errorf("ledger list accounts %s: %w", prefix, err)
		}
		for _, a := range resp.GetAccounts() {
			acct := strings.TrimPrefix(a.GetName(), prefix)
			if acct != "" && !strings.Contains(acct, ":") {
				out = append(out, acct)
			}
		}
		if token = resp.GetNextPageToken(); token == "" {
			return out, nil
		}
	}
}

// mirrorMovements returns the net movement of each ledger transaction on the mirror account for
// entries created within [from, to). Only POSTED-phase entries are movements: a hold is not
// money that moved in the ledger's books, and the ledger's own reconciliation counts the same
// way. A transaction with no POSTED entry there but a hold is returned as a hold (HoldOpen while
// no RELEASE entry is seen, HoldVoided after), for the bank lines of its transfer.
func mirrorMovements(ctx context.Context, l LedgerReader, tenantID, partner, account string, from, to time.Time) ([]LedgerItem, error) {
	name := chart.PartnerBankAccount(partner, account)
	type agg struct {
		net        int64 // POSTED entries
		posted     bool
		held       int64 // HOLD entries
		released   int64 // RELEASE entries
		isReleased bool
		seq        int64
		date       time.Time
	}
	byTx := map[string]*agg{}
	var order []string
	token := ""
	for {
		resp, err := l.ListEntries(ctx, &ledgerv1.ListEntriesRequest{
			TenantId: tenantID, AccountName: name, From: timestamppb.New(from), To: timestamppb.New(to),
			PageSize: ledgerPage, PageToken: token,
		})
		if err != nil {
			return nil, fmt.Errorf("ledger list entries %s: %w", name, err)
		}
		for _, e := range resp.GetEntries() {
			a, ok := byTx[e.GetTransactionId()]
			if !ok {
				a = &agg{seq: e.GetSeq(), date: day(e.GetCreatedAt().AsTime())}
				byTx[e.GetTransactionId()] = a
				order = append(order, e.GetTransactionId())
			}
			amt := e.GetAmountSantim()
			if e.GetDirection() == ledgerv1.Direction_DIRECTION_CREDIT {
				amt = -amt
			}
			// Sums of entries the ledger bounds (MaxAccountTotalSantim per account): no overflow.
			switch e.GetPhase() {
			case ledgerv1.EntryPhase_ENTRY_PHASE_POSTED:
				a.net += amt
				a.posted = true
			case ledgerv1.EntryPhase_ENTRY_PHASE_HOLD:
				a.held += amt
			case ledgerv1.EntryPhase_ENTRY_PHASE_RELEASE:
				a.released += amt
				a.isReleased = true
			}
		}
		if token = resp.GetNextPageToken(); token == "" {
			break
		}
	}
	var moved []string
	hold := map[string]HoldState{}
	for _, id := range order {
		a := byTx[id]
		switch {
		case a.net != 0:
			moved = append(moved, id)
		case a.posted:
			// A transaction that moved the account and back nets to nothing at the bank.
		case a.held != 0 || a.released != 0:
			if a.held == 0 {
				// The hold was entered before the window, its release within: a release copies its
				// hold's direction (the ledger's settle), so it has the hold's sign.
				a.held = a.released
			}
			a.net = a.held
			hold[id] = HoldOpen
			if a.isReleased {
				hold[id] = HoldVoided
			}
			moved = append(moved, id)
		}
	}
	refs, err := transactionRefs(ctx, l, tenantID, moved)
	if err != nil {
		return nil, err
	}
	out := make([]LedgerItem, 0, len(moved))
	for _, id := range moved {
		a := byTx[id]
		r := refs[id]
		it := LedgerItem{Account: account, TransactionID: id, Seq: a.seq, Date: a.date, References: r.refs, Direction: Credit, AmountSantim: a.net, Hold: hold[id],
			Pair: r.pair, pairDay: r.pairDay, pairRefs: r.pairRefs}
		// The mirror is an asset: a debit is money arriving at the bank account (a bank credit).
		if a.net < 0 {
			it.Direction, it.AmountSantim = Debit, -a.net
		}
		out = append(out, it)
	}
	return out, nil
}

// mirrorBalanceAt is the mirror's posted balance (debits less credits) from its entries created
// before at: what the ledger had booked on the account when its baseline was taken. The
// baseline is taken at the account's first transfer, so these are the few entries of its
// first day, read in pages like any others.
func mirrorBalanceAt(ctx context.Context, l LedgerReader, tenantID, partner, account string, at time.Time) (int64, error) {
	name := chart.PartnerBankAccount(partner, account)
	var bal int64
	token := ""
	for {
		resp, err := l.ListEntries(ctx, &ledgerv1.ListEntriesRequest{
			TenantId: tenantID, AccountName: name, To: timestamppb.New(at), PageSize: ledgerPage, PageToken: token,
		})
		if err != nil {
			return 0, fmt.Errorf("ledger list entries %s: %w", name, err)
		}
		for _, e := range resp.GetEntries() {
			if e.GetPhase() != ledgerv1.EntryPhase_ENTRY_PHASE_POSTED {
				continue
			}
			// Bounded by the ledger (MaxAccountTotalSantim per account): no overflow.
			if e.GetDirection() == ledgerv1.Direction_DIRECTION_CREDIT {
				bal -= e.GetAmountSantim()
			} else {
				bal += e.GetAmountSantim()
			}
		}
		if token = resp.GetNextPageToken(); token == "" {
			return bal, nil
		}
	}
}

// txRefs is what reconciliation needs of a ledger transaction beyond its entries.
type txRefs struct {
	refs []string // ledgerReferences
	// pair is the other half of a reversal (the transaction reversed, or the reversal), with
	// the day it was posted and its references.
	pair     string
	pairDay  time.Time
	pairRefs []string
}

// transactionRefs returns, per transaction id, the references a bank line may carry for it
// (ledgerReferences) and the other half of its reversal, if any. A reversal carries no bank
// reference of its own: it also answers to the references of the transaction it reverses, as
// the bank's refund of a transfer carries the transfer's.
//
// ListEntries carries neither the idempotency key nor the metadata, so the transactions are
// read with GetTransactions, without their entries, up to the ledger's maximum per call: one
// call per page of entries at most, never one per transaction, and as many again for the other
// halves of reversals when there are any.
func transactionRefs(ctx context.Context, l LedgerReader, tenantID string, ids []string) (map[string]txRefs, error) {
	txs, err := getTransactions(ctx, l, tenantID, ids)
	if err != nil {
		return nil, err
	}
	var more []string
	for _, id := range ids {
		t := txs[id]
		if p := cmp.Or(t.GetReversesTransactionId(), t.GetReversedByTransactionId()); p != "" && txs[p] == nil {
			more = append(more, p)
		}
	}
	pairs, err := getTransactions(ctx, l, tenantID, more)
	if err != nil {
		return nil, err
	}
	maps.Copy(txs, pairs)
	out := make(map[string]txRefs, len(ids))
	for _, id := range ids {
		t := txs[id]
		r := txRefs{refs: ledgerReferences(t.GetMetadata(), t.GetIdempotencyKey(), t.GetId())}
		if r.pair = cmp.Or(t.GetReversesTransactionId(), t.GetReversedByTransactionId()); r.pair != "" {
			p := txs[r.pair]
			r.pairDay = day(p.GetPostedAt().AsTime())
			r.pairRefs = ledgerReferences(p.GetMetadata(), p.GetIdempotencyKey(), p.GetId())
			if t.GetReversesTransactionId() != "" {
				r.refs = append(r.refs, r.pairRefs...)
			} else {
				r.pairRefs = append(r.pairRefs, r.refs...)
			}
		}
		out[id] = r
	}
	return out, nil
}

// getTransactions reads the transactions without their entries, by id.
func getTransactions(ctx context.Context, l LedgerReader, tenantID string, ids []string) (map[string]*ledgerv1.Transaction, error) {
	out := make(map[string]*ledgerv1.Transaction, len(ids))
	for chunk := range slices.Chunk(ids, ledger.MaxGetTransactions) {
		resp, err := l.GetTransactions(ctx, &ledgerv1.GetTransactionsRequest{TenantId: tenantID, TransactionIds: chunk, OmitEntries: true})
		if err != nil {
			return nil, fmt.Errorf("ledger get transactions (%d): %w", len(chunk), err)
		}
		for _, t := range resp.GetTransactions() {
			out[t.GetId()] = t
		}
		// The ids come from the tenant's own entries and reversals: a transaction the ledger
		// leaves out would be a broken ledger, not a finding to report.
		for _, id := range chunk {
			if out[id] == nil {
				return nil, fmt.Errorf("ledger get transactions: transaction %s not returned", id)
			}
		}
	}
	return out, nil
}

// ledgerReferences are the references under which a bank line may name a ledger transaction:
// the transfer reference it carries (partnerref.LedgerMetadataKey, the saga's leg reference),
// its idempotency key and its id. A posting made before leg references carries none; its
// transfer's reference was the saga's workflow id, which its key implies
// (partnerref.FromLegacyLedgerKey), so that is accepted too, for such postings only.
func ledgerReferences(meta map[string]string, key, id string) []string {
	refs := []string{meta[partnerref.LedgerMetadataKey], key, id}
	if refs[0] == "" {
		if legacy, ok := partnerref.FromLegacyLedgerKey(key); ok {
			refs = append(refs, legacy)
		}
	}
	return refs
}

// driftAccount is one account's statement for the ledger's own drift report: signed lines
// (credits positive) booked within the period and the closing balance when the format has one.
type driftAccount struct {
	account           string
	hasClosingBalance bool
	closingSantim     int64
	lines             []*ledgerv1.BankStatementLine
}

// reportDrift hands the statement to the ledger's ReconcileWithBank, which exports
// svc_ledger_reconcile_drift_santim, and returns the absolute drift it found over [start, end).
func reportDrift(ctx context.Context, l LedgerReader, tenantID, partner string, start, end time.Time, accounts []driftAccount) (int64, error) {
	in := &ledgerv1.ReconcileWithBankRequest{
		TenantId: tenantID, Partner: partner, PeriodStart: timestamppb.New(start), PeriodEnd: timestamppb.New(end),
	}
	for _, a := range accounts {
		in.Accounts = append(in.Accounts, &ledgerv1.BankStatementAccount{
			Account: a.account, HasClosingBalance: a.hasClosingBalance, ClosingBalanceSantim: a.closingSantim, Lines: a.lines,
		})
	}
	resp, err := l.ReconcileWithBank(ctx, in)
	if err != nil {
		return 0, fmt.Errorf("ledger reconcile with bank %s: %w", partner, err)
	}
	return resp.GetTotalAbsDriftSantim(), nil
}

func day(t time.Time) time.Time {
	u := t.UTC()
	return time.Date(u.Year(), u.Month(), u.Day(), 0, 0, 0, 0, time.UTC)
}
