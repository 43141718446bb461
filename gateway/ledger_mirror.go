package gateway

import (
	"context"
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// LedgerMirror is what the reconciliation runner needs from the ledger: the partner-bank
// mirror accounts of a tenant (partner-bank:<partner>:<account>) and their movements. A
// consumer-side interface, so the runner is tested against the real ledger over gRPC without
// depending on the ledger package.
type LedgerMirror interface {
	// MirrorAccounts lists the partner account ids the tenant's ledger mirrors.
	MirrorAccounts(ctx context.Context, tenantID, partner string) ([]string, error)
	// MirrorMovements returns the net movement of each ledger transaction on the mirror
	// account, for entries created within [from, to).
	MirrorMovements(ctx context.Context, tenantID, partner, account string, from, to time.Time) ([]LedgerItem, error)
	// ReportDrift hands the statement to the ledger's ReconcileWithBank, which exports
	// svc_ledger_reconcile_drift_santim, and returns the absolute drift it found.
	ReportDrift(ctx context.Context, req DriftRequest) (int64, error)
}

// DriftRequest is one partner's statement for the ledger's own drift report.
type DriftRequest struct {
	TenantID, Partner string
	Start, End        time.Time // [Start, End)
	Accounts          []DriftAccount
}

// DriftAccount is one account's statement lines (signed: credits positive) and closing balance.
type DriftAccount struct {
	Account           string
	HasClosingBalance bool
	ClosingSantim     int64
	Lines             []DriftLine
}

// DriftLine is a signed statement line.
type DriftLine struct {
	Reference    string
	AmountSantim int64 // > 0 into the account, < 0 out of it
	BookedAt     time.Time
}

// MirrorAccountName is the ledger's name of the account mirroring a partner bank account.
func MirrorAccountName(partner, account string) string {
	return "partner-bank:" + partner + ":" + account
}

// LedgerGRPC reads the ledger through its gRPC API.
type LedgerGRPC struct {
	Client ledgerv1.LedgerServiceClient
	// Timeout bounds each call (default 10 s); ReconcileWithBank gets six times as long.
	Timeout time.Duration
}

func (l LedgerGRPC) ctx(ctx context.Context, n time.Duration) (context.Context, context.CancelFunc) {
	t := l.Timeout
	if t <= 0 {
		t = 10 * time.Second
	}
	return context.WithTimeout(ctx, t*n)
}

// MirrorAccounts implements LedgerMirror.
func (l LedgerGRPC) MirrorAccounts(ctx context.Context, tenantID, partner string) ([]string, error) {
	prefix := MirrorAccountName(partner, "")
	var out []string
	token := ""
	for {
		cctx, cancel := l.ctx(ctx, 1)
		resp, err := l.Client.ListAccounts(cctx, &ledgerv1.ListAccountsRequest{TenantId: tenantID, NamePrefix: prefix, PageSize: 1000, PageToken: token})
		cancel()
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

// MirrorMovements implements LedgerMirror. Only POSTED-phase entries count: a hold is not money
// that moved in the ledger's books, and the ledger's own reconciliation counts the same way.
func (l LedgerGRPC) MirrorMovements(ctx context.Context, tenantID, partner, account string, from, to time.Time) ([]LedgerItem, error) {
	name := MirrorAccountName(partner, account)
	type agg struct {
		net  int64
		seq  int64
		date time.Time
	}
	byTx := map[string]*agg{}
	var order []string
	token := ""
	for {
		cctx, cancel := l.ctx(ctx, 1)
		resp, err := l.Client.ListEntries(cctx, &ledgerv1.ListEntriesRequest{
			TenantId: tenantID, AccountName: name, From: timestamppb.New(from), To: timestamppb.New(to),
			PageSize: 1000, PageToken: token,
		})
		cancel()
		if err != nil {
			return nil, fmt.Errorf("ledger list entries %s: %w", name, err)
		}
		for _, e := range resp.GetEntries() {
			if e.GetPhase() != ledgerv1.EntryPhase_ENTRY_PHASE_POSTED {
				continue
			}
			a, ok := byTx[e.GetTransactionId()]
			if !ok {
				c := e.GetCreatedAt().AsTime().UTC()
				a = &agg{seq: e.GetSeq(), date: time.Date(c.Year(), c.Month(), c.Day(), 0, 0, 0, 0, time.UTC)}
				byTx[e.GetTransactionId()] = a
				order = append(order, e.GetTransactionId())
			}
			amt := e.GetAmountSantim()
			if e.GetDirection() == ledgerv1.Direction_DIRECTION_CREDIT {
				amt = -amt
			}
			a.net += amt
		}
		if token = resp.GetNextPageToken(); token == "" {
			break
		}
	}
	var out []LedgerItem
	for _, id := range order {
		a := byTx[id]
		if a.net == 0 {
			continue // a transaction that moved the account and back nets to nothing at the bank
		}
		cctx, cancel := l.ctx(ctx, 1)
		resp, err := l.Client.GetTransaction(cctx, &ledgerv1.GetTransactionRequest{TenantId: tenantID, TransactionId: id})
		cancel()
		if err != nil {
			return nil, fmt.Errorf("ledger get transaction %s: %w", id, err)
		}
		t := resp.GetTransaction()
		it := LedgerItem{
			Account: account, TransactionID: id, Seq: a.seq, Date: a.date,
			References: []string{t.GetMetadata()["bank_reference"], t.GetIdempotencyKey(), id},
			Direction:  Credit, AmountSantim: a.net,
		}
		// The mirror is an asset: a debit is money arriving at the bank account (a bank credit).
		if a.net < 0 {
			it.Direction, it.AmountSantim = Debit, -a.net
		}
		out = append(out, it)
	}
	return out, nil
}

// ReportDrift implements LedgerMirror.
func (l LedgerGRPC) ReportDrift(ctx context.Context, req DriftRequest) (int64, error) {
	in := &ledgerv1.ReconcileWithBankRequest{
		TenantId: req.TenantID, Partner: req.Partner,
		PeriodStart: timestamppb.New(req.Start), PeriodEnd: timestamppb.New(req.End),
	}
	for _, a := range req.Accounts {
		sa := &ledgerv1.BankStatementAccount{Account: a.Account, HasClosingBalance: a.HasClosingBalance, ClosingBalanceSantim: a.ClosingSantim}
		for _, ln := range a.Lines {
			sa.Lines = append(sa.Lines, &ledgerv1.BankStatementLine{Reference: ln.Reference, AmountSantim: ln.AmountSantim, BookedAt: timestamppb.New(ln.BookedAt)})
		}
		in.Accounts = append(in.Accounts, sa)
	}
	cctx, cancel := l.ctx(ctx, 6)
	defer cancel()
	resp, err := l.Client.ReconcileWithBank(cctx, in)
	if err != nil {
		return 0, fmt.Errorf("ledger reconcile with bank %s: %w", req.Partner, err)
	}
	return resp.GetTotalAbsDriftSantim(), nil
}
