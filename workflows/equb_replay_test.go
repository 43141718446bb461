package workflows

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Recorded histories of real equb saga runs (api's TestEqubDefaultRulePaysWhatWasCollected with
// WAGERAIL_RECORD_HISTORY=1, on the real stack with the sandbox), replayed against the current
// code: a change to a saga's command sequence that would break running sagas fails here. The
// contribution settled (POSTED); a payout the bank rejected (FAILED, its defaults voided); a
// payout that paid what was collected (PAID, a member in default).
func TestEqubSagaReplay(t *testing.T) {
	for file, want := range map[string]string{
		"testdata/equb_contribute_history.json":    EqubContributeWorkflowName,
		"testdata/equb_payout_failed_history.json": EqubPayoutWorkflowName,
		"testdata/equb_payout_history.json":        EqubPayoutWorkflowName,
	} {
		t.Run(file, func(t *testing.T) {
			require.Equal(t, want, replayHistory(t, file))
		})
	}
}
