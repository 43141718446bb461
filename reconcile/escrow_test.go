package reconcile

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// CheckEscrow: the statement's net (credits less debits) against the pools' posted balance; any
// difference, either way, is DRIFT.
func TestCheckEscrow(t *testing.T) {
	for _, tc := range []struct {
		name   string
		posted int64
		lines  []int64
		drift  int64
		status string
	}{
		{"empty", 0, nil, 0, EscrowClean},
		{"contributions held", 3000, []int64{1000, 1000, 1000}, 0, EscrowClean},
		{"paid out", 0, []int64{1000, 1000, 1000, -3000}, 0, EscrowClean},
		{"someone else's money", 3000, []int64{1000, 1000, 1000, 77}, 77, EscrowDrift},
		{"a posting the bank never booked", 3000, []int64{1000, 1000}, -1000, EscrowDrift},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := CheckEscrow(EscrowCheck{PoolPostedSantim: tc.posted}, tc.lines)
			require.Equal(t, tc.drift, c.DriftSantim)
			require.Equal(t, tc.status, c.Status)
			require.Equal(t, len(tc.lines), c.StatementLines)
		})
	}
}

// SummariseEscrow: per partner in name order, absolute drift summed (a negative drift counts).
func TestSummariseEscrow(t *testing.T) {
	rep := SummariseEscrow([]EscrowCheck{
		{TenantID: "b", Partner: "zb", Status: EscrowClean},
		{TenantID: "a", Partner: "sandbox", DriftSantim: -40, Status: EscrowDrift},
		{TenantID: "b", Partner: "sandbox", DriftSantim: 2, Status: EscrowDrift},
	}, []EscrowFailure{{TenantID: "c", Error: "x"}})
	require.Equal(t, []EscrowPartnerTotal{{Partner: "sandbox", Accounts: 2, Drifted: 2, AbsDriftSantim: 42}, {Partner: "zb", Accounts: 1}}, rep.Partners)
	require.Equal(t, 3, rep.Accounts)
	require.Equal(t, 2, rep.Drifted)
	require.Equal(t, 1, rep.Errors)
}
