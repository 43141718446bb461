package employeetransfer

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPlanCheck(t *testing.T) {
	t.Parallel()
	require.NoError(t, Plan{}.Check())
	require.NoError(t, Plan{EwaAdvance: RetainWithSource, Loan: RetainWithSource, DeductionMandate: CarryOver,
		BnplAgreement: RetainWithSource, EqubMembership: RetainWithSource}.Check())
	require.NoError(t, Plan{DeductionMandate: Cancel}.Check())
	for _, p := range []Plan{
		{EwaAdvance: CarryOver},
		{Loan: Cancel},
		{DeductionMandate: RetainWithSource},
		{SavingsMovement: RetainWithSource},
		{Kind("WALLET"): RetainWithSource},
		{DeductionMandate: Handling("KEEP")},
	} {
		require.True(t, errors.Is(p.Check(), ErrInvalidPlan), "%v", p)
	}
}

// decide: in flight always blocks; an unhandled kind blocks; a court order is never cancelled;
// the rest take the plan's handling.
func TestDecide(t *testing.T) {
	t.Parallel()
	found := []Obligation{
		{Kind: EwaAdvance, ID: "ewa_1", Status: "DISBURSED"},
		{Kind: EwaAdvance, ID: "ewa_2", Status: "DISBURSING", Problem: ProblemInFlight},
		{Kind: Loan, ID: "loan_1", Status: "ACTIVE"},
		{Kind: DeductionMandate, ID: "mdt_1", Status: "ACTIVE", MandateKind: "COURT_ORDER"},
		{Kind: DeductionMandate, ID: "mdt_2", Status: "ACTIVE", MandateKind: "UNION_DUES"},
	}
	blocking := decide(found, Plan{EwaAdvance: RetainWithSource, DeductionMandate: Cancel})
	require.Equal(t, []Obligation{
		{Kind: EwaAdvance, ID: "ewa_2", Status: "DISBURSING", Problem: ProblemInFlight},
		{Kind: Loan, ID: "loan_1", Status: "ACTIVE", Problem: ProblemUnhandled},
		{Kind: DeductionMandate, ID: "mdt_1", Status: "ACTIVE", MandateKind: "COURT_ORDER", Problem: ProblemNotAllowed},
	}, blocking)
	require.Equal(t, Cancel, found[4].Handling)
	require.Equal(t, RetainWithSource, found[0].Handling)

	found = []Obligation{{Kind: Loan, ID: "loan_1"}, {Kind: DeductionMandate, ID: "mdt_1", MandateKind: "COURT_ORDER"}}
	require.Empty(t, decide(found, Plan{Loan: RetainWithSource, DeductionMandate: CarryOver}))
	require.Equal(t, CarryOver, found[1].Handling)
	require.Empty(t, decide(nil, Plan{}))
}
