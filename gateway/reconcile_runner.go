package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
)

// Reconciler is the reconciliation runner: for one tenant and partner over a period of days it
// matches the stored statement lines with the ledger's mirror accounts, stores the discrepancies
// for operators and reports a summary. It only reads the ledger: the bank statement wins, and
// drift is reported, never corrected.
type Reconciler struct {
	Store  *Store
	Ledger LedgerMirror
	// MarginDays widens both sides by this many days for pairing only, so a movement the ledger
	// recorded late on one day and the bank booked the next still pairs (default 1).
	MarginDays int
	Log        *slog.Logger
}

// PairSummary is the runner's JSON summary for one tenant and partner.
type PairSummary struct {
	Tenant      string           `json:"tenant"`
	Partner     string           `json:"partner"`
	PeriodFrom  string           `json:"periodFrom"`
	PeriodTo    string           `json:"periodTo"`
	RunID       int64            `json:"runId,omitempty"`
	Accounts    int              `json:"accounts"`
	Scanned     int              `json:"scanned"`
	Matched     int              `json:"matched"`
	Flagged     int              `json:"flagged"`
	Errors      int              `json:"errors"`
	FlagsByKind map[FlagKind]int `json:"flagsByKind,omitempty"`
	// DriftSantim is the ledger's own absolute drift for the partner (ReconcileWithBank).
	DriftSantim  int64    `json:"driftSantim"`
	ErrorDetails []string `json:"errorDetails,omitempty"`
	NextAction   string   `json:"nextAction"`
}

// Aggregate sums pair summaries.
type Aggregate struct {
	Pairs       int              `json:"pairs"`
	Scanned     int              `json:"scanned"`
	Matched     int              `json:"matched"`
	Flagged     int              `json:"flagged"`
	Errors      int              `json:"errors"`
	FlagsByKind map[FlagKind]int `json:"flagsByKind,omitempty"`
	DriftSantim int64            `json:"driftSantim"`
	NextAction  string           `json:"nextAction"`
}

// Report is the runner's whole output.
type Report struct {
	Pairs     []PairSummary `json:"pairs"`
	Aggregate Aggregate     `json:"aggregate"`
}

// Summarise builds the aggregate of pairs.
func Summarise(pairs []PairSummary) Report {
	r := Report{Pairs: pairs, Aggregate: Aggregate{Pairs: len(pairs)}}
	if r.Pairs == nil {
		r.Pairs = []PairSummary{}
	}
	for _, p := range pairs {
		a := &r.Aggregate
		a.Scanned += p.Scanned
		a.Matched += p.Matched
		a.Flagged += p.Flagged
		a.Errors += p.Errors
		a.DriftSantim += p.DriftSantim
		// The closed list of kinds, not a range over the map: Summarise also runs inside the
		// reconciliation workflow, where map iteration is banned (workflowcheck).
		for _, k := range FlagKinds {
			if n := p.FlagsByKind[k]; n > 0 {
				if a.FlagsByKind == nil {
					a.FlagsByKind = map[FlagKind]int{}
				}
				a.FlagsByKind[k] += n
			}
		}
	}
	switch a := r.Aggregate; {
	case a.Errors > 0:
		r.Aggregate.NextAction = fmt.Sprintf("%d pair(s) had runner errors: fix them (see each pair) and run again", countIf(pairs, func(p PairSummary) bool { return p.Errors > 0 }))
	case a.Flagged > 0:
		r.Aggregate.NextAction = fmt.Sprintf("review %d flagged discrepancies in gateway.recon_flags; correct the ledger by reversal or adjustment (the bank statement wins)", a.Flagged)
	default:
		r.Aggregate.NextAction = "none: every pair reconciled clean"
	}
	return r
}

func countIf(ps []PairSummary, f func(PairSummary) bool) int {
	n := 0
	for _, p := range ps {
		if f(p) {
			n++
		}
	}
	return n
}

// Reconcile runs one tenant and partner over [from, to] (UTC days, inclusive). It returns a
// summary in every case: failures are counted in Errors and described in ErrorDetails, so one
// bad pair never hides the others' results.
func (r *Reconciler) Reconcile(ctx context.Context, tenantID, partner string, from, to time.Time) (sum PairSummary) {
	from, to = day(from), day(to)
	sum = PairSummary{Tenant: tenantID, Partner: partner, PeriodFrom: from.Format(time.DateOnly), PeriodTo: to.Format(time.DateOnly)}
	fail := func(format string, args ...any) {
		sum.Errors++
		sum.ErrorDetails = append(sum.ErrorDetails, fmt.Sprintf(format, args...))
	}
	defer func() { sum.NextAction = nextAction(sum) }()
	if err := checkPair(tenantID, partner); err != nil {
		// Nothing is written: a run row needs a tenant the database can hold.
		fail("%v", err)
		return sum
	}
	if to.Before(from) {
		fail("period: to %s is before from %s", sum.PeriodTo, sum.PeriodFrom)
		return sum
	}
	runID, err := r.Store.StartRun(ctx, tenantID, partner, from, to)
	if err != nil {
		fail("%v", err)
		return sum
	}
	sum.RunID = runID

	accounts, err := r.accounts(ctx, tenantID, partner)
	if err != nil {
		fail("%v", err)
		r.finish(ctx, &sum, from, to, nil, nil)
		return sum
	}
	sum.Accounts = len(accounts)
	margin := r.MarginDays
	if margin <= 0 {
		margin = 1
	}
	wideFrom, wideTo := from.AddDate(0, 0, -margin), to.AddDate(0, 0, margin)
	var (
		bank   []BankItem
		ledger []LedgerItem
		clean  []string
		drift  []DriftAccount
	)
	for _, acct := range accounts {
		covered, err := r.Store.StatementCovers(ctx, tenantID, partner, acct, from, to)
		if err != nil {
			fail("account %s: %v", acct, err)
			continue
		}
		if !covered {
			fail("account %s: no statement ingested for every day of %s..%s (fetch it with FetchStatement first)", acct, sum.PeriodFrom, sum.PeriodTo)
			continue
		}
		lines, err := r.Store.StatementLines(ctx, tenantID, partner, acct, wideFrom, wideTo)
		if err != nil {
			fail("account %s: %v", acct, err)
			continue
		}
		moves, err := r.Ledger.MirrorMovements(ctx, tenantID, partner, acct, wideFrom, wideTo.AddDate(0, 0, 1))
		if err != nil {
			fail("account %s: %v", acct, err)
			continue
		}
		da := DriftAccount{Account: acct}
		for _, l := range lines {
			bank = append(bank, BankItem{Account: acct, EntryRef: l.EntryRef, Reference: l.Reference, Direction: l.Direction, AmountSantim: l.AmountSantim, Date: l.BookingDate})
			if !l.BookingDate.Before(from) && !l.BookingDate.After(to) {
				amt := l.AmountSantim
				if l.Direction == Debit {
					amt = -amt
				}
				da.Lines = append(da.Lines, DriftLine{Reference: l.Reference, AmountSantim: amt, BookedAt: l.BookingDate})
				if l.BalanceAfterSantim != nil {
					da.HasClosingBalance, da.ClosingSantim = true, *l.BalanceAfterSantim
				}
			}
		}
		ledger = append(ledger, moves...)
		clean = append(clean, acct)
		drift = append(drift, da)
	}
	res := Match(bank, ledger, from, to)
	sum.Scanned, sum.Matched, sum.Flagged = res.Scanned, res.Matched, len(res.Flags)
	for _, f := range res.Flags {
		if sum.FlagsByKind == nil {
			sum.FlagsByKind = map[FlagKind]int{}
		}
		sum.FlagsByKind[f.Kind]++
	}
	if len(drift) > 0 {
		// The ledger compares [from, to+1d) by entry time; the balance compared is as of the end
		// of the period.
		d, err := r.Ledger.ReportDrift(ctx, DriftRequest{TenantID: tenantID, Partner: partner, Start: from, End: to.AddDate(0, 0, 1), Accounts: drift})
		if err != nil {
			fail("%v", err)
		}
		sum.DriftSantim = d
	}
	r.finish(ctx, &sum, from, to, clean, res.Flags)
	if r.Log != nil {
		r.Log.Info("reconciled", "tenant_id", tenantID, "partner", partner, "run", runID, "scanned", sum.Scanned,
			"matched", sum.Matched, "flagged", sum.Flagged, "errors", sum.Errors)
	}
	return sum
}

func (r *Reconciler) finish(ctx context.Context, sum *PairSummary, from, to time.Time, clean []string, flags []Flag) {
	c := RunCounts{Scanned: sum.Scanned, Matched: sum.Matched, Flagged: sum.Flagged, Errors: sum.Errors, ErrorDetail: strings.Join(sum.ErrorDetails, "; ")}
	// An account with an error was not reconciled: its open flags stay as they are.
	if err := r.Store.FinishRun(ctx, sum.Tenant, sum.Partner, sum.RunID, from, to, clean, flags, c); err != nil {
		sum.Errors++
		sum.ErrorDetails = append(sum.ErrorDetails, err.Error())
	}
}

// accounts is every account either side knows: a mirror account without statement lines and
// statement lines without a mirror account are both discrepancies worth seeing.
func (r *Reconciler) accounts(ctx context.Context, tenantID, partner string) ([]string, error) {
	seen := map[string]bool{}
	mirror, err := r.Ledger.MirrorAccounts(ctx, tenantID, partner)
	if err != nil {
		return nil, err
	}
	stmt, err := r.Store.StatementAccounts(ctx, tenantID, partner)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, a := range append(mirror, stmt...) {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	sort.Strings(out)
	return out, nil
}

// checkPair validates a tenant and partner that came from a command line or a workflow input
// before they reach the database or the ledger.
func checkPair(tenantID, partner string) error {
	if err := checkTenant("tenant", tenantID); err != nil {
		return err
	}
	return checkPartner(partner)
}

func nextAction(s PairSummary) string {
	switch {
	case s.Errors > 0:
		return "fix and run again: " + s.ErrorDetails[0]
	case s.Flagged > 0:
		return fmt.Sprintf("review %d open flag(s) of run %d in gateway.recon_flags; correct the ledger by reversal or adjustment (the bank statement wins)", s.Flagged, s.RunID)
	case s.Accounts == 0:
		return "none: no mirror account and no statement for this partner"
	}
	return "none: reconciled clean"
}

func day(t time.Time) time.Time {
	u := t.UTC()
	return time.Date(u.Year(), u.Month(), u.Day(), 0, 0, 0, 0, time.UTC)
}

// FetchCounts is what FetchMirrored ingested.
type FetchCounts struct {
	Accounts       int `json:"accounts"`
	Lines          int `json:"lines"`
	New            int `json:"new"`
	AlreadyPresent int `json:"alreadyPresent"`
}

// FetchMirrored ingests, through the gateway's gRPC API, the statement of every account the
// tenant's ledger mirrors at the partner for [from, to] (YYYY-MM-DD). Ingestion is idempotent
// per bank line, so running it twice stores nothing twice.
func FetchMirrored(ctx context.Context, gw gatewayv1.GatewayServiceClient, ledger LedgerMirror, tenantID, partner, from, to string) (FetchCounts, error) {
	var c FetchCounts
	if err := checkPair(tenantID, partner); err != nil {
		return c, err
	}
	accounts, err := ledger.MirrorAccounts(ctx, tenantID, partner)
	if err != nil {
		return c, err
	}
	for _, acct := range accounts {
		resp, err := gw.FetchStatement(ctx, &gatewayv1.FetchStatementRequest{
			Partner: partner, TenantId: tenantID, Account: acct, FromDate: from, ToDate: to, OmitLines: true,
		})
		if err != nil {
			return c, fmt.Errorf("fetch statement %s %s: %w", partner, acct, err)
		}
		c.Accounts++
		c.Lines += int(resp.GetLineCount())
		c.New += int(resp.GetIngested())
		c.AlreadyPresent += int(resp.GetAlreadyPresent())
	}
	return c, nil
}
