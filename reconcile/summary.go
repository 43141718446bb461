package reconcile

import (
	"fmt"
	"strings"
	"time"
)

// Everything in this file runs inside the reconciliation workflow as well as in the runner: it
// must stay deterministic (no clocks, no I/O, no ranging over maps — see workflowcheck).

// Request is a whole reconciliation over one period: the given pairs, or when there are none,
// every tenant × partner pair.
type Request struct {
	Pairs    []Pair
	Tenants  []string
	Partners []string
	From, To string // YYYY-MM-DD, inclusive
	// FetchStatements first ingests each pair's statements through the gateway.
	FetchStatements bool
}

// Steps are the two things done for a pair. The workflow passes activity calls (retried by
// Temporal), `wagerail reconcile` the Runner's methods directly; both go through Run.
type Steps struct {
	Fetch     func(PairRequest) (FetchCounts, error)
	Reconcile func(PairRequest) (PairSummary, error)
}

// Run reconciles every pair in turn and summarises them. A step's error fails that pair only
// (FailedPair), so one bad pair never hides the others' results; a pair whose statement could
// not be fetched is never reconciled, since matching against a statement that did not arrive
// would only produce false flags.
func Run(req Request, s Steps) Report {
	todo := req.Pairs
	if len(todo) == 0 {
		for _, tenant := range req.Tenants {
			for _, partner := range req.Partners {
				todo = append(todo, Pair{TenantID: tenant, Partner: partner})
			}
		}
	}
	var pairs []PairSummary
	for _, pr := range todo {
		p := PairRequest{TenantID: pr.TenantID, Partner: pr.Partner, From: req.From, To: req.To}
		if req.FetchStatements {
			if _, err := s.Fetch(p); err != nil {
				pairs = append(pairs, FailedPair(p, "fetch statements", err))
				continue
			}
		}
		sum, err := s.Reconcile(p)
		if err != nil {
			sum = FailedPair(p, "reconcile", err)
		}
		pairs = append(pairs, sum)
	}
	return Summarise(pairs)
}

// FailedPair is the summary of a pair whose step failed for good.
func FailedPair(p PairRequest, step string, err error) PairSummary {
	msg := step + ": " + strings.Join(strings.Fields(err.Error()), " ")
	return PairSummary{
		Tenant: p.TenantID, Partner: p.Partner, PeriodFrom: p.From, PeriodTo: p.To,
		Errors: 1, ErrorDetails: []string{msg}, NextAction: "fix and run again: " + msg,
	}
}

// DefaultPeriod fills an empty from with the UTC day before now and an empty to with from.
// The workflow passes workflow.Now (its scheduled time), the command line the wall clock.
func DefaultPeriod(now time.Time, from, to string) (string, string) {
	if from == "" {
		from = now.UTC().AddDate(0, 0, -1).Format(time.DateOnly)
	}
	if to == "" {
		to = from
	}
	return from, to
}

// Summarise builds the aggregate of pairs.
func Summarise(pairs []PairSummary) Report {
	r := Report{Pairs: pairs, Aggregate: Aggregate{Pairs: len(pairs)}}
	if r.Pairs == nil {
		r.Pairs = []PairSummary{}
	}
	failed := 0
	for _, p := range pairs {
		a := &r.Aggregate
		a.Scanned += p.Scanned
		a.Matched += p.Matched
		a.Flagged += p.Flagged
		a.Errors += p.Errors
		a.DriftSantim += p.DriftSantim
		if p.Errors > 0 {
			failed++
		}
		// The closed list of kinds, not a range over the map (see the top of the file).
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
		r.Aggregate.NextAction = fmt.Sprintf("%d pair(s) had runner errors: fix them (see each pair) and run again", failed)
	case a.Flagged > 0:
		r.Aggregate.NextAction = fmt.Sprintf("review %d flagged discrepancies in gateway.recon_flags; correct the ledger by reversal or adjustment (the bank statement wins)", a.Flagged)
	default:
		r.Aggregate.NextAction = "none: every pair reconciled clean"
	}
	return r
}

// nextAction is what an operator does about one pair.
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
