package lending

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/payroll"
)

// TestCodesTable: every row answers with a 4xx or 503 and a message; the stores'
// refusals map to their codes, anything else to "".
func TestCodesTable(t *testing.T) {
	for code, r := range refusals {
		require.True(t, r.Status >= 400 && r.Status < 500 || r.Status == http.StatusServiceUnavailable, code)
		require.NotEmpty(t, r.Message, code)
		require.Equal(t, code, CodeOf(RefusalError(code)))
		require.Equal(t, code, CodeOf(fmt.Errorf("wrapped: %w", RefusalError(code))))
	}
	require.Equal(t, CodeLoanNotFound, CodeOf(ErrLoanNotFound))
	st, err := LoanMachine.Next("approved", LoanActive)
	require.Empty(t, st)
	require.Equal(t, CodeLoanInvalidState, CodeOf(err))
	require.Equal(t, "", CodeOf(&payroll.Refusal{Code: "SOMETHING_ELSE"}))
	require.Equal(t, "", CodeOf(fmt.Errorf("plain")))
	require.Equal(t, "", CodeOf(nil))
	_, ok := RefusalOf("NOPE")
	require.False(t, ok)
	require.Panics(t, func() { RefusalError("NOPE") })
}
