package equb

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDecidePayout is the default rule's table: WAIT waits for every contribution due whatever
// the time; PAY_COLLECTED pays what was collected once the cycle is due (not a moment before),
// recording the missing members; under both a contribution at the bank, or an empty pool, holds
// the payout back; a cycle whose due members have all contributed pays under both.
func TestDecidePayout(t *testing.T) {
	due := time.Date(2026, 12, 9, 9, 0, 0, 0, time.UTC)
	before, after := due.Add(-time.Second), due.Add(time.Hour)
	all := CycleMoney{Posted: 3, PoolSantim: 3000}
	short := CycleMoney{Posted: 2, PoolSantim: 2000, Missing: []string{"eqm_c"}}
	pending := CycleMoney{Posted: 2, Pending: 1, PoolSantim: 2000, Missing: []string{"eqm_c"}}
	empty := CycleMoney{Missing: []string{"eqm_a", "eqm_b", "eqm_c"}}
	left := CycleMoney{Posted: 2, PoolSantim: 2000} // the third member due left with their settlement
	for _, tc := range []struct {
		name string
		rule string
		now  time.Time
		m    CycleMoney
		want PayoutDecision
	}{
		{"wait, all in", RuleWait, before, all, PayoutDecision{Allowed: true}},
		{"wait, one missing, due", RuleWait, after, short, PayoutDecision{}},
		{"wait, one at the bank", RuleWait, after, pending, PayoutDecision{}},
		{"wait, the missing member left", RuleWait, before, left, PayoutDecision{Allowed: true}},
		{"collected, all in before due", RulePayCollected, before, all, PayoutDecision{Allowed: true}},
		{"collected, one missing, not due", RulePayCollected, before, short, PayoutDecision{}},
		{"collected, one missing, due exactly", RulePayCollected, due, short, PayoutDecision{Allowed: true, Defaulters: []string{"eqm_c"}}},
		{"collected, one missing, past due", RulePayCollected, after, short, PayoutDecision{Allowed: true, Defaulters: []string{"eqm_c"}}},
		{"collected, one at the bank, past due", RulePayCollected, after, pending, PayoutDecision{}},
		{"collected, nobody paid, past due", RulePayCollected, after, empty, PayoutDecision{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, DecidePayout(tc.rule, due, tc.now, 3, tc.m))
		})
	}
}

// TestGroupInputDefaultRule: the rule and the due hours default to WAIT and a week, and are
// bounded.
func TestGroupInputDefaultRule(t *testing.T) {
	in := GroupInput{Name: "Circle", ContributionSantim: 1000, MaxMembers: 5, PayoutOrder: OrderFixed, EscrowPartner: "sandbox", EscrowAccountNumber: "E1"}
	require.NoError(t, in.Check())
	d := in.withDefaults()
	require.Equal(t, RuleWait, d.DefaultRule)
	require.Equal(t, DefaultDueHours, d.ContributionDueHours)
	for _, bad := range []GroupInput{
		func() GroupInput { x := in; x.DefaultRule = "FORGIVE"; return x }(),
		func() GroupInput { x := in; x.ContributionDueHours = -1; return x }(),
		func() GroupInput { x := in; x.ContributionDueHours = MaxDueHours + 1; return x }(),
	} {
		require.Error(t, bad.Check())
	}
	ok := in
	ok.DefaultRule, ok.ContributionDueHours = RulePayCollected, MaxDueHours
	require.NoError(t, ok.Check())
}
