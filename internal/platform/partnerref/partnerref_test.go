package partnerref

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/idempotency"
)

func TestLegRoundTrips(t *testing.T) {
	t.Parallel()
	wf := idempotency.WorkflowID("tenant-with-a-rather-long-name-0123456789", "POST /api/ewa/{id}/disburse", strings.Repeat("k", 255))
	for _, leg := range []int{1, 2, 10, MaxLeg} {
		ref := Leg(EwaDisburse, wf, leg)
		got, ok := Parse(ref)
		require.True(t, ok, ref)
		require.Equal(t, Ref{Kind: EwaDisburse, WorkflowID: wf, Leg: leg}, got)
		require.Equal(t, wf, WorkflowIDOf(ref))
		// Every reference field it goes to: the gateway's 140 bytes, field.Reference's alphabet.
		require.LessOrEqual(t, len(ref), 140)
		require.NoError(t, field.Reference("reference", ref, 140))
	}
	require.NotEqual(t, Leg(EwaDisburse, wf, 1), Leg(EwaDisburse, wf, 2))
	require.NotEqual(t, Leg(EwaDisburse, wf, 1), Leg("loan-remit", wf, 1))
}

func TestParseRefusesWhatLegDoesNotBuild(t *testing.T) {
	t.Parallel()
	for _, ref := range []string{
		"", "idem-t-ABC", "OPENING-BALANCE", ".ewa-disburse.1", "wf.ewa-disburse.0", "wf.ewa-disburse.01",
		"wf.ewa-disburse.100000", "wf.ewa-disburse.-1", "wf.Ewa.1", "wf.1ewa.1", "wf..1", "wf.ewa_disburse.1",
		"wf.ewa-disburse.1x", "ewa-disburse.1", "wf." + strings.Repeat("a", MaxKind+1) + ".1",
	} {
		_, ok := Parse(ref)
		require.False(t, ok, ref)
		require.Equal(t, ref, WorkflowIDOf(ref), "a reference that is not a leg names its workflow itself")
	}
}

func TestFromLegacyLedgerKey(t *testing.T) {
	t.Parallel()
	ref, ok := FromLegacyLedgerKey("ewa-disburse:idem-t-ABC")
	require.True(t, ok)
	require.Equal(t, "idem-t-ABC", ref)
	for _, key := range []string{"", "ewa-disburse:", "ewa-repay:idem-t-ABC", "idem-t-ABC", "ewa-disburse:a:b", "x-ewa-disburse:wf"} {
		_, ok := FromLegacyLedgerKey(key)
		require.False(t, ok, key)
	}
}

func TestBulkItemReferences(t *testing.T) {
	t.Parallel()
	// A fan-out batch's workflow id is its parent's (at most 90 bytes) with a batch suffix.
	batch := idempotency.WorkflowID("tenant-with-a-rather-long-name-0123456789", "POST /api/payroll/{id}/run", strings.Repeat("k", 255)) + "-b9999"
	ref := Leg(BulkItem, batch, MaxLeg)
	require.True(t, IsBulkItem(ref))
	require.Equal(t, batch, WorkflowIDOf(ref))
	require.LessOrEqual(t, len(ref), 140)
	require.NoError(t, field.Reference("reference", ref, 140))
	for _, other := range []string{Leg(EwaDisburse, batch, 1), batch, "", "wf.bulk.0"} {
		require.False(t, IsBulkItem(other), other)
	}
}
