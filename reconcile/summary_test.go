package reconcile

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRunFetchesThenReconcilesEveryPairAndFailsOnlyTheBrokenOne(t *testing.T) {
	t.Parallel()
	var calls []string
	steps := Steps{
		Fetch: func(p PairRequest) (FetchCounts, error) {
			calls = append(calls, "fetch "+p.TenantID+"/"+p.Partner)
			if p.TenantID == "t1" && p.Partner == "bank-b" {
				return FetchCounts{}, errors.New("statement\nmalformed")
			}
			return FetchCounts{Accounts: 1}, nil
		},
		Reconcile: func(p PairRequest) (PairSummary, error) {
			calls = append(calls, "reconcile "+p.TenantID+"/"+p.Partner)
			require.Equal(t, "2026-03-01", p.From)
			require.Equal(t, "2026-03-02", p.To)
			if p.TenantID == "t2" && p.Partner == "bank-b" {
				return PairSummary{}, errors.New("ledger unavailable")
			}
			return PairSummary{Tenant: p.TenantID, Partner: p.Partner, Scanned: 2, Matched: 1, Flagged: 1, FlagsByKind: map[FlagKind]int{UnknownBankLine: 1}}, nil
		},
	}
	rep := Run(Request{Tenants: []string{"t1", "t2"}, Partners: []string{"bank-a", "bank-b"}, From: "2026-03-01", To: "2026-03-02", FetchStatements: true}, steps)
	require.Equal(t, []string{
		"fetch t1/bank-a", "reconcile t1/bank-a",
		"fetch t1/bank-b", // never reconciled against a statement that did not arrive
		"fetch t2/bank-a", "reconcile t2/bank-a",
		"fetch t2/bank-b", "reconcile t2/bank-b",
	}, calls)
	require.Len(t, rep.Pairs, 4)
	require.Equal(t, []string{"fetch statements: statement malformed"}, rep.Pairs[1].ErrorDetails, "one line")
	require.Equal(t, "t1", rep.Pairs[1].Tenant)
	require.Equal(t, "2026-03-01", rep.Pairs[1].PeriodFrom)
	require.Equal(t, []string{"reconcile: ledger unavailable"}, rep.Pairs[3].ErrorDetails)
	require.Contains(t, rep.Pairs[3].NextAction, "fix and run again")
	require.Equal(t, 4, rep.Aggregate.Pairs)
	require.Equal(t, 2, rep.Aggregate.Errors)
	require.Equal(t, 2, rep.Aggregate.Flagged)
	require.Equal(t, 2, rep.Aggregate.FlagsByKind[UnknownBankLine])
	require.Contains(t, rep.Aggregate.NextAction, "2 pair(s) had runner errors")

	calls = nil
	rep = Run(Request{Tenants: []string{"t1"}, Partners: []string{"bank-a"}, From: "2026-03-01", To: "2026-03-02"}, steps)
	require.Equal(t, []string{"reconcile t1/bank-a"}, calls, "no fetch unless asked")
	require.Zero(t, rep.Aggregate.Errors)
	require.Contains(t, rep.Aggregate.NextAction, "review 1")
}

func TestSummariseClean(t *testing.T) {
	t.Parallel()
	rep := Summarise(nil)
	require.NotNil(t, rep.Pairs, "an empty report is [] in JSON, not null")
	require.Contains(t, rep.Aggregate.NextAction, "none")
	rep = Summarise([]PairSummary{{Scanned: 4, Matched: 4, DriftSantim: 0}, {Scanned: 2, Matched: 2, DriftSantim: 7}})
	require.Equal(t, 6, rep.Aggregate.Matched)
	require.Equal(t, int64(7), rep.Aggregate.DriftSantim)
	require.Nil(t, rep.Aggregate.FlagsByKind)
}

func TestDefaultPeriod(t *testing.T) {
	t.Parallel()
	// A scheduled run at 07:30 UTC on 2026-03-05 (10:30 in Addis Ababa) reconciles 2026-03-04.
	now := time.Date(2026, 3, 5, 10, 30, 0, 0, time.FixedZone("EAT", 3*3600))
	from, to := DefaultPeriod(now, "", "")
	require.Equal(t, "2026-03-04", from)
	require.Equal(t, "2026-03-04", to)
	from, to = DefaultPeriod(now, "2026-02-01", "")
	require.Equal(t, "2026-02-01", from)
	require.Equal(t, "2026-02-01", to)
	from, to = DefaultPeriod(now, "2026-02-01", "2026-02-28")
	require.Equal(t, "2026-02-28", to)
	require.Equal(t, "2026-02-01", from)
}
