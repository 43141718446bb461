package reconcile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// Statements is what the runner reads of the statements the gateway ingested; *gateway.Store
// satisfies it.
type Statements interface {
	// StatementAccounts lists the accounts of a partner for which the tenant has stored lines.
	StatementAccounts(ctx context.Context, tenantID, partner string) ([]string, error)
	// StatementLines returns the stored lines of one account booked within [from, to] (days),
	// in booking order.
	StatementLines(ctx context.Context, tenantID, partner, account string, from, to time.Time) ([]gateway.StoredLine, error)
	// MirrorBaseline returns the account's balance when it became the tenant's mirror (ok false
	// when none was recorded: the account's whole history is reconciled).
	MirrorBaseline(ctx context.Context, tenantID, partner, account string) (gateway.Baseline, bool, error)
}

// StatementFetcher downloads and ingests a statement through the gateway. The gateway's Go
// client satisfies it; FetchFunc adapts anything else (a generated gRPC client, a test double).
type StatementFetcher interface {
	FetchStatement(context.Context, *gatewayv1.FetchStatementRequest) (*gatewayv1.FetchStatementResponse, error)
}

// FetchFunc is a StatementFetcher made of a function.
type FetchFunc func(context.Context, *gatewayv1.FetchStatementRequest) (*gatewayv1.FetchStatementResponse, error)

// FetchStatement implements StatementFetcher.
func (f FetchFunc) FetchStatement(ctx context.Context, r *gatewayv1.FetchStatementRequest) (*gatewayv1.FetchStatementResponse, error) {
	return f(ctx, r)
}

// ErrNoGateway is FetchStatements on a runner built without a gateway.
var ErrNoGateway = errors.New("reconcile: no gateway client configured to fetch statements")

// Runner reconciles one tenant and partner at a time. It is what the reconciliation activities
// and `wagerail reconcile` both call, through Run.
//
// Its methods return an error when a dependency did not answer (retrying may help) or when the
// pair itself is not valid input (*field.Error: retrying cannot help); what reconciliation finds
// is in the PairSummary.
type Runner struct {
	Ledger     LedgerReader
	Statements Statements
	Store      *Store
	// Gateway fetches statements; nil when statements are fetched elsewhere.
	Gateway StatementFetcher
	// MarginDays widens both sides by this many days for pairing only, so a movement the ledger
	// recorded late on one day and the bank booked the next still pairs (default 1).
	MarginDays int
	Log        *slog.Logger
	// Now says which days have ended, and so need a statement fetched after their end (time.Now
	// when nil).
	Now func() time.Time
}

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// FetchStatements ingests, through the gateway, the statement of every account the tenant's
// ledger mirrors at the partner for the period. Ingestion is idempotent per bank line, so a
// retried attempt stores nothing twice.
func (r *Runner) FetchStatements(ctx context.Context, p PairRequest) (FetchCounts, error) {
	var c FetchCounts
	if _, _, err := p.check(); err != nil {
		return c, err
	}
	if r.Gateway == nil {
		return c, ErrNoGateway
	}
	accounts, err := mirrorAccounts(ctx, r.Ledger, p.TenantID, p.Partner)
	if err != nil {
		return c, err
	}
	for _, acct := range accounts {
		resp, err := r.Gateway.FetchStatement(ctx, &gatewayv1.FetchStatementRequest{
			Partner: p.Partner, TenantId: p.TenantID, Account: acct, FromDate: p.From, ToDate: p.To, OmitLines: true,
		})
		if err != nil {
			return c, fmt.Errorf("gateway fetch statement %s %s: %w", p.Partner, acct, err)
		}
		c.Accounts++
		c.Lines += int(resp.GetLineCount())
		c.New += int(resp.GetIngested())
		c.AlreadyPresent += int(resp.GetAlreadyPresent())
	}
	return c, nil
}

// ReconcilePair matches the pair's stored statement lines over the period with the ledger's
// mirror accounts, records the run and its flags, and returns the summary. It reads everything
// before it writes anything, and writes in one transaction, so an attempt that fails on a
// dependency leaves nothing behind and the retry starts clean.
func (r *Runner) ReconcilePair(ctx context.Context, p PairRequest) (PairSummary, error) {
	started := time.Now()
	from, to, err := p.check()
	if err != nil {
		return PairSummary{}, err
	}
	ctx = scoped(ctx, p.TenantID)
	sum := PairSummary{Tenant: p.TenantID, Partner: p.Partner, PeriodFrom: p.From, PeriodTo: p.To}
	accounts, mirrored, err := r.accounts(ctx, p)
	if err != nil {
		return PairSummary{}, err
	}
	sum.Accounts = len(accounts)
	now := r.now()
	provisional := false // a day of the period has not ended: compared with what the bank booked so far
	margin := r.MarginDays
	if margin <= 0 {
		margin = 1
	}
	wideFrom, wideTo := from.AddDate(0, 0, -margin), to.AddDate(0, 0, margin)
	var (
		bank   []BankItem
		ledger []LedgerItem
		clean  []string
		drift  []driftAccount
	)
	for _, acct := range accounts {
		cov, err := r.Store.StatementCovers(ctx, p.Partner, acct, from, to, now)
		if err != nil {
			return PairSummary{}, err
		}
		if !cov.Covered {
			// What the run found, not a failure to run: retrying will not fetch the statement.
			sum.Errors++
			if cov.PartialAt.IsZero() {
				sum.ErrorDetails = append(sum.ErrorDetails, fmt.Sprintf("account %s: no statement ingested for every day of %s..%s (fetch it with FetchStatement first)", acct, p.From, p.To))
			} else {
				sum.ErrorDetails = append(sum.ErrorDetails, fmt.Sprintf("account %s: the statement of %s is partial, fetched at %s before the day ended (fetch it again with FetchStatement)",
					acct, cov.Gap.Format(time.DateOnly), cov.PartialAt.UTC().Format(time.RFC3339)))
			}
			continue
		}
		provisional = provisional || !cov.Whole
		lines, err := r.Statements.StatementLines(ctx, p.TenantID, p.Partner, acct, wideFrom, wideTo)
		if err != nil {
			return PairSummary{}, err
		}
		base, hasBase, err := r.Statements.MirrorBaseline(ctx, p.TenantID, p.Partner, acct)
		if err != nil {
			return PairSummary{}, err
		}
		var inBase []bool
		ledgerAtBase := int64(0)
		if hasBase {
			var found bool
			if inBase, found = InBaseline(lines, base); !found && !base.AsOfDate.Before(from) && !base.AsOfDate.After(to) {
				// Without its line the statement cannot be split at the baseline: guessing would
				// either flag the account's history or hide our own movements.
				sum.Errors++
				sum.ErrorDetails = append(sum.ErrorDetails, fmt.Sprintf("account %s: the statement of %s lacks line %s, where the mirror's baseline was taken (fetch it again)",
					acct, base.AsOfDate.Format(time.DateOnly), base.AsOfEntryRef))
				continue
			}
			if mirrored[acct] {
				if ledgerAtBase, err = mirrorBalanceAt(ctx, r.Ledger, p.TenantID, p.Partner, acct, base.RecordedAt); err != nil {
					return PairSummary{}, err
				}
			}
		}
		if mirrored[acct] {
			// An account only the statement knows has no ledger movements: its lines are flagged.
			moves, err := mirrorMovements(ctx, r.Ledger, p.TenantID, p.Partner, acct, wideFrom, wideTo.AddDate(0, 0, 1))
			if err != nil {
				return PairSummary{}, err
			}
			for i, m := range moves {
				if m.Pair != "" && (m.pairDay.Before(from) || m.pairDay.After(to)) {
					if moves[i].PairUnbooked, err = r.pairUnbooked(ctx, p, m, margin, now); err != nil {
						return PairSummary{}, err
					}
				}
			}
			ledger = append(ledger, moves...)
		}
		da := driftAccount{account: acct}
		for i, l := range lines {
			history := inBase != nil && inBase[i]
			bank = append(bank, BankItem{Account: acct, EntryRef: l.EntryRef, Reference: l.Reference, Direction: Direction(l.Direction),
				AmountSantim: l.AmountSantim, Date: l.BookingDate, Baseline: history})
			if l.BookingDate.Before(from) || l.BookingDate.After(to) {
				continue
			}
			if l.BalanceAfterSantim != nil {
				// The ledger's mirror started from the baseline: of the bank's balance then, only
				// what the ledger had booked by that time (ledgerAtBase) is the ledger's to explain.
				da.hasClosingBalance, da.closingSantim = true, *l.BalanceAfterSantim-base.BalanceSantim+ledgerAtBase
			}
			if history {
				continue
			}
			amt := l.AmountSantim
			if Direction(l.Direction) == Debit {
				amt = -amt
			}
			da.lines = append(da.lines, statementLine(l.Reference, amt, l.BookingDate))
		}
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
	if len(drift) > 0 || sum.Errors == 0 {
		// The ledger compares [from, to+1d) by entry time; the balance compared is as of the end
		// of the period. It sets svc_ledger_reconcile_drift_santim{partner} from each report, so
		// every pair reconciled without an error reports: 0 when clean, and the alert's series
		// exists. Without an error and without compared accounts, neither side has an account
		// (the ledger, given none, compares its mirrors of the partner: there are none either).
		// The ledger keeps the figure per account, so the accounts that could not be compared
		// (not in drift) keep their last figure rather than be claimed clean; a pair none of
		// whose accounts could be compared does not report at all (the ledger, given none,
		// would compare every mirror without its statement).
		if sum.DriftSantim, err = reportDrift(ctx, r.Ledger, p.TenantID, p.Partner, from, to.AddDate(0, 0, 1), drift); err != nil {
			return PairSummary{}, err
		}
	}
	sum.RunID, err = r.Store.RecordRun(ctx, RunRecord{
		Partner: p.Partner, From: from, To: to, StartedAt: started,
		Scanned: sum.Scanned, Matched: sum.Matched, Flagged: sum.Flagged, Errors: sum.Errors,
		ErrorDetail: strings.Join(sum.ErrorDetails, "; "), CleanAccounts: clean, Flags: res.Flags, Cancelled: res.Cancelled,
	})
	if err != nil {
		return PairSummary{}, err
	}
	sum.NextAction = nextAction(sum)
	if provisional && sum.Errors == 0 && sum.Flagged == 0 {
		sum.NextAction = "none so far: reconciled clean up to now, the period has not ended (reconcile it again after it ends)"
	}
	if r.Log != nil {
		r.Log.Info("reconciled", "tenant_id", p.TenantID, "partner", p.Partner, "run", sum.RunID, "scanned", sum.Scanned,
			"matched", sum.Matched, "flagged", sum.Flagged, "errors", sum.Errors)
	}
	return sum, nil
}

// pairUnbooked reports whether the bank booked no line for the other half of m's reversal,
// which is dated outside the period: the statement of its day must have been fetched (after the
// day ended, when it has: StatementCovers), and the lines of its day and the margin around it
// (as a run over its day would pair them) include none of the pair's references, direction and
// amount. Without its day's statement the answer is "booked" (m is then matched or flagged on
// its own): a statement nobody fetched, or fetched before the day's later bookings, must not
// cancel a movement out.
func (r *Runner) pairUnbooked(ctx context.Context, p PairRequest, m LedgerItem, margin int, now time.Time) (bool, error) {
	cov, err := r.Store.StatementCovers(ctx, p.Partner, m.Account, m.pairDay, m.pairDay, now)
	if err != nil || !cov.Covered {
		return false, err
	}
	from, to := m.pairDay.AddDate(0, 0, -margin), m.pairDay.AddDate(0, 0, margin)
	lines, err := r.Statements.StatementLines(ctx, p.TenantID, p.Partner, m.Account, from, to)
	if err != nil {
		return false, err
	}
	dir := opposite(m.Direction)
	for _, l := range lines {
		if l.Reference != "" && Direction(l.Direction) == dir && l.AmountSantim == m.AmountSantim && slices.Contains(m.pairRefs, l.Reference) {
			return false, nil
		}
	}
	return true, nil
}

// InBaseline marks the lines of a statement (in booking order) booked before the baseline was
// taken: those of earlier days, and on its day those up to its line AsOfEntryRef. found is false
// when the lines include the baseline's day but not its line; that day's lines are then all
// marked, so that none of them is flagged on a guess (the caller reports the account instead
// when the day is in the period).
func InBaseline(lines []gateway.StoredLine, b gateway.Baseline) (in []bool, found bool) {
	in = make([]bool, len(lines))
	last := -1 // the baseline's line
	for i, l := range lines {
		switch {
		case l.BookingDate.Before(b.AsOfDate):
			in[i] = true
		case l.BookingDate.Equal(b.AsOfDate) && b.AsOfEntryRef != "" && last < 0:
			in[i] = true
			if l.EntryRef == b.AsOfEntryRef {
				last = i
			}
		}
	}
	sameDay := false
	for _, l := range lines {
		sameDay = sameDay || l.BookingDate.Equal(b.AsOfDate)
	}
	return in, last >= 0 || !sameDay || b.AsOfEntryRef == ""
}

// accounts is every account either side knows — a mirror account without statement lines and
// statement lines without a mirror account are both discrepancies worth seeing — and which of
// them the ledger mirrors.
func (r *Runner) accounts(ctx context.Context, p PairRequest) ([]string, map[string]bool, error) {
	mirror, err := mirrorAccounts(ctx, r.Ledger, p.TenantID, p.Partner)
	if err != nil {
		return nil, nil, err
	}
	stmt, err := r.Statements.StatementAccounts(ctx, p.TenantID, p.Partner)
	if err != nil {
		return nil, nil, err
	}
	mirrored := map[string]bool{}
	for _, a := range mirror {
		mirrored[a] = true
	}
	seen := map[string]bool{}
	var out []string
	for _, a := range append(mirror, stmt...) {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	sort.Strings(out)
	return out, mirrored, nil
}

// check validates a pair that came from a command line or a workflow input before it reaches the
// database, the ledger or the gateway, and returns its period as UTC days.
func (p PairRequest) check() (from, to time.Time, err error) {
	if err := field.Identifier("tenant", p.TenantID, 0); err != nil {
		return from, to, err
	}
	if err := field.Identifier("partner", p.Partner, gateway.MaxPartnerName); err != nil {
		return from, to, err
	}
	if from, err = time.Parse(time.DateOnly, p.From); err != nil {
		return from, to, &field.Error{Field: "from", Problem: "must be a date YYYY-MM-DD"}
	}
	if to, err = time.Parse(time.DateOnly, p.To); err != nil {
		return from, to, &field.Error{Field: "to", Problem: "must be a date YYYY-MM-DD"}
	}
	if to.Before(from) {
		return from, to, &field.Error{Field: "to", Problem: "must not be before from"}
	}
	if to.Sub(from) > gateway.MaxStatementPeriod {
		return from, to, &field.Error{Field: "to", Problem: fmt.Sprintf("must be at most %d days after from", int(gateway.MaxStatementPeriod/(24*time.Hour)))}
	}
	return from, to, nil
}

// scoped puts the pair's tenant into the context for the stores, keeping the caller's actor and
// request id (system:reconcile when there is none).
func scoped(ctx context.Context, tenantID string) context.Context {
	s := tenancy.From(ctx)
	s.TenantID = tenantID
	if s.Actor == "" {
		s.Actor = tenancy.System("reconcile")
	}
	return tenancy.With(ctx, s)
}

func statementLine(ref string, amount int64, booked time.Time) *ledgerv1.BankStatementLine {
	return &ledgerv1.BankStatementLine{Reference: ref, AmountSantim: amount, BookedAt: timestamppb.New(booked)}
}
