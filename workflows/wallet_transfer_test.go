package workflows

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/wallet"
)

// Every code the wallet saga answers with (its gate table and its record steps' refusals) is in
// internal/wallet's one table, so the API can answer each with its status and message.
func TestWalletCodesAreInTheTable(t *testing.T) {
	codes := []string{walletGates.other}
	for _, c := range walletGates.refusals {
		codes = append(codes, c)
	}
	for _, c := range walletGates.unavailable {
		codes = append(codes, c)
	}
	for c := range walletRecordRefusals {
		codes = append(codes, c)
	}
	for _, c := range codes {
		_, ok := wallet.RefusalOf(c)
		require.True(t, ok, c)
	}
}

// The wallet transfer saga's recorded run (api/wallet_transfer_test.go's
// TestWalletTransferEndToEnd records it with WAGERAIL_RECORD_HISTORY=1: a transfer settled on the
// real stack), replayed against the current code: a change to the command sequence that would
// break running sagas fails here.
func TestWalletTransferReplay(t *testing.T) {
	require.Equal(t, WalletTransferWorkflowName, replayHistory(t, "testdata/wallet_transfer_history.json"))
}
